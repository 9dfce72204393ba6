"""The knowledge base behind the study app: the index's files with their categories,
uploads, deletions, and ingestion with a live step timeline per file.

Reads go through a small pool of read-only ``Index`` objects (one per worker thread at a
time; WAL lets them read while indexing writes). Every write — indexing and deleting — runs
on ONE writer thread with its own ``Index``, in the order asked, so two uploads never race.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from ..config import Config
from ..contract import SearchRequest
from ..engine import Index
from ..errors import IndexClosedError, NotFoundError, QueryError
from ..index.names import shown_path
from ..records import Progress, SearchFilter, SearchResponse
from ..search.filters import parse_filter
from .catalogue import DocumentQuery, Listing, ListingRow, build_entries, skipped_on_purpose
from .storage import StudyStore
from .uploads import UploadError, UploadSink, is_upload, remove_stale_parts, upload_file

IndexFactory = Callable[[], Index]


class ReaderPool:
    """Up to ``size`` Index objects, each lent to one thread at a time.

    Closing never touches an index that is out on loan: an apsw connection closed while
    another thread is inside a statement raises ``ThreadingViolationError`` (the start-up
    warm-up still searching at shutdown did exactly that). Idle indexes close at once; a
    lent one is closed by its borrower as it comes back. Nothing waits for borrowers, so a
    slow search cannot hang shutdown, and no index is lent after ``close``."""

    def __init__(self, factory: IndexFactory, size: int = 3) -> None:
        self.factory = factory
        self.size = size
        self.idle: list[Index] = []
        self.opened = 0
        """Indexes that exist (idle or lent), or are being opened."""
        self.closed = False
        self.changed = threading.Condition()

    @contextmanager
    def borrow(self) -> Iterator[Index]:
        """An index for this thread alone until the block ends (raises
        :class:`IndexClosedError` once the pool is closed)."""
        index = self._take()
        try:
            yield index
        finally:
            self._give_back(index)

    def _take(self) -> Index:
        with self.changed:
            while True:
                if self.closed:
                    raise IndexClosedError("the study app is shutting down", hint="start it again")
                if self.idle:
                    return self.idle.pop()
                if self.opened < self.size:
                    self.opened += 1
                    break
                self.changed.wait()
        try:  # outside the lock: opening may wait for the database (see db.open_connection)
            return self.factory()
        except BaseException:
            with self.changed:
                self.opened -= 1
                self.changed.notify()
            raise

    def _give_back(self, index: Index) -> None:
        with self.changed:
            if not self.closed:
                self.idle.append(index)
                self.changed.notify()
                return
            self.opened -= 1
        index.close()  # the pool closed while it was lent: close it here, where it was used

    def close(self) -> None:
        with self.changed:
            self.closed = True
            idle, self.idle = self.idle, []
            self.opened -= len(idle)
            self.changed.notify_all()  # borrowers waiting for an index get IndexClosedError
        for index in idle:
            index.close()


class Broadcast:
    """Fan events out from any thread to asyncio subscribers (one queue each)."""

    def __init__(self) -> None:
        self.subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]] = set()
        self.lock = threading.Lock()

    def subscribe(self) -> asyncio.Queue[dict[str, Any]]:
        q: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1000)
        with self.lock:
            self.subscribers.add((asyncio.get_running_loop(), q))
        return q

    def unsubscribe(self, q: asyncio.Queue[dict[str, Any]]) -> None:
        with self.lock:
            self.subscribers = {s for s in self.subscribers if s[1] is not q}

    def publish(self, event: dict[str, Any]) -> None:
        with self.lock:
            targets = list(self.subscribers)
        for loop, q in targets:
            try:
                loop.call_soon_threadsafe(_offer, q, event)
            except RuntimeError:  # the loop has closed: a subscriber that went away
                self.unsubscribe(q)


def _offer(q: asyncio.Queue[dict[str, Any]], event: dict[str, Any]) -> None:
    if not q.full():
        q.put_nowait(event)


class Ingestor:
    """The one writer: a thread that runs index syncs and deletions in order, keeping a
    step timeline for every file it was asked about."""

    def __init__(self, factory: IndexFactory, store: StudyStore, broadcast: Broadcast) -> None:
        self.factory = factory
        self.store = store
        self.broadcast = broadcast
        self.jobs: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.tasks: queue.Queue[tuple[str, str | None, threading.Event | None]] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="vaultseek-writer", daemon=True)
        self.stopping = False
        self.last_error: str | None = None
        """Why the latest indexing run failed (None once one succeeds): a run with no upload
        behind it, such as the start-up sync, has no timeline to report on."""
        self.idle = threading.Event()
        self.idle.set()
        self.generation = 0
        """Runs and deletions done: the knowledge base's list is made again after each."""
        self.thread.start()

    # -- asking -------------------------------------------------------------------------
    def sync(self, path: str | None = None) -> threading.Event:
        """Index the vault (incrementally); ``path`` gets a timeline. Returns an event set
        when the run is over."""
        if path is not None:
            self._step(path, "queued", status="queued")
        return self._put("sync", path)

    def delete(self, path: str) -> threading.Event:
        self._step(path, "deleting", status="deleting")
        return self._put("delete", path)

    def _put(self, kind: str, path: str | None) -> threading.Event:
        finished = threading.Event()
        self.idle.clear()
        self.tasks.put((kind, path, finished))
        return finished

    def close(self) -> None:
        self.stopping = True
        self.tasks.put(("stop", None, None))
        self.thread.join(timeout=10)

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(job, steps=list(job["steps"])) for job in self.jobs.values()]

    # -- the timeline -------------------------------------------------------------------
    def _step(self, path: str, step: str, *, detail: str = "", status: str | None = None,
              replace_last: bool = False) -> None:  # fmt: skip
        with self.lock:
            job = self.jobs.setdefault(path, {"path": path, "status": "queued", "steps": [], "error": None})
            entry = {"step": step, "detail": detail, "at": round(time.time(), 3)}
            if replace_last and job["steps"] and job["steps"][-1]["step"] == step:
                job["steps"][-1] = entry
            else:
                job["steps"].append(entry)
            if status is not None:
                job["status"] = status
            if step in ("failed", "skipped"):
                job["error"] = detail
            event = dict(job, steps=list(job["steps"]))
        self.broadcast.publish(event)

    # -- the writer thread --------------------------------------------------------------
    def _run(self) -> None:
        index: Index | None = None
        while True:
            kind, path, finished = self.tasks.get()
            if kind == "stop":
                break
            batch = [(kind, path, finished)]
            if kind == "sync":  # later uploads ride along with this run
                while True:
                    try:
                        more = self.tasks.get_nowait()
                    except queue.Empty:
                        break
                    if more[0] != "sync":
                        self.tasks.put(more)
                        break
                    batch.append(more)
            try:
                if index is None:
                    index = self.factory()
                if kind == "delete":
                    assert path is not None
                    self._delete(index, path)
                else:
                    self._sync(index, [p for _k, p, _f in batch if p is not None])
                self.last_error = None
            except Exception as exc:  # noqa: BLE001 - reported on the timeline, never lost
                self.last_error = str(exc) or type(exc).__name__
                for _k, p, _f in batch:
                    if p is not None:
                        self._step(p, "failed", detail=str(exc), status="failed")
                if index is not None:
                    index.close()
                    index = None
            finally:
                self.generation += 1
                for _k, _p, done in batch:
                    if done is not None:
                        done.set()
                if self.tasks.empty():
                    self.idle.set()
        if index is not None:
            index.close()

    def _sync(self, index: Index, paths: list[str]) -> None:
        watched = set(paths)
        for path in paths:
            self._step(path, "indexing", status="indexing")
        last = {"t": 0.0}

        def progress(event: Progress) -> None:
            if event.path in watched and event.phase in ("extract", "ocr"):
                now = time.monotonic()
                if now - last["t"] > 0.1 or event.done == event.total:
                    last["t"] = now
                    label = "reading pages" if event.phase == "extract" else "OCR"
                    self._step(event.path, label, detail=f"page {event.done} of {event.total}", replace_last=True)
            elif event.phase == "embed" and watched:
                for path in watched:
                    self._step(path, "embedding", detail=f"{event.done} of {event.total}", replace_last=True)

        report = index.sync(progress=progress, should_stop=lambda: self.stopping, remember=False)
        if report.chunks_written and index.config.deep_tier:
            from ..embeddings.deep import deep_model_unavailable
            from ..index.deep_queue import enqueue

            if deep_model_unavailable(index.config.deep_model) is None:  # the background worker gives the new chunks deep vectors
                enqueue(index.config)
        states = index.store.file_states(paths)
        for path in paths:
            state = states.get(path)
            if state is None:
                self._step(path, "failed", detail="the file is no longer in the vault", status="failed")
            elif state.status == "skipped":
                reason = state.error or "skipped"
                verdict = "skipped" if skipped_on_purpose(reason) else "failed"
                self._step(path, verdict, detail=reason, status=verdict)
            else:
                chunks = len(index.store.chunk_ids_of_files([path]))
                self._step(path, "done", detail=f"{chunks} chunks", status="indexed")

    def _delete(self, index: Index, path: str) -> None:
        upload_file(index.config, path).unlink(missing_ok=True)  # a symlink: the link, not its target
        index.forget(path)
        self.store.rename_path(path, None)
        self._step(path, "deleted", status="deleted")


