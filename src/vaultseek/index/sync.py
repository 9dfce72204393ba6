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
may take minutes.

This module is the run: what to look at, what changed, batches, writes, deletions, and when
the whole index is redone. What one file becomes (reading, scrubbing, parsing, a document's
reader child and OCR checkpoints) is :mod:`.parsing`'s; the vectors, reused by the hash of
their text or embedded, and a model change's re-embed are :mod:`.embedding`'s; what the run
counts and reports is :mod:`.tally`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import numpy as np

from ..config import Config
from ..documents import ExtractionStopped, kind_of
from ..documents.sandbox import STOPPED_READER
from ..embeddings.static import StaticEmbedder
from ..errors import VaultseekError
from ..records import Progress, SkippedFile, SyncReport
from ..storage.store import FileState, PreparedChunk, Store
from ..text.keys import frontmatter_fields, note_names, tag_keys
from ..text.lexical import index_text
from .embedding import reembed_if_model_changed, vectors_for
from .names import shown_path
from .parsing import (
    READING_META,
    STOPPED_LAST_TIME,
    Parsed,
    Parser,
    find_stopped_last_time,
    is_stopped_last_time,
    remember_stopped,
)
from .sources import PathFilter, SourceFile, find_source, scan_vault, walks_into
from .tally import Tally

__all__ = [
    "PIPELINE_VERSION",
    "READING_META",
    "REPROCESSING_META",
    "STOPPED_LAST_TIME",
    "ProgressCallback",
    "StopCheck",
    "Syncer",
]

PIPELINE_VERSION = "10"
"""Bump when reading, scrubbing or chunking changes what a file becomes: the next run then
re-processes every file (vectors are reused wherever the embedded text is unchanged), so
e.g. a new credential pattern reaches notes that have not been edited since. The commit that
bumps it says what changed."""
REPROCESSING_META = "reprocessing"
"""Meta key: ``<pipeline version> <highest file id at its start>`` while every file is being
brought to a new pipeline version (the first index included); removed when that run
completes."""

ProgressCallback = Callable[[Progress], None]
StopCheck = Callable[[], bool]
_BATCH_FILES = 64
"""Files parsed and embedded together: large enough to batch the tokenizer, small enough
that Ctrl-C is honoured within a fraction of a second."""

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
        self.tally = Tally(store)
        self.parser = Parser(store, config, self.tally, progress=self.progress, should_stop=self.should_stop)

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
            self.parser.close()

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
        tally, counts = self.tally, self.tally.counts
        interrupted = reembed_if_model_changed(
            self.store, self.embedder(), tally, progress=self.progress, should_stop=self.should_stop
        )
        self.progress(Progress("scan", 0, 0))
        reprocess_all = self.parser.reprocess_all = (
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
        stopped = find_stopped_last_time(self.store)
        known = self.store.file_states(named)
        todo: list[tuple[SourceFile, FileState | None]] = []
        for source in sources:
            state = known.get(source.path)
            if source.error is not None:
                tally.skip(source, state, source.error)
            elif is_stopped_last_time(source, stopped):
                tally.skip(source, state, STOPPED_LAST_TIME)
            elif (
                state is not None
                and state.status == "skipped"
                and (state.error or "").startswith(STOPPED_READER)
                and (state.size, state.mtime_ns) == (source.size, source.mtime_ns)
            ):  # it ended or stalled the reader: not again until it changes
                tally.skipped.append(SkippedFile(shown_path(source.path), state.error or ""))
            elif (
                state is not None
                and state.status == "indexed"
                and (state.size, state.mtime_ns) == (source.size, source.mtime_ns)
                and state.kind == (kind_of(source.path) or "note")
                and not self.parser.ocr_due(state)
                and (redone_since is None or state.id > redone_since)
            ):
                counts["unchanged"] += 1
            else:  # new, changed, or skipped last time (the cause may be fixed: try again)
                todo.append((source, state))
        if stopped and stopped["path"] not in {s.path for s in sources} and named is not None:
            remember_stopped(self.store, stopped)  # not in this run's paths: kept for a later run
        if not interrupted:
            interrupted = self._index(todo)
        if not interrupted:
            present = {s.path for s in sources}
            gone = sorted(set(known) - present)
            for done, path in enumerate(gone, start=1):
                self.store.delete_file(path)
                self.progress(Progress("delete", done, len(gone), shown_path(path)))
            counts["deleted"] = len(gone)
            if counts["added"] + counts["updated"] + len(gone) > 500:
                self.store.optimize()
            if reprocess_all:
                self.store.set_meta({"pipeline_version": PIPELINE_VERSION})
                self.store.delete_meta(REPROCESSING_META)
            self.store.prune_ocr_checkpoints(present, among=None if named is None else set(named))
        self.parser.notice_ocr_blocked()
        self.progress(Progress("done", 1, 1))
        return tally.report(
            scanned=len(sources),
            interrupted=interrupted,
            seconds=round(time.perf_counter() - started, 3),
            full=named is None,
        )

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

    # -- files --------------------------------------------------------------------------
    def _index(self, todo: Sequence[tuple[SourceFile, FileState | None]]) -> bool:
        """Index changed files in batches; returns True if stopped early. A document is
        written as soon as it is extracted (with the notes parsed before it), since
        extracting one may take minutes."""
        done = 0
        for start in range(0, len(todo), _BATCH_FILES):
            batch = todo[start : start + _BATCH_FILES]
            parsed: list[tuple[Parsed, FileState | None]] = []
            for source, state in batch:
                try:
                    item = self.parser.parse(source, state)
                except ExtractionStopped:
                    return True
                except _NEVER_CAUGHT:
                    raise
                except BaseException as exc:  # noqa: BLE001 - one file never ends the run
                    self.tally.skip(source, state, _failure("could not be read", exc))
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

    def _write(self, parsed: Sequence[tuple[Parsed, FileState | None]]) -> bool:
        """Embed and store parsed files; False if stopped before all were written."""
        vectors, fresh, parsed = self._embed(parsed)
        counts = self.tally.counts
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
                counts["reused"] += sum(1 for h in item.hashes if h not in fresh)
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
                counts["updated" if state else "added"] += 1
                counts["chunks"] += len(chunks)
        return True

    def _embed(
        self, parsed: Sequence[tuple[Parsed, FileState | None]]
    ) -> tuple[dict[bytes, np.ndarray], set[bytes], Sequence[tuple[Parsed, FileState | None]]]:
        """:func:`.embedding.vectors_for` the batch, and the files it holds. When embedding
        fails (out of memory, a panic in the tokenizer), each file is embedded alone and the
        one that fails is skipped with the reason, so the others are still written."""
        try:
            chunks = (
                chunk for item, _s in parsed for chunk in zip(item.drafts, item.hashes, strict=True)
            )
            found, embedded = vectors_for(self.store, self.embedder, chunks)
            return found, embedded, parsed
        except _NEVER_CAUGHT:
            raise
        except BaseException as exc:  # noqa: BLE001 - one file never ends the run
            if len(parsed) == 1:
                item, state = parsed[0]
                self.tally.skip(item.source, state, _failure("could not be embedded", exc))
                return {}, set(), []
        vectors: dict[bytes, np.ndarray] = {}
        fresh: set[bytes] = set()
        kept: list[tuple[Parsed, FileState | None]] = []
        for one in parsed:
            more, new, written = self._embed([one])
            vectors.update(more)
            fresh |= new
            kept.extend(written)
        return vectors, fresh, kept
