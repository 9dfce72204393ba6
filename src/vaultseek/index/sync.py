"""The indexing pipeline: files on disk → scrubbed, parsed, chunked, embedded → rows.

Incremental by design. A file whose (size, mtime_ns) is unchanged is not opened; one whose
stat changed but whose bytes hash the same only gets its stat updated; a changed one is
re-chunked, and any chunk whose embedded text is unchanged keeps its stored vector. Changed
files are written in batches of up to 64 (``_BATCH_FILES``), one transaction a batch: a crash
loses at most the batch in flight, a stop (Ctrl-C) between files keeps every file written before
it, and the next run simply continues. Deletions run after additions, so a renamed file finds
its old vectors still in place to reuse.

A run may be limited to named paths (what a watcher knows changed): the walk is replaced by
looking those paths up under the same rules (:func:`sources.find_source`), and everything
after it — deciding, reading, writing, deleting — is the code a full run uses.

Documents (PDF, Office, HTML, CSV, …; see :mod:`vaultseek.documents`) take the same path with
another reader, and are written as soon as each is extracted rather than in batches, since one
may take minutes. Within a PDF, every OCRed page is checkpointed in the index the moment it is
done (scrubbed first, like everything stored), so a run killed mid-OCR resumes at the next
page; the document's chunks replace its checkpoints in one transaction.

Documents are read in a child process with a memory cap (:mod:`vaultseek.documents.sandbox`),
one child for the run. A file that ends or stalls its reader is skipped with a reason starting
``stopped the reader``, and is not read again until it changes (size or mtime). Should the run
itself end while a document is read (the system's out-of-memory killer, a crash in a library),
the document is recorded as in flight before it is read (:data:`READING_META`), and the next
run skips it the same way — unless the run that ended had checkpointed OCR pages of it since
(it was making progress, as a run killed mid-OCR was: it resumes).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import numpy as np

from ..config import Config
from ..documents import (
    DocumentError,
    ExtractContext,
    ExtractionStopped,
    Limits,
    OcrSettings,
    document_chunks,
    kind_of,
    short_heading,
)
from ..documents.sandbox import STOPPED_READER, ReaderProcess
from ..embeddings.static import StaticEmbedder
from ..errors import MissingExtraError, VaultseekError
from ..notes.chunking import chunk_note
from ..notes.markdown import parse_note
from ..records import ChunkDraft, Note, Progress, SkippedFile, SyncReport
from ..storage.store import REEMBEDDING, FileState, PreparedChunk, Store
from ..text.keys import frontmatter_fields, note_names, tag_keys
from ..text.lexical import index_text
from .credentials import scrub
from .deepening import embedding_text
from .names import scrub_path, shown_path
from .sources import (
    PathFilter,
    SourceError,
    SourceFile,
    find_source,
    read_bytes,
    read_source,
    scan_vault,
    walks_into,
)

PIPELINE_VERSION = "10"
"""Bump when reading, scrubbing or chunking changes what a file becomes: the next run then
re-processes every file (vectors are reused wherever the embedded text is unchanged), so
e.g. a new credential pattern reaches notes that have not been edited since. (3: frontmatter
fields and names are stored for filters and the title signal; markdown links to local files
are stored as links. 4: reference-style markdown links, ``[text][ref]``, are stored too.
5: text that is not UTF-8 — notes as well as .txt/.csv/.json/.yaml — is decoded with its
detected charset, cp1252 winning a tie; notes were refused, and Western text in the others
could come out as another code page. 6: more credential patterns — base64-encoded private
keys, Azure AD client secrets, new-format Mailgun keys, Twilio ``SK`` keys without context,
``pw:`` values, values past the length caps, a private key's END half on a page of its own.
7: documents are held to their limits — text past ``max_document_text_mb`` dropped, a slide
or batch of rows over 8,000 characters cut like running text, headings over 200 characters
shortened, workbook rows read past a sheet's stated size, Office files that would inflate past
``max_inflated_mb`` skipped. 8: a credential in a file or folder name is redacted in the title,
the names links resolve by and the heading context made from it. 9: a note's over-long lines
are cut into chunks of at most 2,000 characters (code blocks 8,000), and more credential
patterns: code spans and tables, XML, ``mysql -p``, ``docker login -p``, ``redis-cli -a``,
passwords named in German, Spanish, French or mid-sentence, ``Authorization: Token``, cookies,
hex ``sk-``; a PDF's short pages are kept: a document of short pages becomes one chunk per page,
a short page beside long ones joins the chunk before it, which cites both pages. 10: a short
section under a heading of its own in a Word, ODT or EPUB file is a chunk; it was dropped.)"""
REPROCESSING_META = "reprocessing"
"""Meta key: ``<pipeline version> <highest file id at its start>`` while every file is being
brought to a new pipeline version (the first index included); removed when that run
completes."""
READING_META = "reading"
"""Meta key: the document being read (JSON: path, size, mtime_ns, OCR checkpoints it had),
written before it is read and removed after; found at the start of a run, it names the file
the last run ended on."""
STOPPED_LAST_TIME = f"{STOPPED_READER} last time: the index run ended while reading it"

ProgressCallback = Callable[[Progress], None]
StopCheck = Callable[[], bool]
_BATCH_FILES = 64
"""Files parsed and embedded together: large enough to batch the tokenizer, small enough
that Ctrl-C is honoured within a fraction of a second."""


@dataclass(slots=True)
class _Parsed:
    source: SourceFile
    content_hash: str
    note: Note
    drafts: list[ChunkDraft]
    hashes: list[bytes]
    kind: str = "note"
    ocr_pages: int = 0
    ocr_pending: int = 0
    ocr_over_limit: int = 0


_NEVER_CAUGHT = (KeyboardInterrupt, SystemExit, GeneratorExit, VaultseekError)
"""What the per-file guards let through: a stop request, and the index's own typed errors
(a full disk, a locked index), which are about the run, not the file. Anything else raised
while one file is read, chunked or embedded — a library's error, ``MemoryError``, a Rust
panic (``pyo3_runtime.PanicException``, a ``BaseException``) — skips that file."""


def _failure(what: str, exc: BaseException) -> str:
    """A skip reason for an unexpected error: ``could not be read (MemoryError)``."""
    if isinstance(exc, MemoryError):
        return f"{what}: ran out of memory (MemoryError)"
    detail = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else ""
    return f"{what} ({exc.__class__.__name__}{': ' + detail if detail else ''})"


def _is_text(path: str) -> bool:
    """False for a path holding bytes that are not UTF-8 (decoded as lone surrogates)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def embed_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