MAX_CATEGORY_CHARS = 80


def category_name(text: str | None) -> str | None:
    """A category as stored: trimmed, at most :data:`MAX_CATEGORY_CHARS` characters, no
    control characters; None for none. The one rule for uploads and for filing a document
    later (raises :class:`QueryError`)."""
    name = (text or "").strip()
    if not name:
        return None
    if len(name) > MAX_CATEGORY_CHARS:
        raise QueryError(f"a category name has at most {MAX_CATEGORY_CHARS} characters")
    if any(ch < " " or ch == "\x7f" for ch in name):
        raise QueryError("a category name cannot hold control characters")
    return name


OCR_BLOCKED = "OCR cannot run, so pages without a text layer wait for it: "
"""How the OCR check's explanation begins; a file's reason says the first half itself."""

ON_CONFLICT = ("replace", "keep_both")
"""What an upload may do when its name is taken: take the name, or be stored beside it."""


class UploadConflictError(UploadError):
    """An upload whose name is taken, sent without saying what to do (HTTP 409): ``conflict``
    names it and the file it would meet."""

    status = 409

    def __init__(self, name: str, existing: str) -> None:
        super().__init__(f"{name} is in the knowledge base already ({shown_path(existing)})",
                         hint="send it again with on_conflict=replace or on_conflict=keep_both")  # fmt: skip
        self.conflict = {"name": name, "existing": shown_path(existing)}


