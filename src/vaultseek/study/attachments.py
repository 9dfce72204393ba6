"""Files attached to a chat message: images the model looks at, and documents that become
sources of that conversation only.

    record = attach(store, config, "scan.pdf", data)          # read, chunk, keep
    resolved = resolve(store, conversation_id, [record["id"]], question=question)
    resolved.images    # bytes for the user message (the LLM client encodes them)
    resolved.sources   # SearchResult-shaped passages, best for the question first

An image is decoded and written out again without its metadata (:mod:`.images`). A document
(PDF, DOCX, PPTX, XLSX, CSV, HTML, text, Markdown, JSON/YAML) is read by the same readers as
indexing — OCR included — scrubbed of credentials and chunked the same way; its chunks live
beside the conversation in the study database, never in the knowledge base, until
:func:`add_to_library` files the document as an upload.

An attachment belongs to the conversation it is first sent in; another conversation naming
its id gets :class:`~vaultseek.errors.AttachmentNotFoundError`, the same as for an id that
never existed. Deleting the conversation deletes its attachments; attachments never sent are
removed after :data:`UNSENT_HOURS`. All the SQL for them is here, on the study database's
connection and lock (the tables come from ``storage.m003_attachments``).
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath
from typing import Any

from ..config import Config
from ..documents import (
    DOCUMENT_SUFFIXES,
    DocumentError,
    ExtractContext,
    Limits,
    OcrSettings,
    document_chunks,
    kind_of,
    short_heading,
)
from ..documents.sandbox import extract_once as extract_document
from ..errors import AttachmentNotFoundError
from ..index.credentials import scrub
from ..records import ChunkDraft, Location, SearchResult
from ..storage.store import utc_now
from ..text.lexical import index_text, make_snippet, parse_query
from .images import clean_image
from .library import KnowledgeBase
from .storage import StudyStore
from .uploads import StoredUpload, UploadError, UploadTooLargeError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")
NOTE_SUFFIXES = (".md", ".markdown")
MAX_IMAGE_BYTES = 20 * 1024 * 1024
"""The largest image taken (before it is scaled down and re-encoded)."""
UNSENT_HOURS = 24
"""Attachments never sent with a question are removed after this long."""
PATH_PREFIX = "attachment:"
"""A cited attachment's ``path`` is ``attachment:<id>/<name>``: the UI opens its passages
from ``GET /api/attachments/<id>/chunks`` instead of the knowledge base."""


class AttachmentRefusedError(UploadError):
    """A file the chat does not take (its type, or nothing readable in it): HTTP 415."""

    status = 415


@dataclass(frozen=True)
class Resolved:
    """A question's attachments: ``images`` for the model to see, ``sources`` to cite."""

    images: list[bytes] = field(default_factory=list)
    sources: list[SearchResult] = field(default_factory=list)


def accepted(config: Config) -> dict[str, Any]:
    """What the attach button takes: file endings and size limits (for the UI's checks and
    its file picker)."""
    return {
        "images": list(IMAGE_SUFFIXES),
        "documents": sorted({*DOCUMENT_SUFFIXES, *NOTE_SUFFIXES}),
        "max_image_bytes": MAX_IMAGE_BYTES,
        "max_document_bytes": max_document_bytes(config),
    }


def max_document_bytes(config: Config) -> int:
    return int(config.max_upload_mb * 1024 * 1024)


def kind_for(name: str) -> str:
    """``image`` or ``document`` by the file's ending; :class:`AttachmentRefusedError` for an
    ending the chat does not read."""
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return "image"
    if suffix in NOTE_SUFFIXES or (suffix in DOCUMENT_SUFFIXES and kind_of(name) is not None):
        return "document"
    raise AttachmentRefusedError(
        f"{name!r} is not a type the chat reads",
        hint="attach an image (PNG, JPEG, GIF, WebP, BMP) or a document (PDF, DOCX, PPTX, XLSX, ODT, EPUB, CSV, HTML, JSON, "
             "text, Markdown, a canvas or a TIFF scan)",
    )


def limit_for(name: str, config: Config) -> int:
    """The most bytes an attachment named ``name`` may have."""
    return MAX_IMAGE_BYTES if kind_for(name) == "image" else max_document_bytes(config)


def too_large(name: str, limit: int) -> UploadTooLargeError:
    return UploadTooLargeError(f"{name} is larger than the {limit / (1024 * 1024):g} MB limit for attachments",
                               hint="attach a smaller file, or add it to the vault folder to index it")  # fmt: skip