class _Checkpoints:
    """The index's OCR checkpoints for one version of one document (a ``PageLog``)."""

    def __init__(self, syncer: Syncer, path: str, content_hash: str) -> None:
        self.syncer, self.path, self.content_hash = syncer, path, content_hash

    def done(self) -> dict[int, str]:
        return self.syncer.store.ocr_checkpoints(self.path, self.content_hash)

    def save(self, page: int, text: str) -> str:
        scrubbed = scrub(text)  # nothing reaches the database unscrubbed, checkpoints included
        self.syncer.redactions.update(scrubbed.counts)
        self.syncer.store.save_ocr_checkpoint(self.path, self.content_hash, page, scrubbed.text)
        return scrubbed.text


class Syncer:
    """One index run over one vault."""

    def __init__(
        self,
        store: Store,
        config: Config,
        embedder: Callable[[], StaticEmbedder],
        *,
        progress: ProgressCallback | None = None,
        should_stop: StopCheck | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.embedder = embedder
        self.progress = progress or (lambda _p: None)
        self.should_stop = should_stop or (lambda: False)
        self.counts: Counter[str] = Counter()
        self.redactions: Counter[str] = Counter()
        self.skipped: list[SkippedFile] = []
        self.notices: list[str] = []
        self.missing_extras: dict[str, list[MissingExtraError]] = {}
        """Extra name → one error per document skipped for want of it (one notice per extra)."""
        self.reprocess_all = False
        self._ocr_ready: bool | None = None
        self.reader = ReaderProcess()

    def _reprocessing_since(self) -> int:
        """The highest file id when the run that brings every file to this pipeline version
        began (the first index, or the first run after an upgrade). A file is rewritten as a
        new row, so one with a higher id was written since then and is done: an interrupted
        run resumes after it instead of starting over."""
        mark = self.store.get_meta(REPROCESSING_META)
        version, _, since = (mark or "").partition(" ")
        if version == PIPELINE_VERSION and since.isdigit():
            return int(since)
        highest = self.store.max_file_id()
        self.store.set_meta({REPROCESSING_META: f"{PIPELINE_VERSION} {highest}"})
        return highest

    def run(self, paths: Collection[str] | None = None) -> SyncReport:
        """:meth:`_run`, with the run's document reader ended afterwards."""
        try:
            return self._run(paths)
        finally:
            self.reader.close()

    def _run(self, paths: Collection[str] | None = None) -> SyncReport:
        """Bring the index in line with the vault — or, given ``paths`` (vault-relative, '/'
        separated), with just those files: each is (re)indexed, recorded as skipped or
        removed exactly as a full run would treat it, and no other file is looked at.

        A run over paths becomes a full one when one of them is, or was, a folder the walk
        enters (a moved or deleted folder reports only itself, not the files it holds; a new
        one may have filled before anyone watched it), and when the pipeline version changed
        (then every file must be re-processed, not just the named ones)."""
        started = time.perf_counter()
        vault = self.config.vault
        assert vault is not None
        interrupted = self._reembed_if_model_changed()
        self.progress(Progress("scan", 0, 0))
        reprocess_all = self.reprocess_all = (
            self.store.get_meta("pipeline_version") != PIPELINE_VERSION
        )
        redone_since = self._reprocessing_since() if reprocess_all else None
        path_filter = PathFilter(self.config.include, self.config.excluded)
        named = None if paths is None or reprocess_all else sorted(set(paths))
        if named is not None and not all(_is_text(p) for p in named):
            named = None  # a name that is not valid UTF-8 is recorded under another spelling: walk
        if named is not None and any(self._is_folder(vault, path_filter, p) for p in named):
            named = None
        follow = self.config.follow_external_symlinks
        max_bytes, limit = self.config.max_file_bytes, self._size_limit
        if named is None:
            sources = scan_vault(
                vault, path_filter, max_bytes=max_bytes, size_limit=limit, follow_external_symlinks=follow
            )
        else:
            found = (
                find_source(
                    vault, path_filter, p, max_bytes=max_bytes, size_limit=limit, follow_external_symlinks=follow
                )
                for p in named
            )
            sources = [source for source in found if source is not None]
        stopped = self._stopped_last_time()
        known = self.store.file_states(named)
        todo: list[tuple[SourceFile, FileState | None]] = []
        for source in sources:
            state = known.get(source.path)
            if source.error is not None:
                self._skip(source, state, source.error)
            elif source.path == stopped.get("path") and self._same_stat(source, stopped):
                self._skip(source, state, STOPPED_LAST_TIME)
            elif (
                state is not None
                and state.status == "skipped"
                and (state.error or "").startswith(STOPPED_READER)
                and (state.size, state.mtime_ns) == (source.size, source.mtime_ns)
            ):  # it ended or stalled the reader: not again until it changes
                self.skipped.append(SkippedFile(shown_path(source.path), state.error or ""))
            elif (
                state is not None
                and state.status == "indexed"
                and (state.size, state.mtime_ns) == (source.size, source.mtime_ns)
                and state.kind == (kind_of(source.path) or "note")
                and not (state.ocr_pending and self._ocr_can_run())
                and not self._over_ocr_limit_raised(state)
                and (redone_since is None or state.id > redone_since)
            ):
                self.counts["unchanged"] += 1
            else:  # new, changed, or skipped last time (the cause may be fixed: try again)
                todo.append((source, state))
        if stopped and stopped["path"] not in {s.path for s in sources} and named is not None:
            self._remember_stopped(stopped)  # not in this run's paths: kept for a later run
        if not interrupted:
            interrupted = self._index(todo)
        if not interrupted:
            present = {s.path for s in sources}
            gone = sorted(set(known) - present)
            for done, path in enumerate(gone, start=1):
                self.store.delete_file(path)
                self.progress(Progress("delete", done, len(gone), shown_path(path)))
            self.counts["deleted"] = len(gone)
            if self.counts["added"] + self.counts["updated"] + len(gone) > 500:
                self.store.optimize()
            if reprocess_all:
                self.store.set_meta({"pipeline_version": PIPELINE_VERSION})
                self.store.delete_meta(REPROCESSING_META)
            self.store.prune_ocr_checkpoints(present, among=None if named is None else set(named))
        self._notice_ocr_blocked()
        self.progress(Progress("done", 1, 1))
        return SyncReport(
            scanned=len(sources),
            added=self.counts["added"],
            updated=self.counts["updated"],
            unchanged=self.counts["unchanged"],
            touched=self.counts["touched"],
            deleted=self.counts["deleted"],
            skipped=tuple(self._final_skips()),
            chunks_written=self.counts["chunks"],
            vectors_reused=self.counts["reused"],
            reembedded=self.counts["reembedded"],
            redactions=dict(sorted(self.redactions.items())),
            interrupted=interrupted,
            seconds=round(time.perf_counter() - started, 3),
            notices=(*self.notices, *self._missing_extra_notices()),
            documents_extracted=self.counts["documents"],
            pages_extracted=self.counts["pages"],
            pages_ocred=self.counts["ocred"],
            pages_resumed=self.counts["resumed"],
            full=named is None,
        )

    def _stopped_last_time(self) -> dict[str, object]:
        """The document the last run ended on while reading it (its path, size and mtime), or
        {} — also {} when that run checkpointed OCR pages of it: it was making progress."""
        mark = self.store.get_meta(READING_META)
        if not mark:
            return {}
        self.store.delete_meta(READING_META)
        try:
            reading = json.loads(mark)
            pages = len(self.store.ocr_checkpoints(reading["path"], reading["hash"]))
        except (ValueError, KeyError, TypeError):
            return {}
        return {} if pages > int(reading.get("pages", 0)) else dict(reading)

    def _remember_stopped(self, reading: dict[str, object]) -> None:
        path, size, mtime_ns = reading.get("path"), reading.get("size"), reading.get("mtime_ns")
        if isinstance(path, str) and isinstance(size, int) and isinstance(mtime_ns, int):
            kind = kind_of(path) or "note"
            self.store.record_skip(path, size=size, mtime_ns=mtime_ns, reason=STOPPED_LAST_TIME, kind=kind)

    @staticmethod
    def _same_stat(source: SourceFile, reading: dict[str, object]) -> bool:
        return (source.size, source.mtime_ns) == (reading.get("size"), reading.get("mtime_ns"))

    def _size_limit(self, rel_path: str) -> tuple[int, str]:
        """Documents have their own, larger cap; notes and any other file the note cap."""
        if kind_of(rel_path):
            return self.config.max_document_bytes, "max_document_mb"
        return self.config.max_file_bytes, "max_file_mb"

    def _is_folder(self, vault: Path, path_filter: PathFilter, rel_path: str) -> bool:
        """Whether a named path is a folder the walk enters, or was one the index holds
        files of: its files were not named, so only a full run finds them all."""
        follow = self.config.follow_external_symlinks
        return (
            walks_into(vault, path_filter, rel_path, follow_external_symlinks=follow)
            or self.store.has_files_under(rel_path)
        )

    def _skip(self, source: SourceFile, state: FileState | None, reason: str) -> None:
        """Record a file that cannot be indexed (writing only when something changed)."""
        if (
            state is None
            or state.status != "skipped"
            or state.error != reason
            or (state.size, state.mtime_ns) != (source.size, source.mtime_ns)
        ):
            self.store.record_skip(
                source.path,
                size=source.size,
                mtime_ns=source.mtime_ns,
                reason=reason,
                kind=kind_of(source.path) or "note",
            )
        self.skipped.append(SkippedFile(shown_path(source.path), reason))

    def _missing_extra_notices(self) -> list[str]:
        """One notice per missing extra, however many documents needed it."""
        notices = []
        for extra, errors in sorted(self.missing_extras.items()):
            count, them = (f"{len(errors):,} documents", "them") if len(errors) > 1 else ("1 document", "it")
            notices.append(
                f"{count} skipped: reading {them} needs the optional '{extra}' extra; "
                f"install it with {errors[0].install} and run again"
            )
        return notices

    def _final_skips(self) -> list[SkippedFile]:
        return sorted({s.path: s for s in self.skipped}.values(), key=lambda s: s.path)

    # -- model identity -----------------------------------------------------------------
    def _reembed_if_model_changed(self) -> bool:
        """Re-embed every stored chunk when the configured model is not the one the index was
        built with. Returns True if interrupted. Vectors are never trusted across models: the
        stored fingerprint says "re-embedding" until every chunk is done."""
        model = self.embedder()
        stored = self.store.get_meta("model_fingerprint")
        if stored == model.fingerprint:
            return False
        total = self.store.counts()["chunks"]
        if stored is not None and total:
            previous = self.store.get_meta("model_name")
            self.store.set_meta({"model_fingerprint": REEMBEDDING + model.fingerprint})
            done = 0
            for batch in self.store.iter_chunks():
                if self.should_stop():
                    self.notices.append(
                        f"embedding model change interrupted after {done} of {total} chunks; "
                        "run again to finish (searches use BM25 until then)"
                    )
                    return True
                vectors = model.embed([embedding_text(ctx, text) for _cid, ctx, text in batch])
                self.store.replace_vectors([(row[0], vec) for row, vec in zip(batch, vectors, strict=True)])
                done += len(batch)
                self.progress(Progress("embed", done, total))
            self.counts["reembedded"] = done
            self.notices.append(
                f"embedding model changed ({previous} → {model.name}); re-embedded {done} chunks"
            )
        self.store.set_meta(
            {"model_name": model.name, "model_fingerprint": model.fingerprint, "dim": str(model.dim)}
        )
        return False

    # -- files --------------------------------------------------------------------------
    def _index(self, todo: Sequence[tuple[SourceFile, FileState | None]]) -> bool:
        """Index changed files in batches; returns True if stopped early. A document is
        written as soon as it is extracted (with the notes parsed before it), since
        extracting one may take minutes."""
        done = 0
        for start in range(0, len(todo), _BATCH_FILES):
            batch = todo[start : start + _BATCH_FILES]
            parsed: list[tuple[_Parsed, FileState | None]] = []
            for source, state in batch:
                try:
                    item = self._parse(source, state)
                except ExtractionStopped:
                    return True
                except _NEVER_CAUGHT:
                    raise
                except BaseException as exc:  # noqa: BLE001 - one file never ends the run
                    self._skip(source, state, _failure("could not be read", exc))
                    continue
                if item is not None:
                    parsed.append((item, state))
                    if item.kind != "note":
                        if not self._write(parsed):
                            return True
                        parsed = []
            if not self._write(parsed):
                return True
            done += len(batch)
            self.progress(Progress("index", done, len(todo), shown_path(batch[-1][0].path)))
            if self.should_stop() and done < len(todo):
                return True
        return False

    def _write(self, parsed: Sequence[tuple[_Parsed, FileState | None]]) -> bool:
        """Embed and store parsed files; False if stopped before all were written."""
        vectors, fresh, parsed = self._embed(parsed)
        with self.store.batch():
            for item, state in parsed:
                if self.should_stop():
                    return False
                chunks = [
                    PreparedChunk(
                        draft,
                        digest,
                        vectors[digest],
                        (
                            index_text(draft.text),
                            index_text(draft.section),
                            index_text(draft.heading_context),
                        ),
                    )
                    for draft, digest in zip(item.drafts, item.hashes, strict=True)
                ]
                self.counts["reused"] += sum(1 for h in item.hashes if h not in fresh)
                self.store.replace_file(
                    item.source.path,
                    size=item.source.size,
                    mtime_ns=item.source.mtime_ns,
                    content_hash=item.content_hash,
                    note=item.note,
                    chunks=chunks,
                    kind=item.kind,
                    ocr_pages=item.ocr_pages,
                    ocr_pending=item.ocr_pending,
                    ocr_over_limit=item.ocr_over_limit,
                    ocr_limit=self.config.ocr_max_pages_per_document if item.ocr_over_limit else 0,
                    fields=frontmatter_fields(item.note.frontmatter),
                    tags=tag_keys(item.note.tags),
                    names=note_names(item.note.title, item.note.aliases, shown_path(item.source.path)),
                )
                self.counts["updated" if state else "added"] += 1
                self.counts["chunks"] += len(chunks)
        return True

    def _ocr_can_run(self) -> bool:
        """Whether a document with pages waiting for OCR is worth reading again: only once
        OCR can run (an engine or a language pack installed, OCR switched back on), so a
        machine without one does not re-extract those PDFs on every run."""
        if self._ocr_ready is None:
            self._ocr_ready = self._ocr_settings().can_run()
        return self._ocr_ready

    def _ocr_settings(self) -> OcrSettings:
        return OcrSettings(enabled=self.config.ocr, languages=self.config.ocr_languages,
                           max_pages=self.config.ocr_max_pages_per_document,
                           engine=self.config.ocr_engine)  # fmt: skip

    def _notice_ocr_blocked(self) -> None:
        """One notice a run while indexed pages wait for an OCR that cannot run (no engine
        installed, or none for the configured languages), with the fix: the same line a PDF
        read in this run reports, so it is never said twice."""
        if not self.config.ocr or not self.store.ocr_totals()[1]:
            return
        blocker = self._ocr_settings().blocker()
        if blocker and blocker not in self.notices:
            self.notices.append(blocker)

    def _over_ocr_limit_raised(self, state: FileState) -> bool:
        """Whether a document that had pages left without OCR by the page limit may now get
        more of them: the limit was raised since, and OCR can run."""
        return bool(
            state.ocr_over_limit
            and self.config.ocr_max_pages_per_document > state.ocr_limit
            and self._ocr_can_run()
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
            or (state.ocr_pending and self._ocr_can_run())
            or self._over_ocr_limit_raised(state)
            or self.reprocess_all
        ):
            return False
        self.store.touch_file(state.id, size=source.size, mtime_ns=source.mtime_ns)
        self.counts["touched"] += 1
        return True

    def _shown(self, path: str) -> str:
        """``path`` as the names and titles made from it see it: a credential in a file or
        folder name redacted (and counted with the run's redactions); the index keeps the real
        path, which leads back to the file (see :mod:`.names`)."""
        shown = shown_path(path)
        if shown != path:
            self.redactions.update(scrub_path(path).counts)
        return shown

    def _parse(self, source: SourceFile, state: FileState | None) -> _Parsed | None:
        """Read, scrub, parse and chunk one file; None if it needs no new rows."""
        kind = kind_of(source.path)
        if kind is not None:
            return self._parse_document(source, state, kind)
        try:
            loaded = read_source(source)
        except SourceError as exc:
            self._skip(source, state, str(exc))
            return None
        if self._touched_only(source, state, loaded.content_hash, "note"):
            return None
        scrubbed = scrub(loaded.text)
        self.redactions.update(scrubbed.counts)
        note = parse_note(scrubbed.text, path=self._shown(source.path))
        drafts = chunk_note(note)
        hashes = [embed_hash(embedding_text(d.heading_context, d.text)) for d in drafts]
        return _Parsed(source, loaded.content_hash, note, drafts, hashes)

    def _parse_document(
        self, source: SourceFile, state: FileState | None, kind: str
    ) -> _Parsed | None:
        """Extract, scrub and chunk one document; None if it needs no new rows. Raises
        :class:`ExtractionStopped` when the user stops mid-document."""
        try:
            loaded = read_bytes(source)
        except SourceError as exc:
            self._skip(source, state, str(exc))
            return None
        if self._touched_only(source, state, loaded.content_hash, kind):
            return None
        path = source.path
        context = ExtractContext(
            path=path,
            ocr=self._ocr_settings(),
            pages=_Checkpoints(self, path, loaded.content_hash),
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
            self._skip(source, state, str(exc))
            return None
        except MissingExtraError as exc:  # skipped like a damaged file; the hint comes once
            self._skip(source, state, f"needs the optional '{exc.extra}' extra, which is not installed")
            self.missing_extras.setdefault(exc.extra, []).append(exc)
            return None
        finally:
            self.store.delete_meta(READING_META)
        self.counts["documents"] += 1
        if kind == "pdf":
            self.counts["pages"] += extracted.pages
        self.counts["ocred"] += extracted.pages_ocred
        self.counts["resumed"] += extracted.pages_resumed
        for notice in extracted.notices:
            if notice not in self.notices:
                self.notices.append(notice)
        segments = []
        for segment in extracted.segments:
            scrubbed = scrub(segment.text)
            self.redactions.update(scrubbed.counts)
            segments.append(replace(segment, text=scrubbed.text))
        named = PurePosixPath(self._shown(path)).stem
        title = short_heading(scrub(extracted.title or named).text)
        drafts = document_chunks(segments, title=title, kind=kind)
        hashes = [embed_hash(embedding_text(d.heading_context, d.text)) for d in drafts]
        return _Parsed(
            source,
            loaded.content_hash,
            Note(title=title, body="", type=kind, links=tuple(extracted.links)),
            drafts,
            hashes,
            kind=kind,
            ocr_pages=extracted.ocr_pages,
            ocr_pending=extracted.ocr_pending,
            ocr_over_limit=extracted.ocr_over_limit,
        )

    def _embed(
        self, parsed: Sequence[tuple[_Parsed, FileState | None]]
    ) -> tuple[dict[bytes, np.ndarray], set[bytes], Sequence[tuple[_Parsed, FileState | None]]]:
        """:meth:`_vectors_for` the batch, and the files it holds. When embedding fails (out of
        memory, a panic in the tokenizer), each file is embedded alone and the one that fails
        is skipped with the reason, so the others are still written."""
        try:
            found, embedded = self._vectors_for([item for item, _s in parsed])
            return found, embedded, parsed
        except _NEVER_CAUGHT:
            raise
        except BaseException as exc:  # noqa: BLE001 - one file never ends the run
            if len(parsed) == 1:
                item, state = parsed[0]
                self._skip(item.source, state, _failure("could not be embedded", exc))
                return {}, set(), []
        vectors: dict[bytes, np.ndarray] = {}
        fresh: set[bytes] = set()
        kept: list[tuple[_Parsed, FileState | None]] = []
        for one in parsed:
            more, new, written = self._embed([one])
            vectors.update(more)
            fresh |= new
            kept.extend(written)
        return vectors, fresh, kept

    def _vectors_for(
        self, parsed: Sequence[_Parsed]
    ) -> tuple[dict[bytes, np.ndarray], set[bytes]]:
        """A vector for every chunk hash in the batch, and which of them were newly embedded
        (the rest are reused from any stored chunk that embedded the same text)."""
        texts: dict[bytes, str] = {}
        for item in parsed:
            for draft, digest in zip(item.drafts, item.hashes, strict=True):
                texts.setdefault(digest, embedding_text(draft.heading_context, draft.text))
        vectors = self.store.vectors_by_hash(texts)
        missing = [h for h in texts if h not in vectors]
        if missing:
            vectors.update(zip(missing, self.embedder().embed([texts[h] for h in missing]), strict=True))
        return vectors, set(missing)
