"""The knowledge base behind the study app: the one object its HTTP routes, chat and study hub
call to list the index's files with their categories, search them, take uploads, file and
delete documents, and report status.

It puts together the parts that do the work: reads borrow an ``Index`` from a
:class:`~.readers.ReaderPool`; every write (indexing, deleting) goes to the one writer thread,
:class:`~.ingestion.Ingestor`; uploads are checked and settled by :class:`~.uploads.Uploads`;
the list itself is made by :mod:`.catalogue`, and kept here until the index or the categories
change.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from ..config import Config
from ..contract import SearchRequest
from ..errors import NotFoundError, QueryError
from ..index.names import shown_path
from ..records import SearchFilter, SearchResponse
from ..search.filters import parse_filter
from .catalogue import (
    MAX_CATEGORY_CHARS,
    DocumentQuery,
    Listing,
    ListingRow,
    build_entries,
    category_name,
)
from .ingestion import Broadcast, Ingestor
from .readers import IndexFactory, ReaderPool
from .storage import StudyStore
from .uploads import (
    ON_CONFLICT,
    HashedUpload,
    StoredUpload,
    UploadConflictError,
    UploadError,
    Uploads,
    is_upload,
    remove_stale_parts,
    upload_file,
)

__all__ = [
    "MAX_CATEGORY_CHARS",
    "OCR_BLOCKED",
    "ON_CONFLICT",
    "Broadcast",
    "HashedUpload",
    "IndexFactory",
    "Ingestor",
    "KnowledgeBase",
    "ReaderPool",
    "StoredUpload",
    "UploadConflictError",
    "category_name",
]
"""The facade, and the names it is built from (importable from here as from their own modules)."""

OCR_BLOCKED = "OCR cannot run, so pages without a text layer wait for it: "
"""How the OCR check's explanation begins; a file's reason says the first half itself."""


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
        self.uploads = Uploads(config, self.readers)
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
        written yet, and a reader opened beside the writer's first open of a new index can
        make that first run fail (see ``db.open_connection``)."""
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
        """A sink for one uploaded file (see :meth:`Uploads.open`: a name already taken raises
        :class:`UploadConflictError` unless ``on_conflict`` is ``replace`` or ``keep_both``)."""
        return self.uploads.open(name, on_conflict=on_conflict, into=into)

    def settle_uploads(self, stored: list[StoredUpload]) -> tuple[list[str], list[dict[str, str]]]:
        """Drop the stored files whose bytes the knowledge base holds already; let the ones
        sent to replace a file take its name (see :meth:`Uploads.settle`). Returns (the paths
        to index, the duplicates)."""
        return self.uploads.settle(stored)

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