def clean_name(name: str) -> str:
    """The file's own name (no folders), without control characters, at most 180 bytes."""
    name = PurePosixPath(str(name).replace("\\", "/")).name.strip()
    name = "".join(ch for ch in name if ord(ch) >= 32 and ord(ch) != 127)
    if not name or name in (".", ".."):
        raise UploadError("the attachment has no file name")
    while len(name.encode("utf-8")) > 180:
        stem, suffix = PurePosixPath(name).stem, PurePosixPath(name).suffix
        name = stem[:-1] + suffix
    return name


# -- taking a file in -----------------------------------------------------------------------
def attach(store: StudyStore, config: Config, name: str, data: bytes, *, conversation_id: str | None = None) -> dict[str, Any]:
    """Keep one attached file: an image cleaned of its metadata, or a document read into
    chunks. ``conversation_id`` binds it at once (else the first question sent with it
    does). Returns what ``POST /api/attachments`` answers."""
    name = clean_name(name)
    kind = kind_for(name)
    limit = limit_for(name, config)
    if len(data) > limit:
        raise too_large(name, limit)
    if not data:
        raise UploadError(f"{name} is empty")
    if conversation_id is not None and store.find_conversation(conversation_id) is None:
        raise AttachmentNotFoundError(f"no conversation {conversation_id}", hint="leave conversation_id out")
    remove_unsent(store)
    chunks: list[ChunkDraft] = []
    meta: dict[str, Any] = {}
    if kind == "image":
        image = clean_image(data, name=name)
        data, media_type = image.data, image.media_type
        meta = {"width": image.width, "height": image.height}
    else:
        chunks, meta = read_document(name, data, config)
        media_type = _media_type(name)
    attachment_id = uuid.uuid4().hex[:16]  # 64 random bits, like a conversation's id
    with store.lock, store.conn:
        store.conn.execute(
            "INSERT INTO attachments(id, conversation_id, kind, name, media_type, size, data, meta, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (attachment_id, conversation_id, kind, name, media_type, len(data), data, json.dumps(meta), utc_now()),
        )
        for draft in chunks:
            store.conn.execute(
                "INSERT INTO attachment_chunks(attachment_id, position, section, heading_context, text, location) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (attachment_id, draft.position, draft.section, draft.heading_context, draft.text,
                 json.dumps(draft.location.to_dict()) if draft.location else None),
            )  # fmt: skip
    record: dict[str, Any] = {"id": attachment_id, "kind": kind, "name": name, "size": len(data),
                              "media_type": media_type, **meta}  # fmt: skip
    if kind == "document":
        record["chunks"] = len(chunks)
    return record


def read_document(name: str, data: bytes, config: Config) -> tuple[list[ChunkDraft], dict[str, Any]]:
    """A document's chunks, read as indexing reads it (the same readers, OCR settings, limits
    and credential scrubber), and what reading it found (pages, OCR)."""
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in NOTE_SUFFIXES:
        from ..notes.chunking import chunk_note  # the markdown stack: only for a note attached
        from ..notes.markdown import parse_note

        note = parse_note(scrub(data.decode("utf-8", "replace")).text, path=name)
        drafts = chunk_note(note)
        meta: dict[str, Any] = {}
    else:
        kind = kind_of(name) or "txt"
        context = ExtractContext(
            path=name,
            ocr=OcrSettings(enabled=config.ocr, languages=config.ocr_languages,
                            max_pages=config.ocr_max_pages_per_document, engine=config.ocr_engine),
            limits=Limits(max_inflated_bytes=config.max_inflated_bytes, max_text_chars=config.max_document_text_chars),
        )  # fmt: skip
        try:
            extracted = extract_document(name, data, context)
        except DocumentError as exc:
            raise AttachmentRefusedError(f"{name} cannot be read: {exc}") from None
        segments = [replace(segment, text=scrub(segment.text).text) for segment in extracted.segments]
        title = short_heading(scrub(extracted.title or PurePosixPath(name).stem).text)
        drafts = document_chunks(segments, title=title, kind=kind)
        meta = {"pages": extracted.pages, "ocr_pages": extracted.ocr_pages, "ocr_pending": extracted.ocr_pending,
                "notices": extracted.notices}  # fmt: skip
        if not drafts and extracted.ocr_pending:
            raise AttachmentRefusedError(
                f"{name} has no text layer, and OCR cannot read it here",
                hint=extracted.notices[0] if extracted.notices else "install an OCR engine (pip install 'vaultseek[documents]')",
            )
    if not drafts:
        raise AttachmentRefusedError(f"no text could be read from {name}")
    return drafts, meta


def _media_type(name: str) -> str:
    import mimetypes

    return mimetypes.guess_type(name)[0] or "application/octet-stream"


