"""What arrives: one incoming item (a note, a clipped article, a pasted snippet, a document)
read into the text intake scores and the note it will become.

Markdown (and any text file that is not a document type) keeps its own frontmatter and body.
Documents — everything :mod:`vaultseek.documents` can read — become their extracted text, in
sections per page, slide, sheet or heading, and keep the original file beside the note. HTML
also gives its author, site and canonical address (authority signals) from its ``<meta>``
tags.

An item is never read whole before its size is known: one over the vault's ``max_file_mb``
(a note or other text) or ``max_document_mb`` (a document) is refused with its size and the
limit, and stays in the inbox; reading stops at the limit should the file grow meanwhile.
Documents are read in a reader child with a memory cap (:mod:`vaultseek.documents.sandbox`),
so an inbox the daemon takes by itself never costs it more than that cap; an item that stopped
the reader is not read again by the same process until it changes.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Config
from ..documents import DocumentError, ExtractContext, OcrSettings, kind_of
from ..documents.encoding import decode_text
from ..documents.limits import megabytes
from ..documents.sandbox import STOPPED_READER, extract_once
from ..errors import IntakeError, MissingExtraError
from ..index.credentials import scrub
from ..notes.markdown import split_frontmatter

_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_HTML_META = re.compile(
    r"<meta\s+[^>]*?(?:name|property)\s*=\s*[\"'](?P<name>author|og:site_name|og:url|citation_author|"
    r"citation_doi|article:author|dc\.creator)[\"'][^>]*?content\s*=\s*[\"'](?P<value>[^\"']*)[\"']",
    re.IGNORECASE,
)
_HTML_META_REVERSED = re.compile(
    r"<meta\s+[^>]*?content\s*=\s*[\"'](?P<value>[^\"']*)[\"'][^>]*?(?:name|property)\s*=\s*"
    r"[\"'](?P<name>author|og:site_name|og:url|citation_author|citation_doi|article:author|dc\.creator)[\"']",
    re.IGNORECASE,
)
_CANONICAL = re.compile(r"<link\s+[^>]*?rel\s*=\s*[\"']canonical[\"'][^>]*?href\s*=\s*[\"']([^\"']+)[\"']", re.I)
_UNSAFE_NAME = re.compile(r"[^\w.\- ]+", re.UNICODE)
_DASHES = re.compile(r"[\s_]+")
MAX_NOTE_BYTES = Config().max_file_bytes
"""The default ``max_file_mb``: the largest note or text item intake reads."""
MAX_DOCUMENT_BYTES = Config().max_document_bytes
"""The default ``max_document_mb``: the largest document item intake reads."""
SKIPPED_SUFFIXES = (".part", ".crdownload", ".download", ".tmp", ".swp", ".intake-tmp")
"""Files still being written by a browser or an editor: left in the inbox until they are whole."""


@dataclass(frozen=True)
class Item:
    """One incoming item, read."""

    name: str
    """The note's file stem (from the file name, or the title of a pasted snippet)."""
    title: str
    body: str
    """Markdown text: the note's own body, or a document's extracted text in sections."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Frontmatter (notes) or ``<meta>`` facts (HTML: author, site, url, doi)."""
    source: str = "stdin"
    """Where it came from: a path, or ``stdin``."""
    kind: str = "note"
    """``note`` or a document kind (``pdf``, ``docx``, ``html``, …)."""
    original: Path | None = None
    """A document's file, kept beside the note as an attachment."""

    @property
    def text(self) -> str:
        """What the scorers and the model read: the title, then the body."""
        return f"{self.title}\n\n{self.body}"


def is_waiting(path: Path) -> bool:
    """Hidden files and partial downloads are not items (yet)."""
    name = path.name
    return name.startswith((".", "~$")) or name.lower().endswith(SKIPPED_SUFFIXES)


def read_item(
    path: Path,
    *,
    ocr: OcrSettings | None = None,
    max_note_bytes: int = MAX_NOTE_BYTES,
    max_document_bytes: int = MAX_DOCUMENT_BYTES,
) -> Item:
    """Read one file. Raises :class:`IntakeError` when it cannot be read or is over its size
    limit (the item then stays where it is)."""
    kind = kind_of(path.name)
    data = _read_bounded(path, *((max_note_bytes, "max_file_mb") if kind is None
                                 else (max_document_bytes, "max_document_mb")))  # fmt: skip
    if kind is None:
        return item_from_text(_decode(data, path), name=path.stem, source=str(path))
    key = _version(path)
    if key in _STOPPED:
        raise IntakeError(_STOPPED[key])
    try:
        extracted = extract_once(path.name, data, ExtractContext(path=path.name, ocr=ocr or OcrSettings()))
    except DocumentError as exc:
        message = f"cannot read {path.name}: {exc}"
        if str(exc).startswith(STOPPED_READER) and key is not None:
            if len(_STOPPED) >= _STOPPED_KEPT:
                _STOPPED.pop(next(iter(_STOPPED)))
            _STOPPED[key] = message
        raise IntakeError(message) from exc
    except MissingExtraError as exc:  # one item's error, so the rest of the inbox goes on
        raise IntakeError(f"cannot read {path.name}: {exc}; {exc.install}") from exc
    meta = _html_meta(data) if kind == "html" else {}
    title = _unsecret(extracted.title or "") or _unsecret(path.stem)
    return Item(
        name=safe_name(path.stem),
        title=title,
        body=_document_body(extracted.segments),
        meta=meta,
        source=str(path),
        kind=kind,
        original=path,
    )


