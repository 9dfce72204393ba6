"""Multipart uploads parsed as they stream in (the one module that imports
``python_multipart``): each file part's bytes go straight into an upload sink on disk, so a
large file never sits in memory or in a temporary file outside the vault."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import MissingExtraError
from ..study.uploads import UploadError

try:
    from python_multipart.multipart import MultipartParser, parse_options_header
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

MAX_FIELD_BYTES = 4096


class Sink(Protocol):
    def write(self, data: bytes) -> None: ...
    def commit(self) -> str: ...
    def abort(self) -> None: ...


@dataclass
class Received:
    """What a multipart body brought, filled in as it streams: the caller still has the files
    stored before a later part failed."""

    stored: list[str] = field(default_factory=list)
    """Vault-relative paths of the files stored whole, in order."""
    fields: dict[str, str] = field(default_factory=dict)


async def receive_files(content_type: str, body: AsyncIterator[bytes],
                        open_sink: Callable[[str], Sink], received: Received) -> None:  # fmt: skip
    """Stream a ``multipart/form-data`` body into ``received``: file parts into sinks
    (committed when their part ends), other fields into a small dict. A file cut short — a
    refused part, a dropped connection, a server stopping — is aborted (its temporary file
    removed); the files stored before it stay in ``received.stored``."""
    kind, params = parse_options_header(content_type)
    boundary = params.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise UploadError("uploads must be multipart/form-data with a boundary",
                          hint='send a form with a "file" field')  # fmt: skip
    state: dict[str, Any] = {"headers": {}, "field": b"", "value": b"", "sink": None, "name": "", "data": b""}
    stored = received.stored
    fields = received.fields

    def on_part_begin() -> None:
        state.update(headers={}, sink=None, name="", data=b"")

    def on_header_field(data: bytes, start: int, end: int) -> None:
        state["field"] += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        state["value"] += data[start:end]

    def on_header_end() -> None:
        state["headers"][state["field"].decode("latin-1").lower()] = state["value"]
        state.update(field=b"", value=b"")

    def on_headers_finished() -> None:
        _disposition, options = parse_options_header(state["headers"].get("content-disposition", b""))
        state["name"] = options.get(b"name", b"").decode("utf-8", "replace")
        filename = options.get(b"filename")
        if filename is not None:
            state["sink"] = open_sink(filename.decode("utf-8", "replace"))

    def on_part_data(data: bytes, start: int, end: int) -> None:
        if state["sink"] is not None:
            state["sink"].write(data[start:end])
        else:
            state["data"] += data[start:end]
            if len(state["data"]) > MAX_FIELD_BYTES:
                raise UploadError(f"the form field {state['name']!r} is too long")

    def on_part_end() -> None:
        if state["sink"] is not None:
            stored.append(state["sink"].commit())
            state["sink"] = None
        elif state["name"]:
            fields[state["name"]] = state["data"].decode("utf-8", "replace")

    parser = MultipartParser(boundary, {
        "on_part_begin": on_part_begin, "on_header_field": on_header_field,
        "on_header_value": on_header_value, "on_header_end": on_header_end,
        "on_headers_finished": on_headers_finished, "on_part_data": on_part_data, "on_part_end": on_part_end,
    })  # fmt: skip
    try:
        async for chunk in body:
            parser.write(chunk)
        parser.finalize()
    except UploadError:
        if state["sink"] is not None:
            state["sink"].abort()
        raise
    except Exception as exc:
        if state["sink"] is not None:
            state["sink"].abort()
        raise UploadError(f"the upload could not be read: {exc}") from exc
    except BaseException:  # cancelled: the client went away or the server is stopping
        if state["sink"] is not None:
            state["sink"].abort()
        raise
    if state["sink"] is not None:  # the body ended mid-file
        state["sink"].abort()
        raise UploadError("the upload ended before the file was complete")