# -- reading it back ------------------------------------------------------------------------
def find(store: StudyStore, attachment_id: str) -> dict[str, Any] | None:
    """One attachment's record (without its bytes), or None."""
    rows: list[tuple[Any, ...]]
    with store.lock:
        rows = store.conn.execute(
            "SELECT id, conversation_id, kind, name, media_type, size, meta, created_at FROM attachments WHERE id = ?",
            (attachment_id,),
        ).fetchall()
    if not rows:
        return None
    aid, cid, kind, name, media_type, size, meta, created = rows[0]
    return {"id": aid, "conversation_id": cid, "kind": kind, "name": name, "media_type": media_type,
            "size": size, "created_at": created, **json.loads(meta)}  # fmt: skip


def get(store: StudyStore, attachment_id: str) -> dict[str, Any]:
    found = find(store, attachment_id)
    if found is None:
        raise AttachmentNotFoundError(f"no attachment {attachment_id}")
    return found


def content(store: StudyStore, attachment_id: str) -> tuple[dict[str, Any], bytes]:
    """An attachment's record and bytes (the cleaned image, or the document as given)."""
    record = get(store, attachment_id)
    data: list[tuple[Any, ...]]
    with store.lock:
        data = store.conn.execute("SELECT data FROM attachments WHERE id = ?", (attachment_id,)).fetchall()
    if not data:
        raise AttachmentNotFoundError(f"no attachment {attachment_id}")
    return record, bytes(data[0][0])


def chunks(store: StudyStore, attachment_id: str) -> list[dict[str, Any]]:
    """A document attachment's chunks, in the shape of ``GET /api/documents/{path}/chunks``
    (ids negative, as they are cited)."""
    get(store, attachment_id)
    return [
        {"id": -cid, "position": position, "section": section, "text": text,
         "location": location.to_dict() if location else None,
         "label": location.label() if location else section}
        for _aid, cid, position, section, _context, text, location in _chunk_rows(store, [attachment_id])
    ]  # fmt: skip


