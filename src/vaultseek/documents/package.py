"""Zipped XML documents read with the standard library (EPUB, ODT): a checked archive, and its
XML streamed through expat with no entity expansion.

:func:`open_package` reads the zip directory and refuses, with the reason, an archive of more
than :data:`~.limits.MAX_MEMBERS` members, a member compressed with anything but deflate (or
stored uncompressed), and a member over :data:`~.limits.RATIO_MIN_BYTES` that inflates more
than :data:`~.limits.MAX_RATIO` to 1 — the same rules as for Office files (:mod:`.limits`).

:func:`stream_xml` never builds a tree: a member is inflated 64 KB at a time and its elements
and text are handed to a :class:`XmlHandler` as they are met, so memory stays at a few pieces
whatever the member's size, and reading stops as soon as the handler says it has enough (the
text cap). An XML file that declares entities (``<!ENTITY …>``, the way to a "billion laughs"
or to an external file) is refused; no DTD or external entity is ever loaded. HTML's named
characters (``&nbsp;``, ``&mdash;``), which XHTML chapters use without declaring, are read as
the characters they name.
"""

from __future__ import annotations

import html.entities
import io
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol
from xml.parsers import expat

from .extraction import MB, DocumentError
from .limits import MAX_MEMBERS, check_member, megabytes

PIECE_BYTES = 64 * 1024
MAX_SMALL_BYTES = 4 * MB
"""The most a manifest (an EPUB's container and package files, a table of contents) may
inflate to: they are read whole."""

_NAMED = re.compile(rb"&([A-Za-z][A-Za-z0-9]{1,31});")
_XML_NAMED = {b"amp", b"lt", b"gt", b"quot", b"apos"}


class XmlHandler(Protocol):
    """What :func:`stream_xml` calls: tags are ``namespace local`` (``local`` without one)."""

    def start(self, tag: str, attributes: dict[str, str]) -> None: ...

    def end(self, tag: str) -> None: ...

    def text(self, data: str) -> None: ...

    @property
    def done(self) -> bool:
        """True once the handler wants no more (its text budget is spent)."""
        ...


class _Refused(Exception):
    pass


def open_package(data: bytes, label: str) -> zipfile.ZipFile:
    """The archive, once its directory passes the checks in the module docstring; raises
    :class:`DocumentError` naming ``label`` (``EPUB``, ``ODT``) otherwise."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise DocumentError(f"corrupt {label} (not a readable zip archive: {exc})") from exc
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise DocumentError(f"{label} holds {len(members):,} parts (at most {MAX_MEMBERS:,} are read)")
    for member in members:
        check_member(member, label, "an unusual compression")
    return archive


def read_small(archive: zipfile.ZipFile, name: str, label: str) -> bytes:
    """A manifest member whole; :class:`DocumentError` when it is missing or over
    :data:`MAX_SMALL_BYTES`."""
    try:
        with _xml_errors(label, name), archive.open(name) as stream:
            data = stream.read(MAX_SMALL_BYTES + 1)
    except KeyError as exc:
        raise DocumentError(f"corrupt {label} (no {name})") from exc
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise DocumentError(f"corrupt {label} ({name} cannot be read: {exc})") from exc
    if len(data) > MAX_SMALL_BYTES:
        raise DocumentError(f"{label} part {name} is over {megabytes(MAX_SMALL_BYTES)}")
    return data


def stream_xml(archive: zipfile.ZipFile, name: str, handler: XmlHandler, label: str) -> None:
    """Hand the elements and text of one XML member to ``handler`` in document order, until it
    ends or ``handler.done``. Raises :class:`DocumentError` for a missing or damaged member, XML
    that is not well-formed, and XML that declares entities."""
    parser = _parser(handler)
    carry = b""
    try:
        with _xml_errors(label, name), archive.open(name) as stream:
            while not handler.done:
                piece = stream.read(PIECE_BYTES)
                data, carry = _split_entity(carry + piece) if piece else (carry, b"")
                parser.Parse(_characters(data), not piece)
                if not piece:
                    break
    except KeyError as exc:
        raise DocumentError(f"corrupt {label} (no {name})") from exc
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise DocumentError(f"corrupt {label} ({name} cannot be read: {exc})") from exc


def parse_small(data: bytes, handler: XmlHandler, label: str, name: str) -> None:
    """:func:`stream_xml` for a manifest already read by :func:`read_small`."""
    parser = _parser(handler)
    with _xml_errors(label, name):
        parser.Parse(_characters(data), True)


@contextmanager
def _xml_errors(label: str, name: str) -> Iterator[None]:
    """The parser's refusals as :class:`DocumentError`: declared entities, XML that is not
    well-formed."""
    try:
        yield
    except _Refused as exc:
        raise DocumentError(f"{label} part {name} declares XML entities, which are not read") from exc
    except expat.ExpatError as exc:
        raise DocumentError(
            f"corrupt {label}: {name} is not well-formed XML (line {exc.lineno}: {expat.errors.messages[exc.code]})"
        ) from exc


def local(tag: str) -> str:
    """A tag's name without its namespace."""
    return tag.rpartition(" ")[2]


def _parser(handler: XmlHandler) -> expat.XMLParserType:
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.buffer_text = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(*_args: object) -> int:
        raise _Refused

    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    parser.StartElementHandler = handler.start
    parser.EndElementHandler = handler.end
    parser.CharacterDataHandler = handler.text
    return parser


def _split_entity(data: bytes) -> tuple[bytes, bytes]:
    """``data`` without a named character reference cut at its end, and that cut part (kept
    for the next piece)."""
    cut = data.rfind(b"&", max(0, len(data) - 34))
    if cut >= 0 and b";" not in data[cut:]:
        return data[:cut], data[cut:]
    return data, b""


def _characters(data: bytes) -> bytes:
    """HTML's named characters as numeric references XML reads (``&nbsp;`` → ``&#160;``)."""
    if b"&" not in data:
        return data

    def numeric(match: re.Match[bytes]) -> bytes:
        name = match.group(1)
        if name in _XML_NAMED:
            return match.group(0)
        point = html.entities.name2codepoint.get(name.decode("ascii"))
        return f"&#{point};".encode("ascii") if point is not None else match.group(0)

    return _NAMED.sub(numeric, data)
