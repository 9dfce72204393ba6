"""What one file becomes in an index run: read, scrubbed, parsed and chunked, each chunk keyed.

A note is read as text and parsed as markdown; a document (PDF, Office, HTML, CSV, …; see
:mod:`vaultseek.documents`) is extracted by another reader. Either way a file whose bytes hash
the same as what was indexed is not parsed again: only its new stat is recorded. Credentials
are scrubbed from everything before it is stored, a file or folder name included
(:mod:`.names`).

Within a PDF, every OCRed page is checkpointed in the index the moment it is done (scrubbed
first, like everything stored), so a run killed mid-OCR resumes at the next page; the
document's chunks replace its checkpoints in one transaction. A document whose pages wait for
an OCR that cannot run here is not read again until one can, nor one the page limit cut short
until the limit is raised.

Documents are read in a child process with a memory cap (:mod:`vaultseek.documents.sandbox`),
one child for the run. A file that ends or stalls its reader is skipped with a reason starting
``stopped the reader``, and is not read again until it changes (size or mtime). Should the run
itself end while a document is read (the system's out-of-memory killer, a crash in a library),
the document is recorded as in flight before it is read (:data:`READING_META`), and the next
run skips it the same way — unless the run that ended had checkpointed OCR pages of it since
(it was making progress, as a run killed mid-OCR was: it resumes).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from ..config import Config
from ..documents import (
    DocumentError,
    ExtractContext,
    Limits,
    OcrSettings,
    document_chunks,
    kind_of,
    short_heading,
)
from ..documents.sandbox import STOPPED_READER, ReaderProcess
from ..errors import MissingExtraError
from ..notes.chunking import chunk_note
from ..notes.markdown import parse_note
from ..records import ChunkDraft, Note, Progress
from ..storage.store import FileState, Store
from .credentials import scrub
from .embedding import chunk_hashes
from .names import scrub_path, shown_path
from .sources import SourceError, SourceFile, read_bytes, read_source
from .tally import Tally

READING_META = "reading"
"""Meta key: the document being read (JSON: path, size, mtime_ns, OCR checkpoints it had),
written before it is read and removed after; found at the start of a run, it names the file
the last run ended on."""
STOPPED_LAST_TIME = f"{STOPPED_READER} last time: the index run ended while reading it"


@dataclass(slots=True)
class Parsed:
    """One file ready to embed and write: its note (or a document's stand-in for one), its
    chunks and each chunk's :func:`.embedding.embed_hash`, and a PDF's OCR counts."""

    source: SourceFile
    content_hash: str
    note: Note
    drafts: list[ChunkDraft]
    hashes: list[bytes]
    kind: str = "note"
    ocr_pages: int = 0
    ocr_pending: int = 0
    ocr_over_limit: int = 0


class PageCheckpoints:
    """The index's OCR checkpoints for one version of one document (a ``PageLog``)."""

    def __init__(self, store: Store, tally: Tally, path: str, content_hash: str) -> None:
        self.store, self.tally, self.path, self.content_hash = store, tally, path, content_hash

    def done(self) -> dict[int, str]:
        return self.store.ocr_checkpoints(self.path, self.content_hash)

    def save(self, page: int, text: str) -> str:
        scrubbed = scrub(text)  # nothing reaches the database unscrubbed, checkpoints included
        self.tally.redactions.update(scrubbed.counts)
        self.store.save_ocr_checkpoint(self.path, self.content_hash, page, scrubbed.text)
        return scrubbed.text


class Parser:
    """Turns the files of one index run into :class:`Parsed` ones, through one document
    reader child (ended by :meth:`close`)."""

    def __init__(
        self,
        store: Store,
        config: Config,
        tally: Tally,
        *,
        progress: Callable[[Progress], None],
        should_stop: Callable[[], bool],
    ) -> None:
        self.store = store
        self.config = config
        self.tally = tally
        self.progress = progress
        self.should_stop = should_stop
        self.reprocess_all = False
        """Set while every file is brought to a new pipeline version: none is only touched."""
        self._ocr_ready: bool | None = None
        self.reader = ReaderProcess()

    def close(self) -> None:
        """End the run's document reader."""
        self.reader.close()

    # -- OCR --------------------------------------------------------------------------------
    def _ocr_settings(self) -> OcrSettings:
        return OcrSettings(enabled=self.config.ocr, languages=self.config.ocr_languages,
                           max_pages=self.config.ocr_max_pages_per_document,
                           engine=self.config.ocr_engine)  # fmt: skip

    def ocr_due(self, state: FileState) -> bool:
        """Whether an indexed document is worth reading again for OCR although it did not
        change: it has pages waiting for OCR and OCR can run now (an engine or a language pack
        installed, OCR switched back on), or the page limit that left pages without OCR was
        raised since and OCR can run. A machine without OCR does not re-extract those PDFs on
        every run."""
        return bool(state.ocr_pending and self._ocr_can_run()) or self._over_ocr_limit_raised(state)

    def notice_ocr_blocked(self) -> None:
        """One notice a run while indexed pages wait for an OCR that cannot run (no engine
        installed, or none for the configured languages), with the fix: the same line a PDF
        read in this run reports, so it is never said twice."""
        if not self.config.ocr or not self.store.ocr_totals()[1]:
            return
        blocker = self._ocr_settings().blocker()
        if blocker:
            self.tally.notice(blocker)

    def _ocr_can_run(self) -> bool:
        if self._ocr_ready is None:
            self._ocr_ready = self._ocr_settings().can_run()
        return self._ocr_ready

    def _over_ocr_limit_raised(self, state: FileState) -> bool:
        return bool(
            state.ocr_over_limit
            and self.config.ocr_max_pages_per_document > state.ocr_limit
            and self._ocr_can_run()
        )

    # -- files ------------------------------------------------------------------------------
    def parse(self, source: SourceFile, state: FileState | None) -> Parsed | None:
        """Read, scrub, parse and chunk one file; None if it needs no new rows. Raises
        :class:`~vaultseek.documents.ExtractionStopped` when the user stops mid-document."""
        kind = kind_of(source.path)
        if kind is not None:
            return self._parse_document(source, state, kind)
        try:
            loaded = read_source(source)
        except SourceError as exc:
            self.tally.skip(source, state, str(exc))
            return None
        if self._touched_only(source, state, loaded.content_hash, "note"):
            return None
        scrubbed = scrub(loaded.text)
        self.tally.redactions.update(scrubbed.counts)
        note = parse_note(scrubbed.text, path=self._shown(source.path))
        drafts = chunk_note(note)
        return Parsed(source, loaded.content_hash, note, drafts, chunk_hashes(drafts))

    def _parse_document(
        self, source: SourceFile, state: FileState | None, kind: str
    ) -> Parsed | None:
        """Extract, scrub and chunk one document; None if it needs no new rows."""
        try:
            loaded = read_bytes(source)
        except SourceError as exc:
            self.tally.skip(source, state, str(exc))
            return None
        if self._touched_only(source, state, loaded.content_hash, kind):
            return None
        path = source.path
        context = ExtractContext(
            path=path,
            ocr=self._ocr_settings(),
            pages=PageCheckpoints(self.store, self.tally, path, loaded.content_hash),
            progress=lambda phase, done, total: self.progress(Progress(phase, done, total, shown_path(path))),
            should_stop=self.should_stop,
            limits=Limits(
                max_inflated_bytes=self.config.max_inflated_bytes,
                max_text_chars=self.config.max_document_text_chars,
            ),
        )
        self.store.set_meta({READING_META: json.dumps({
            "path": path, "size": source.size, "mtime_ns": source.mtime_ns,
            "hash": loaded.content_hash, "pages": len(context.pages.done()),
        })})  # fmt: skip
        try:
            extracted = self.reader.extract(path, loaded.data, context)
        except DocumentError as exc:
            self.tally.skip(source, state, str(exc))
            return None
        except MissingExtraError as exc:
            self.tally.skip_for_extra(source, state, exc)
            return None
        finally:
            self.store.delete_meta(READING_META)
        counts = self.tally.counts
        counts["documents"] += 1
        if kind == "pdf":
            counts["pages"] += extracted.pages
        counts["ocred"] += extracted.pages_ocred
        counts["resumed"] += extracted.pages_resumed
        for notice in extracted.notices:
            self.tally.notice(notice)
        segments = []
        for segment in extracted.segments:
            scrubbed = scrub(segment.text)
            self.tally.redactions.update(scrubbed.counts)
            segments.append(replace(segment, text=scrubbed.text))
        named = PurePosixPath(self._shown(path)).stem
        title = short_heading(scrub(extracted.title or named).text)
        drafts = document_chunks(segments, title=title, kind=kind)
        if not drafts and kind != "image" and not extracted.ocr_pending:
            self.tally.textless.append(self._shown(path))  # a picture with no text is no surprise
        return Parsed(
            source,
            loaded.content_hash,
            Note(title=title, body="", type=kind, links=tuple(extracted.links)),
            drafts,
            chunk_hashes(drafts),
            kind=kind,
            ocr_pages=extracted.ocr_pages,
            ocr_pending=extracted.ocr_pending,
            ocr_over_limit=extracted.ocr_over_limit,
        )

    def _touched_only(
        self, source: SourceFile, state: FileState | None, content_hash: str, kind: str
    ) -> bool:
        """True (and the new stat recorded) when the file's bytes are what was indexed: its
        mtime moved, its content did not, so nothing is re-read, re-extracted or re-OCRed."""
        if (
            state is None
            or state.status != "indexed"
            or state.content_hash != content_hash
            or state.kind != kind
            or self.ocr_due(state)
            or self.reprocess_all
        ):
            return False
        self.store.touch_file(state.id, size=source.size, mtime_ns=source.mtime_ns)
        self.tally.counts["touched"] += 1
        return True

    def _shown(self, path: str) -> str:
        """``path`` as the names and titles made from it see it: a credential in a file or
        folder name redacted (and counted with the run's redactions); the index keeps the real
        path, which leads back to the file (see :mod:`.names`)."""
        shown = shown_path(path)
        if shown != path:
            self.tally.redactions.update(scrub_path(path).counts)
        return shown


# -- the document the last run ended on ---------------------------------------------------------
def find_stopped_last_time(store: Store) -> dict[str, object]:
    """The document the last run ended on while reading it (its path, size and mtime), or
    {} — also {} when that run checkpointed OCR pages of it: it was making progress. The mark
    is removed: it is this run's to keep (:func:`remember_stopped`) or let go."""
    mark = store.get_meta(READING_META)
    if not mark:
        return {}
    store.delete_meta(READING_META)
    try:
        reading = json.loads(mark)
        pages = len(store.ocr_checkpoints(reading["path"], reading["hash"]))
    except (ValueError, KeyError, TypeError):
        return {}
    return {} if pages > int(reading.get("pages", 0)) else dict(reading)


def remember_stopped(store: Store, reading: dict[str, object]) -> None:
    """Record the document a run ended on as skipped, for a run that does not look at it."""
    path, size, mtime_ns = reading.get("path"), reading.get("size"), reading.get("mtime_ns")
    if isinstance(path, str) and isinstance(size, int) and isinstance(mtime_ns, int):
        kind = kind_of(path) or "note"
        store.record_skip(path, size=size, mtime_ns=mtime_ns, reason=STOPPED_LAST_TIME, kind=kind)


def is_stopped_last_time(source: SourceFile, reading: dict[str, object]) -> bool:
    """Whether ``source`` is, unchanged, the document the last run ended on."""
    same_stat = (source.size, source.mtime_ns) == (reading.get("size"), reading.get("mtime_ns"))
    return source.path == reading.get("path") and same_stat