def _chunk_rows(store: StudyStore, ids: list[str]) -> list[tuple[str, int, int, str, str, str, Location | None]]:
    """(attachment id, chunk id, position, section, heading context, text, location) of the
    attachments' chunks, each attachment's in order."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows: list[tuple[Any, ...]]
    with store.lock:
        rows = store.conn.execute(
            f"SELECT attachment_id, id, position, section, heading_context, text, location FROM attachment_chunks "
            f"WHERE attachment_id IN ({marks}) ORDER BY attachment_id, position",
            tuple(ids),
        ).fetchall()
    return [(aid, cid, pos, sec, ctx, text, Location.from_dict(json.loads(loc)) if loc else None)
            for aid, cid, pos, sec, ctx, text, loc in rows]  # fmt: skip


def delete(store: StudyStore, attachment_id: str) -> None:
    """Forget an attachment not yet sent (one sent stays with its conversation)."""
    record = get(store, attachment_id)
    if record["conversation_id"] is not None:
        raise UploadError(f"{record['name']} was sent in a conversation; it goes when the conversation is deleted")
    with store.lock, store.conn:
        store.conn.execute("DELETE FROM attachments WHERE id = ? AND conversation_id IS NULL", (attachment_id,))


def remove_unsent(store: StudyStore, *, hours: float = UNSENT_HOURS) -> int:
    """Remove attachments never sent with a question that are older than ``hours``."""
    cutoff = (datetime.now(UTC) - timedelta(hours=hours)).isoformat(timespec="seconds")  # utc_now()'s format
    with store.lock, store.conn:
        store.conn.execute("DELETE FROM attachments WHERE conversation_id IS NULL AND created_at < ?", (cutoff,))
        removed = int(store.conn.changes())
    return removed


# -- a question's attachments ---------------------------------------------------------------
def resolve(store: StudyStore, conversation_id: str, ids: list[str] | tuple[str, ...], *,
            question: str | None = None) -> Resolved:  # fmt: skip
    """The images and passages of attachments ``ids`` for a question in ``conversation_id``.
    Attachments not yet sent are bound to that conversation now; an unknown id, or one bound
    to another conversation, raises :class:`AttachmentNotFoundError` (nothing is bound then).
    Passages come best for ``question`` first (by default the conversation's latest user
    message: the question being answered, which the chat saved just before), then in
    document order."""
    ids = list(dict.fromkeys(ids))
    records = []
    for attachment_id in ids:
        record = find(store, attachment_id)
        if record is None or record["conversation_id"] not in (None, conversation_id):
            raise AttachmentNotFoundError(
                f"no attachment {attachment_id} in this conversation",
                hint="attach the file again (an attachment belongs to the conversation it was sent in)",
            )
        records.append(record)
    with store.lock, store.conn:
        for record in records:
            if record["conversation_id"] is None:
                store.conn.execute("UPDATE attachments SET conversation_id = ? WHERE id = ? AND conversation_id IS NULL",
                                   (conversation_id, record["id"]))  # fmt: skip
    images = [content(store, r["id"])[1] for r in records if r["kind"] == "image"]
    documents = {r["id"]: r for r in records if r["kind"] == "document"}
    if question is None:
        question = _latest_question(store, conversation_id)
    return Resolved(images, passages(store, documents, question or ""))


def _latest_question(store: StudyStore, conversation_id: str) -> str:
    rows: list[tuple[Any, ...]]
    with store.lock:
        rows = store.conn.execute(
            "SELECT content FROM messages WHERE conversation_id = ? AND role = 'user' ORDER BY id DESC LIMIT 1",
            (conversation_id,),
        ).fetchall()
    return str(rows[0][0]) if rows else ""


def passages(store: StudyStore, documents: dict[str, dict[str, Any]], question: str) -> list[SearchResult]:
    """The chunks of ``documents`` as search results, ranked for ``question`` (BM25 over the
    attached chunks alone, words matched by their first letters as the snippets do), the
    chunks it does not match after, in document order."""
    rows = _chunk_rows(store, list(documents))
    terms = parse_query(question).terms if question else ()
    scores = _bm25(terms, [f"{ctx}\n{text}" for _aid, _cid, _pos, _sec, ctx, text, _loc in rows])
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], i))
    results = []
    for rank, i in enumerate(order, start=1):
        attachment_id, cid, _position, section, context, text, location = rows[i]
        record = documents[attachment_id]
        results.append(SearchResult(
            path=f"{PATH_PREFIX}{attachment_id}/{record['name']}", section=section, heading_context=context,
            snippet=make_snippet(text, terms), score=round(scores[i], 6), bm25_rank=rank if scores[i] > 0 else None,
            vec_rank=None, chunk_id=-cid, text=text, location=location,
        ))  # fmt: skip
    return results


_WORD = re.compile(r"\w+")


def _bm25(terms: tuple[str, ...], texts: list[str], *, k1: float = 1.2, b: float = 0.75) -> list[float]:
    if not terms or not texts:
        return [0.0] * len(texts)
    stems = [t[: max(4, len(t) - 2)] if len(t) > 4 else t for t in terms]
    counts = []
    for text in texts:
        words = _WORD.findall(index_text(text).lower())
        counts.append((len(words), Counter(s for w in words for s in stems if w.startswith(s))))
    average = sum(n for n, _ in counts) / len(counts) or 1.0
    having = {stem: sum(1 for _, found in counts if found[stem]) for stem in stems}
    scores = []
    for n, found in counts:
        score = 0.0
        for stem in stems:
            if not found[stem]:
                continue
            idf = math.log(1 + (len(counts) - having[stem] + 0.5) / (having[stem] + 0.5))
            score += idf * found[stem] * (k1 + 1) / (found[stem] + k1 * (1 - b + b * n / average))
        scores.append(score)
    return scores


# -- into the knowledge base ----------------------------------------------------------------
def add_to_library(kb: KnowledgeBase, store: StudyStore, attachment_id: str, *, category: str | None = None,
                   on_conflict: str | None = None) -> dict[str, Any]:  # fmt: skip
    """File a document attachment into the knowledge base through the library's own upload
    path — a safe name, the size cap, a name already taken refused unless ``on_conflict`` is
    ``replace`` or ``keep_both`` (:class:`~.uploads.UploadConflictError`), the same bytes
    already there reported instead of indexed twice — and queue it for indexing. Returns
    ``{"path", "status": "queued"}``, or ``{"path": None, "status": "duplicate",
    "duplicate_of"}``."""
    record, data = content(store, attachment_id)
    if record["kind"] != "document":
        raise UploadError(f"{record['name']} is an image; only documents can be added to the knowledge base")
    stored: list[StoredUpload] = []
    sink = kb.open_upload(record["name"], on_conflict=on_conflict, into=stored)
    try:
        sink.write(data)
    except BaseException:
        sink.abort()
        raise
    sink.commit()
    kept, duplicates = kb.settle_uploads(stored)
    kb.add_uploads(kept, category or "")
    if not kept and duplicates:
        return {"path": None, "status": "duplicate", "duplicate_of": duplicates[0]["duplicate_of"]}
    return {"path": kept[0], "status": "queued"}
