"""The indexing pipeline: files on disk → scrubbed, parsed, chunked, embedded → rows.

Incremental by design. A file whose (size, mtime_ns) is unchanged is not opened; one whose
stat changed but whose bytes hash the same only gets its stat updated; a changed one is
re-chunked, and any chunk whose embedded text is unchanged keeps its stored vector. Each file
commits in its own transaction, so an interrupted run loses at most the file in flight and the
next run simply continues. Deletions run after additions, so a renamed file finds its old
vectors still in place to reuse.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .chunking import chunk_note
from .config import Config
from .credentials import scrub
from .embeddings import StaticEmbedder
from .lexical import index_text
from .markdown import parse_note
from .records import ChunkDraft, Note, Progress, SkippedFile, SyncReport
from .sources import PathFilter, SourceError, SourceFile, read_source, scan_vault
from .store import FileState, PreparedChunk, Store

PIPELINE_VERSION = "2"
"""Bump when reading, scrubbing or chunking changes what a file becomes: the next run then
re-processes every file (vectors are reused wherever the embedded text is unchanged), so
e.g. a new credential pattern reaches notes that have not been edited since."""
REEMBEDDING = "reembedding:"
"""Stored in place of the model fingerprint while a model change is half done, so nothing
trusts a table that mixes two models' vectors, and the next run starts the re-embed over."""

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


def embedding_text(heading_context: str, text: str) -> str:
    """What gets embedded for a chunk: its context line, then its text."""
    return f"{heading_context}\n{text}"


def embed_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


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
        self.reprocess_all = False

    def run(self) -> SyncReport:
        started = time.perf_counter()
        vault = self.config.vault
        assert vault is not None
        interrupted = self._reembed_if_model_changed()
        self.progress(Progress("scan", 0, 0))
        sources = scan_vault(
            vault,
            PathFilter(self.config.include, self.config.excluded),
            max_bytes=self.config.max_file_bytes,
        )
        known = self.store.file_states()
        reprocess_all = self.reprocess_all = (
            self.store.get_meta("pipeline_version") != PIPELINE_VERSION
        )
        todo: list[tuple[SourceFile, FileState | None]] = []
        for source in sources:
            state = known.get(source.path)
            if source.error is not None:
                self._skip(source, state, source.error)
            elif (
                state is not None
                and state.status == "indexed"
                and (state.size, state.mtime_ns) == (source.size, source.mtime_ns)
                and not reprocess_all
            ):
                self.counts["unchanged"] += 1
            else:  # new, changed, or skipped last time (the cause may be fixed: try again)
                todo.append((source, state))
        if not interrupted:
            interrupted = self._index(todo)
        if not interrupted:
            gone = sorted(set(known) - {s.path for s in sources})
            for done, path in enumerate(gone, start=1):
                self.store.delete_file(path)
                self.progress(Progress("delete", done, len(gone), path))
            self.counts["deleted"] = len(gone)
            if self.counts["added"] + self.counts["updated"] + len(gone) > 500:
                self.store.optimize()
            if reprocess_all:
                self.store.set_meta({"pipeline_version": PIPELINE_VERSION})
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
            notices=tuple(self.notices),
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
                source.path, size=source.size, mtime_ns=source.mtime_ns, reason=reason
            )
        self.skipped.append(SkippedFile(source.path, reason))

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
                self.store.replace_vectors([(row[0], vec) for row, vec in zip(batch, vectors)])
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
        """Index changed files in batches; returns True if stopped early."""
        done = 0
        for start in range(0, len(todo), _BATCH_FILES):
            batch = todo[start : start + _BATCH_FILES]
            parsed: list[tuple[_Parsed, FileState | None]] = []
            for source, state in batch:
                item = self._parse(source, state)
                if item is not None:
                    parsed.append((item, state))
            vectors, fresh = self._vectors_for([p for p, _s in parsed])
            for item, state in parsed:
                if self.should_stop():
                    return True
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
                    for draft, digest in zip(item.drafts, item.hashes)
                ]
                self.counts["reused"] += sum(1 for h in item.hashes if h not in fresh)
                self.store.replace_file(
                    item.source.path,
                    size=item.source.size,
                    mtime_ns=item.source.mtime_ns,
                    content_hash=item.content_hash,
                    note=item.note,
                    chunks=chunks,
                )
                self.counts["updated" if state else "added"] += 1
                self.counts["chunks"] += len(chunks)
            done += len(batch)
            self.progress(Progress("index", done, len(todo), batch[-1][0].path))
            if self.should_stop() and done < len(todo):
                return True
        return False

    def _parse(self, source: SourceFile, state: FileState | None) -> _Parsed | None:
        """Read, scrub, parse and chunk one file; None if it needs no new rows."""
        try:
            loaded = read_source(source)
        except SourceError as exc:
            self._skip(source, state, str(exc))
            return None
        if (
            state is not None
            and state.status == "indexed"
            and state.content_hash == loaded.content_hash
            and not self.reprocess_all
        ):
            self.store.touch_file(state.id, size=source.size, mtime_ns=source.mtime_ns)
            self.counts["touched"] += 1
            return None
        scrubbed = scrub(loaded.text)
        self.redactions.update(scrubbed.counts)
        note = parse_note(scrubbed.text, path=source.path)
        drafts = chunk_note(note)
        hashes = [embed_hash(embedding_text(d.heading_context, d.text)) for d in drafts]
        return _Parsed(source, loaded.content_hash, note, drafts, hashes)

    def _vectors_for(
        self, parsed: Sequence[_Parsed]
    ) -> tuple[dict[bytes, np.ndarray], set[bytes]]:
        """A vector for every chunk hash in the batch, and which of them were newly embedded
        (the rest are reused from any stored chunk that embedded the same text)."""
        texts: dict[bytes, str] = {}
        for item in parsed:
            for draft, digest in zip(item.drafts, item.hashes):
                texts.setdefault(digest, embedding_text(draft.heading_context, draft.text))
        vectors = self.store.vectors_by_hash(texts)
        missing = [h for h in texts if h not in vectors]
        if missing:
            vectors.update(zip(missing, self.embedder().embed([texts[h] for h in missing])))
        return vectors, set(missing)