_STOPPED: dict[tuple[str, int, int], str] = {}
"""Inbox items that stopped the reader (by path, size and mtime), with the message: the
daemon takes the inbox after every change in the vault, and such an item is not read again
in this process until it changes."""
_STOPPED_KEPT = 1000


def _version(path: Path) -> tuple[str, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path.absolute()), stat.st_size, stat.st_mtime_ns)


def _read_bounded(path: Path, limit: int, setting: str) -> bytes:
    """The file's bytes, refused unread when it is over ``limit`` (and never more than
    ``limit`` of them read, should it grow meanwhile)."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size <= limit:
                data = handle.read(limit + 1)
                size = max(size, len(data))
    except OSError as exc:
        raise IntakeError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size > limit:
        raise IntakeError(
            f"{path.name} is {megabytes(size)}, over {setting} ({megabytes(limit)})",
            hint=f"raise {setting} in the configuration to take it",
        )
    return data


def item_from_text(text: str, *, name: str | None = None, source: str = "stdin") -> Item:
    """A note or a pasted snippet: its frontmatter, its body, a title from the frontmatter,
    the first ``#`` heading or the first line."""
    meta, body = split_frontmatter(text)
    title = _unsecret(str(meta.get("title") or ""))
    if not title:
        heading = _H1.search(body)
        first_line = next((line for line in body.splitlines() if line.strip()), "")
        title = _unsecret(heading.group(1)) if heading else _unsecret(first_line)[:80] or _unsecret(name or "snippet")
    stem = safe_name(name) if name else safe_name(title[:60]) or "snippet"
    return Item(name=stem, title=title, body=body, meta=meta, source=source)


def safe_name(text: str) -> str:
    """A file stem that is safe on every platform — no separators or odd characters — and
    names no secret: each credential in ``text`` becomes its redaction marker before the stem
    is cut to length (a paste opening with ``OPENAI_API_KEY=sk-…`` is filed as
    ``OPENAI-API-KEY-REDACTED-openai-api-key.md``)."""
    cleaned = _UNSAFE_NAME.sub(" ", _unsecret(text)).strip(" .-")
    return _DASHES.sub("-", cleaned)[:80].strip("-") or "item"


def _unsecret(text: str) -> str:
    """``text`` stripped, with every credential in it replaced by ``[REDACTED:<pattern>]``:
    names and titles are scrubbed whole, before any cut, so no piece of a secret survives in
    a file name, a title or the intake records."""
    return scrub(text.strip()).text


def _decode(data: bytes, path: Path) -> str:
    """A note's text, decoded the way a ``.txt`` document is (a byte-order mark, else UTF-8,
    else the detected charset: a note saved as cp1252 reads like a cp1252 text file)."""
    if b"\x00" in data[:8192] and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise IntakeError(
            f"{path.name} is neither text nor a document type vaultseek reads",
            hint="supported: notes (.md) and .pdf .docx .pptx .xlsx .csv .html .txt .json .yaml",
        )
    try:
        return decode_text(data)
    except DocumentError as exc:
        raise IntakeError(f"cannot read {path.name}: {exc}", hint="re-save it as UTF-8") from None


def _document_body(segments: list[Any]) -> str:
    """Extracted segments as markdown: a ``##`` section per page, slide, sheet or heading."""
    parts: list[str] = []
    current: str | None = None
    for segment in segments:
        place = _place_heading(segment)
        if place is not None and place != current:
            parts.append(f"## {place}")
            current = place
        parts.append(segment.text.strip())
    return "\n\n".join(p for p in parts if p) + "\n"


def _place_heading(segment: Any) -> str | None:
    location = segment.location
    if location is not None:
        if location.page is not None:
            return f"Page {location.page}"
        if location.slide is not None:
            return f"Slide {location.slide}"
        if location.sheet is not None:
            return f"Sheet {location.sheet}"
    if segment.heading:
        return " › ".join(segment.heading)
    return None


def _html_meta(data: bytes) -> dict[str, Any]:
    head = data[:200_000].decode("utf-8", "replace")
    meta: dict[str, Any] = {}
    names = {"og:site_name": "site", "og:url": "url", "citation_doi": "doi"}
    for pattern in (_HTML_META, _HTML_META_REVERSED):
        for m in pattern.finditer(head):
            key = names.get(m.group("name").lower(), "author")
            value = m.group("value").strip()
            if value and key not in meta:
                meta[key] = value
    canonical = _CANONICAL.search(head)
    if canonical and "url" not in meta:
        meta["url"] = canonical.group(1).strip()
    return meta

