"""Reading a request: its JSON body, its path and query parameters, and the notebook it is for."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from ..contract import text_fields
from ..errors import MissingExtraError, NotFoundError, QueryError
from ..payload import encodable, load_json, shown_size
from ..study import Notebook

try:
    from starlette.requests import Request
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

T = TypeVar("T")


def notebook_of(request: Request) -> Notebook:
    """The notebook the app serves (``create_app`` keeps it in the app's state)."""
    notebook: Notebook = request.app.state.notebook
    return notebook


async def off_loop(work: Callable[..., T], *args: Any) -> T:
    """Run blocking work (the database, the file system) on a worker thread, so the event loop
    keeps serving other requests and streams meanwhile."""
    return await asyncio.to_thread(work, *args)


MAX_JSON_BYTES = 1024 * 1024
"""The largest JSON body read (a question, a study order, quiz answers: a few KB each); the
reading stops there."""


async def json_body(request: Request) -> Any:
    """The request's JSON body (``null`` when empty): every handler reads its body here. One
    larger than :data:`MAX_JSON_BYTES`, not JSON, or nested deeper than
    :data:`~vaultseek.payload.MAX_DEPTH` is a :class:`QueryError` (400) that says which; its
    text is made encodable (:func:`~vaultseek.payload.encodable`)."""
    too_large = QueryError(f"the request body is larger than {shown_size(MAX_JSON_BYTES)}")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and (len(declared) > 12 or int(declared) > MAX_JSON_BYTES):
        raise too_large
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_JSON_BYTES:
            raise too_large
    # A lone surrogate ("\\ud83d", half an emoji) can be neither stored nor searched.
    return encodable(load_json(bytes(body) or b"null", max_bytes=MAX_JSON_BYTES, what="the request body"))


def path_param(request: Request) -> str:
    """A document path from the URL: vault-relative, without ``..``."""
    path: str = request.path_params["path"]
    if not path or path.startswith("/") or ".." in path.split("/"):
        raise QueryError(f"bad document path {path!r}")
    return path


def id_param(request: Request, name: str, what: str) -> int:
    """A number in the URL (a card's id, a lesson's): a whole number from 1 to 2**63 - 1, the
    most SQLite holds. Anything else names nothing: :class:`NotFoundError` (404)."""
    raw = str(request.path_params[name])
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19 or not 0 < int(raw) < 2**63:
        raise NotFoundError(f"no {what} {raw[:40]}")
    return int(raw)


def whole_param(request: Request, name: str, default: int, upper: int, *, lower: int = 1) -> int:
    """A whole-number query parameter from ``lower`` to ``upper`` (``default`` when absent)."""
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise QueryError(f"{name} must be a whole number from {lower} to {upper} (got {raw[:40]!r})") from None
    if not lower <= value <= upper:
        raise QueryError(f"{name} must be a whole number from {lower} to {upper} (got {value})")
    return value


def note_param(request: Request) -> str:
    note = request.query_params.get("path", "")
    if not note.strip():
        raise QueryError(f"give a note: {request.url.path}?path=…")
    return note


_FILTER_LISTS = ("paths", "folders", "tags", "kinds", "where", "path_contains", "name_contains", "categories")
_FILTER_TEXTS = ("modified_after", "modified_before")
FILTER_PARAMS = frozenset((*_FILTER_LISTS, *_FILTER_TEXTS))
"""The query parameters that name a scope (``GET /api/search``'s, ``GET /api/map``'s)."""


def search_of_query_string(params: Any) -> dict[str, Any]:
    """``GET /api/search``'s parameters as a search request (``vaultseek.contract``): ``q`` is
    the query, the filter fields come flat (a list field repeated for alternatives) and the
    rest as the request's fields, numbers and flags written as text. Only the filter lists
    repeat: any other parameter given twice (``q=a&q=b``) is a :class:`QueryError`, not the
    last one silently taking over."""
    for name in dict.fromkeys(params.keys()):
        count = len(params.getlist(name))
        if count > 1 and name not in _FILTER_LISTS:
            raise QueryError(
                f"the parameter {name} is given {count} times",
                hint=f"give {name} once; only the filter lists ({', '.join(_FILTER_LISTS)}) repeat",
            )
    filters: dict[str, Any] = {}
    for name in _FILTER_LISTS:
        values = [value for value in params.getlist(name) if value]
        if values:
            filters[name] = values
    for name in _FILTER_TEXTS:
        if params.get(name):
            filters[name] = params[name]
    rest = {name: value for name, value in params.items() if name not in (*_FILTER_LISTS, *_FILTER_TEXTS, "q")}
    return {"query": params.get("q"), **text_fields(rest), **({"filters": filters} if filters else {})}