@dataclass(frozen=True, slots=True)
class StoredUpload:
    """A file an upload stored: its path, the name it was sent as, the sha256 of its bytes,
    and the path it is to replace (None: it keeps its own)."""

    path: str
    name: str
    digest: str
    replaces: str | None


class HashedUpload:
    """An :class:`UploadSink` that hashes the bytes as they pass and records what it stored."""

    def __init__(self, sink: UploadSink, name: str, replaces: str | None, into: list[StoredUpload]) -> None:
        self.sink = sink
        self.name = name
        self.replaces = replaces
        self.into = into
        self.hash = hashlib.sha256()
        self.temp = sink.temp
        """The hidden file the bytes go to until the upload is complete."""

    def write(self, data: bytes) -> None:
        self.sink.write(data)
        self.hash.update(data)

    def abort(self) -> None:
        self.sink.abort()

    def commit(self) -> str:
        path = self.sink.commit()
        self.into.append(StoredUpload(path, self.name, self.hash.hexdigest(), self.replaces))
        return path


class KnowledgeBase:
    """What the study app knows and can change about the vault's files."""

    def __init__(self, config: Config, factory: IndexFactory, store: StudyStore) -> None:
        self.config = config
        self.store = store
        self.readers = ReaderPool(factory)
        self.broadcast = Broadcast()
        self.ingest = Ingestor(factory, store, self.broadcast)
        self.closing = threading.Event()
        self.warmer: threading.Thread | None = None
        self._ocr_blocker: str | None = None
        self.recent_uploads: dict[str, str] = {}
        """sha256 of an upload's bytes → its path, until the index holds it (a second copy
        sent before the first is indexed is a duplicate too)."""
        self.uploads_lock = threading.Lock()
        self._listing: tuple[Any, int, Listing] | None = None
        self.filed = 0
        """Changes of categories made through this object (files filed, uploads filed, files
        deleted): the kept list is made again after one."""
        self._checked: dict[int, tuple[tuple[int, int], int]] = {}
        """Per reader connection: (its data version, the writer's runs) when it last found the
        kept list current, and which list that was (by ``_builds``, the lists made so far)."""
        self._builds = 0
        self.listing_lock = threading.Lock()
        self._upload_prefix = config.upload_folder.strip("/") + "/"

    def start(self) -> None:
        """Index the vault in the background, then warm a reader.

        The warm-up waits for that first run: before it, the vectors it would load are not
        written yet, and opening a reader beside the writer's first open of a new index is
        the race that once cost the whole first run (see ``db.open_connection``)."""
        remove_stale_parts(self.config)  # uploads a stopped server never finished
        synced = self.ingest.sync()
        self.warmer = threading.Thread(target=self._warm_after, args=(synced,), name="vaultseek-warm", daemon=True)
        self.warmer.start()

    def close(self) -> None:
        """Stop the writer and the warm-up (each given a bounded wait), then the readers."""
        self.closing.set()
        self.ingest.close()  # an unfinished first run ends as interrupted, which wakes the warm-up
        if self.warmer is not None:
            self.warmer.join(timeout=10)
        self.readers.close()

    def _warm_after(self, synced: threading.Event) -> None:
        synced.wait()
        if not self.closing.is_set():
            self.warm()

    def warm(self) -> None:
        """Load the model and the vectors into a reader now, so the first question is fast."""
        try:
            with self.readers.borrow() as index:
                index.search("warm up", k=1, rerank=False, expand=False)
            self.listing()  # and the knowledge base's list, so its first page is quick too
        except Exception:  # noqa: BLE001 - a cold start is slower, not broken; the real call reports
            pass

    # -- reading ------------------------------------------------------------------------
    def listing_rows(self) -> list[ListingRow]:
        """Every file the index knows, one compact row each (see :class:`ListingRow`)."""
        with self.readers.borrow() as index:
            return [ListingRow(*row) for row in index.store.file_listing()]

    def listing(self) -> Listing:
        """Every file the knowledge base shows, with its true status (see ``catalogue``), the
        ingestion jobs in flight laid over it. The list is made again only when the index or
        the categories changed since: each reader connection notes the index's data version
        it last checked the list against, and only a new one costs a look at the files table."""
        with self.readers.borrow() as index:
            store = index.store
            seen = (store.data_version(), self.ingest.generation)
            with self.listing_lock:
                cached = self._listing
                checked = self._checked.get(id(store))
                filed = self.filed
            fresh = cached is not None and cached[1] == filed
            if fresh and checked != (seen, self._builds):
                assert cached is not None
                fresh = cached[0] == (self.ingest.generation, store.file_listing_version())
            if not fresh or cached is None:
                version = (self.ingest.generation, store.file_listing_version())
                categories = self.store.categories()
                rows = [ListingRow(*row) for row in store.file_listing()]
                built = Listing(build_entries(rows, categories=categories, deletable=self._deletable,
                                              ocr_blocker=self.ocr_blocker, shown=shown_path))  # fmt: skip
                cached = (version, filed, built)
            with self.listing_lock:
                if cached is not self._listing:
                    self._listing = cached
                    self._builds += 1
                self._checked[id(store)] = (seen, self._builds)
        assert cached is not None
        jobs = {job["path"]: job for job in self.ingest.snapshot()}
        read: list[dict[str, str]] = []

        def category_of(path: str) -> str | None:  # asked only for an upload the index does not hold yet
            if not read:
                read.append(self.store.categories())
            return read[0].get(path)

        return cached[2].with_jobs(jobs, category_of, self._deletable)

    def _deletable(self, path: str) -> bool:
        return path.startswith(self._upload_prefix) and is_upload(path, self.config)

    def list_documents(self, query: DocumentQuery) -> dict[str, Any]:
        """One page of the list: ``{total, offset, limit, items}`` (``total`` counts every
        file that matches, not only the page)."""
        total, page = self.listing().select(query)
        return {"total": total, "offset": query.offset, "limit": query.limit,
                "items": [entry.to_dict() for entry in page]}  # fmt: skip

    def tree(self) -> dict[str, Any]:
        """Folders with their file counts, categories, and counts by status and kind."""
        return self.listing().tree()

    def documents(self) -> list[dict[str, Any]]:
        """Every file of the list, unpaged (the chat's list-documents tool)."""
        return [entry.to_dict() for entry in self.listing().entries]

    def category_counts(self) -> list[dict[str, Any]]:
        counts: dict[str, int] = {}
        for category in self.store.categories().values():
            counts[category] = counts.get(category, 0) + 1
        return [{"name": name, "documents": n} for name, n in sorted(counts.items())]

    def ocr_blocker(self) -> str:
        """Why pages wait for OCR, with the fix (worked out once: it asks the OCR engines)."""
        if self._ocr_blocker is None:
            if not self.config.ocr:
                self._ocr_blocker = "OCR is switched off (set ocr = true to read them)"
            else:
                # the OCR check: only when a page waits for it
                from ..documents.extraction import OcrSettings

                settings = OcrSettings(enabled=True, languages=self.config.ocr_languages,
                                       max_pages=self.config.ocr_max_pages_per_document,
                                       engine=self.config.ocr_engine)  # fmt: skip
                blocker = settings.blocker() or "OCR reads them at the next index run"
                self._ocr_blocker = blocker.removeprefix(OCR_BLOCKED)
        return self._ocr_blocker

    def chunks(self, path: str) -> list[dict[str, Any]]:
        with self.readers.borrow() as index:
            rows = index.get_note(path)
        return [
            {"id": r.id, "position": r.position, "section": r.section, "text": r.text,
             "location": r.location.to_dict() if r.location else None,
             "label": r.location.label() if r.location else r.section}
            for r in rows
        ]  # fmt: skip

    def _knows(self, path: str) -> bool:
        """Whether the index holds ``path`` (indexed or skipped)."""
        with self.readers.borrow() as index:
            return bool(index.store.file_states([path]))

    def known_paths(self) -> set[str]:
        with self.readers.borrow() as index:
            return {row["path"] for row in index.files()}

    def scope_filter(self, scope: dict[str, Any] | None) -> SearchFilter:
        """A request's scope → the engine's filter; categories become the paths filed under
        them (united with any paths named directly)."""
        scope = dict(scope or {})
        categories = scope.pop("categories", None)
        try:
            base = parse_filter({k: v for k, v in scope.items() if v not in (None, [], "")})
        except QueryError as exc:
            raise QueryError(f"bad scope: {exc.message}", hint=exc.hint) from exc
        with self.readers.borrow() as index:  # (an index still empty is being built: no verdict)
            misses = index.filter_misses(base) if index.store.chunk_count() else []
        if misses:  # a scope that names nothing would send the model no sources at all
            raise QueryError(f"bad scope: {misses[0]}", hint="pick folders, tags and types from the library")
        return self.in_categories(base, categories)

    def in_categories(self, base: SearchFilter | None, categories: Any) -> SearchFilter:
        """``base`` with the paths filed under ``categories`` (a name or a list of names; None
        or empty: ``base`` as it is) united with the paths it names directly."""
        base = base or SearchFilter()
        if isinstance(categories, str):
            categories = [categories]
        if categories is not None and (
            not isinstance(categories, list) or not all(isinstance(c, str) for c in categories)
        ):
            raise QueryError("bad scope: categories must be a list of strings")
        if categories:
            paths = tuple(dict.fromkeys((*self.store.paths_in(categories), *(base.paths or ()))))
            base = replace(base, paths=paths)
        return base

    def search(self, query: str | SearchRequest, scope: SearchFilter | None = None, **options: Any) -> SearchResponse:
        """A search on a reader: a :class:`SearchRequest`, or a query, its scope and the
        request's other fields as keywords (``mode``, ``k``, the signals)."""
        with self.readers.borrow() as index:
            if isinstance(query, SearchRequest):
                return index.search(query)
            return index.search(query, filters=scope, **options)

    def status(self) -> dict[str, Any]:
        with self.readers.borrow() as index:
            status = index.status()
        return {"vault": status.vault, "files": status.files, "chunks": status.chunks,
                "documents": status.documents, "last_indexed": status.last_indexed,
                "indexing_error": self.ingest.last_error}  # fmt: skip

    # -- changing -----------------------------------------------------------------------
    def open_upload(self, name: str, *, on_conflict: str | None = None,
                    into: list[StoredUpload] | None = None) -> HashedUpload:  # fmt: skip
        """A sink for one uploaded file. A name already in the upload folder raises
        :class:`UploadConflictError` unless ``on_conflict`` says what to do: ``replace`` (the
        new bytes take the name once complete) or ``keep_both`` (stored as ``name (2).ext``).
        Each file stored is appended to ``into``, for :meth:`settle_uploads`."""
        if on_conflict not in (None, *ON_CONFLICT):
            raise QueryError(f"unknown on_conflict {str(on_conflict)[:40]!r}", hint="on_conflict is replace or keep_both")
        sink = UploadSink(self.config, name)
        existing = sink.folder / sink.name
        replaces = None
        if os.path.lexists(existing):
            assert self.config.vault is not None
            taken = existing.relative_to(self.config.vault.resolve()).as_posix()
            if on_conflict is None:
                sink.abort()
                raise UploadConflictError(sink.name, taken)
            if on_conflict == "replace":
                if not os.path.isfile(existing) or os.path.islink(existing):
                    sink.abort()
                    raise UploadError(f"{taken} is not a plain file; it cannot be replaced",
                                      hint="upload it with on_conflict=keep_both")  # fmt: skip
                replaces = taken
        return HashedUpload(sink, sink.name, replaces, into if into is not None else [])

    def settle_uploads(self, stored: list[StoredUpload]) -> tuple[list[str], list[dict[str, str]]]:
        """Check the files an upload stored, in order: one whose bytes the knowledge base holds
        already (indexed, or uploaded moments ago) is removed again and reported as a duplicate
        (``{name, duplicate_of}``) rather than indexed twice; one sent to replace a file takes
        its name now. Returns (the paths to index, the duplicates)."""
        assert self.config.vault is not None
        vault = self.config.vault.resolve()
        kept: list[str] = []
        duplicates: list[dict[str, str]] = []
        for upload in stored:
            original = self._duplicate_of(upload.digest)
            if original is not None:
                upload_file(self.config, upload.path).unlink(missing_ok=True)
                duplicates.append({"name": upload.name, "duplicate_of": shown_path(original)})
                continue
            path = upload.path
            if upload.replaces is not None:
                os.replace(vault / upload.path, vault / upload.replaces)
                path = upload.replaces
            with self.uploads_lock:
                for digest in [d for d, p in self.recent_uploads.items() if p == path]:
                    del self.recent_uploads[digest]
                self.recent_uploads[upload.digest] = path
            kept.append(path)
        return kept, duplicates

    def _duplicate_of(self, digest: str) -> str | None:
        """An indexed file, or an upload not indexed yet, with these bytes (None if none)."""
        assert self.config.vault is not None
        with self.uploads_lock:
            recent = self.recent_uploads.get(digest)
        if recent is not None and (self.config.vault / recent).is_file():
            return recent
        with self.readers.borrow() as index:
            same = index.store.paths_with_hash(digest)
        return same[0] if same else None

    def add_uploads(self, paths: list[str], category: str | None = "") -> None:
        """File stored uploads under ``category`` (if any) and queue them for indexing. The
        files are queued even when the category is refused: they are in the vault already."""
        try:
            name = category_name(category)
        finally:
            for path in paths:
                self.ingest.sync(path)
        if name is not None:
            for path in paths:
                self.store.set_category(path, name)
            with self.listing_lock:
                self.filed += 1

    def set_category(self, path: str, category: str | None) -> str | None:
        """File ``path`` under ``category`` (None or blank: under none); returns the name as
        stored."""
        name = category_name(category)
        if not self._knows(path):
            raise NotFoundError(f"{path} is not in the knowledge base")
        self.store.set_category(path, name)
        with self.listing_lock:
            cached = self._listing
            self.filed += 1
            if cached is not None and cached[1] == self.filed - 1:  # the kept list was current: file it there too
                refiled = cached[2].refiled(shown_path(path), name)
                self._listing = None if refiled is None else (cached[0], self.filed, refiled)
        return name

    def delete(self, path: str) -> threading.Event:
        """Delete an upload (see :func:`upload_file`: a file in the upload folder; a symlink
        there loses the link, never its target) and its chunks, on the writer thread."""
        if not is_upload(path, self.config):
            raise UploadError(
                f"{path} is not an upload; the app only deletes files it was given",
                hint="remove it from the vault folder yourself; the next index run drops it",
            )
        if not self._knows(path) and path not in {j["path"] for j in self.ingest.snapshot()}:
            raise NotFoundError(f"{path} is not in the knowledge base")
        upload_file(self.config, path)  # refused now rather than failing on the writer thread
        return self.ingest.delete(path)
