"""The one object every surface uses: open an index, sync it, search it, read from it.

    with open_index("~/vault", create=True) as index:
        index.sync()
        for note in index.search("rotate oauth tokens").notes:
            print(note.path, note.title, [section.label for section in note.sections])

The CLI, and later the MCP server, hooks and web app, are thin adapters over this class. It
loads the embedding model and the vector matrix lazily, so BM25-only work never pays for them,
and reloads the matrix when another process has written to the index.
"""

from __future__ import annotations

import os
import posixpath
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from .config import Config, load_config
from .contract import SearchRequest
from .embeddings.static import StaticEmbedder
from .errors import (
    ConfigError,
    EmbeddingServerError,
    IndexAccessError,
    MapUnavailableError,
    ModelError,
    NotFoundError,
    QueryError,
    VaultNotFoundError,
    VaultseekError,
)
from .index.activity import note_interactive
from .index.names import MARKER, matching_paths, shown_path
from .places import VaultRegistry
from .records import DeepState, SearchFilter, SearchResponse, SearchResult, SkippedFile
from .search.candidates import deep_window
from .search.expansion import Expander
from .search.hybrid import VectorsUnavailable, run_search
from .search.linkgraph import LinkGraph
from .search.params import SearchParams
from .search.rerank import RerankerLike, skipped
from .search.sides import Sides
from .storage import db
from .storage.migrations import migrate
from .storage.store import ChunkRow, Store, utc_now
from .storage.vectors import VectorIndex


def _on_postgres(store: Store) -> TypeGuard[PgStore]:
    """Whether ``store`` is the PostgreSQL backend's (its module, and the driver's, are
    imported only by an index that lives there: a fresh SQLite search need not load them)."""
    return store.backend == "postgresql"


def _file_writer_lock(db_path: Path) -> WriterLock:
    """The SQLite index's writer lock, its module (``fcntl``, ``shlex``) imported by the first
    sync that takes it rather than by every search."""

    def lock(**kwargs: Any) -> AbstractContextManager[bool]:
        from .storage.writer_lock import file_writer_lock

        return file_writer_lock(db_path)(**kwargs)

    return lock


if TYPE_CHECKING:
    from .embeddings.deep import DeepModel
    from .index.deepening import DeepProgressCallback
    from .index.sync import ProgressCallback, StopCheck
    from .links.extract import Extract
    from .reports import (
        DeepReport,
        DeepStatus,
        IndexStatus,
        MapNote,
        MapRequest,
        MissingLink,
        NoteLinks,
        RelatedNotes,
        ResolvedLink,
        SyncReport,
        VaultMap,
    )
    from .search.relevance import Evidence
    from .storage.postgres.store import PgStore
    from .storage.writer_lock import LockHolder, WriterLock

# Indexing (sync: markdown, chunking, credential scrubbing, document readers), links, related
# notes and extracts are imported where they are used: a fresh `vaultseek search` or hook
# needs none of them, and they were ~100 ms of its start-up.


class Index:
    """A vault's index. Not thread-safe: use one per thread (they may share the file)."""

    def __init__(self, config: Config, *, create: bool = False, read_only: bool = False) -> None:
        if config.vault is None or config.db is None:
            raise ValueError("config.vault and config.db must be resolved (use load_config)")
        self.config = config
        self.vault: Path = config.vault
        self.db_path: Path = config.db
        self.database_url: str | None = config.database_url
        """The PostgreSQL database holding the index (``config.collection`` names it there),
        or None: the SQLite file ``db_path``."""
        self.store: Store
        if self.database_url is not None:
            self.store = self._open_postgres(self.database_url, read_only=read_only)
            self.read_only = read_only
        else:
            self.store = self._open_sqlite(create=create, read_only=read_only)
            self.read_only = db.is_read_only(self.conn)
        """Opened for reading only (asked for, or this user cannot write the index): search,
        status, links and related work; :meth:`sync` raises :class:`IndexAccessError`."""
        self._sides = Sides(self.store, config)
        """The static and deep models and vectors searches read, kept loaded."""
        self.clock: Callable[[], float] = time.time
        """What "now" is for recency and relative dates, unless a search names its own
        (tests set a fixed one)."""
        self._graph: LinkGraph | None = None
        self._graph_version: int | None = None
        self._models: dict[str, Any] = {}
        """The reranker and the expander, built on the first search that asks for each."""
        self.writer_lock: WriterLock = (
            self.store.sync_lock if _on_postgres(self.store) else _file_writer_lock(self.db_path)
        )
        """The index's one-writer lock, which :meth:`sync` holds while it writes (a backend
        on a database server provides its own, e.g. an advisory lock)."""

    def _open_sqlite(self, *, create: bool, read_only: bool) -> Store:
        conn = db.open_connection(self.db_path, create=create, read_only=read_only)
        try:
            with self._database_errors():
                self.schema_version = migrate(conn, read_only=db.is_read_only(conn))
        except BaseException:
            conn.close()
            raise
        return Store(conn)

    def _open_postgres(self, url: str, *, read_only: bool) -> Store:
        """The collection's store in the PostgreSQL database at ``url`` (created on first
        use, with the ``vector`` extension, unless ``read_only``)."""
        from .storage.postgres.connection import connect, ensure_pgvector
        from .storage.postgres.store import PgStore

        # The index lives in the database; local state beside db_path (the deep job's lock
        # and log, the study database) gets a private folder.
        self.db_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        conn = connect(url, read_only=read_only)
        try:
            with self._database_errors():
                if not read_only:
                    ensure_pgvector(conn)
                store = PgStore(conn, self.config.collection, read_only=read_only)
        except BaseException:
            conn.close()
            raise
        self.schema_version = store.schema_version
        return store

    @property
    def conn(self) -> db.Connection:
        """The SQLite connection (the SQLite backend only)."""
        return self.store.conn

    def backend_info(self) -> dict[str, str]:
        """Where the index lives, for ``status``: the backend and, on PostgreSQL, the
        database (without its password), collection, server and pgvector versions, size and
        how vectors are searched."""
        store = self.store
        if not _on_postgres(store) or self.database_url is None:
            return {"backend": "sqlite"}
        from .storage.postgres.connection import display_url, server_info
        from .storage.postgres.store import HNSW_MIN_CHUNKS

        with self._database_errors():
            server = server_info(store.pg)
            size = sum(store.sizes().values())
            hnsw = store.vector_index_exists()
        return {
            "backend": "postgresql",
            "database": display_url(self.database_url),
            "collection": store.collection,
            "server": server.version,
            "pgvector": server.pgvector or "not installed",
            "size": f"{size / 1e6:.1f} MB",
            "vectors": "HNSW index" if hnsw else f"exact, in memory (HNSW from {HNSW_MIN_CHUNKS:,} chunks)",
        }

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.store.backend

    @contextmanager
    def _database_errors(self) -> Iterator[None]:
        """Re-raise database failures (locked, read-only, damaged, a server gone, …) as
        vaultseek errors that name this index; anything else passes through untouched."""
        try:
            yield
        except Exception as exc:
            if self.database_url is not None:
                from .storage.postgres.connection import translate

                translated = translate(exc, self.database_url)
            else:
                translated = db.translate(exc, self.db_path)
            if translated is exc:
                raise
            raise translated from exc

    # -- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        self._sides.close()
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- models -------------------------------------------------------------------------
    def embedder(self) -> StaticEmbedder:
        """The configured static model, loaded on first use (raises :class:`ModelError`)."""
        return self._sides.embedder()

    def deep_model(self) -> DeepModel:
        """The deep tier's configured model, loaded on first use (raises :class:`ModelError`;
        an embedding server that failed is asked again after a while)."""
        return self._sides.deep_model()

    # -- indexing -----------------------------------------------------------------------
    def sync(
        self,
        *,
        paths: Iterable[str | os.PathLike[str]] | None = None,
        progress: ProgressCallback | None = None,
        should_stop: StopCheck | None = None,
        remember: bool = True,
        wait: float | None = None,
        on_wait: Callable[[LockHolder], None] | None = None,
    ) -> SyncReport:
        """Bring the index in line with the vault's files (incremental).

        ``paths`` limits the run to those files — absolute, or relative to the vault; each is
        indexed, re-indexed, recorded as skipped or removed as it now is on disk, exactly as a
        full run would (the vault's include and exclude rules, size caps, documents, links),
        and no other file is looked at: what a watcher that was told which files changed
        needs, at a few milliseconds instead of a walk of the vault. Paths outside the vault
        are ignored. The run is a full one after all when a path is or was a folder, or the
        pipeline changed (``report.full`` says which it was). A run over paths that changed
        nothing writes nothing, so readers keep their cached vectors.

        ``remember`` records the vault as the user's most recent one (so a bare
        ``vaultseek search`` finds it); scratch indexes such as evaluations pass False.

        One process writes an index at a time (``storage/writer_lock.py``): while another
        syncs it, this one waits — ``on_wait`` hears who holds it — for at most ``wait``
        seconds (None: as long as it takes), then raises :class:`IndexBusyError`. A stop
        requested while waiting returns an interrupted report that wrote nothing."""
        if not self.vault.is_dir():
            raise VaultNotFoundError(f"vault folder {self.vault} does not exist")
        if self.read_only:
            raise IndexAccessError(
                f"cannot write the index {self.db_path}: it is open read-only",
                hint="open it without read_only, as a user who can write it",
            )
        with self.writer_lock(timeout=wait, on_wait=on_wait, should_stop=should_stop) as held:
            if not held:
                from .reports import SyncReport  # a search builds no report types

                return SyncReport(
                    interrupted=True, full=paths is None,
                    notices=("stopped while another process was writing the index; nothing was written",),
                )  # fmt: skip
            report = self._sync_locked(paths, progress, should_stop)
        if remember and not report.interrupted:
            VaultRegistry().remember(
                self.vault, self.db_path, database_url=self.database_url, collection=self.config.collection
            )
        return report

    def _sync_locked(
        self,
        paths: Iterable[str | os.PathLike[str]] | None,
        progress: ProgressCallback | None,
        should_stop: StopCheck | None,
    ) -> SyncReport:
        """:meth:`sync`'s run, once this process holds the writer lock."""
        owner = self.store.get_meta("vault")
        if owner is not None and owner != str(self.vault):
            raise ConfigError(
                f"the index {self.db_path} belongs to the vault {owner}, not {self.vault}",
                hint="pass the matching --vault, or another --db for this vault",
            )
        named = None if paths is None else self._vault_paths(paths)
        self._sides.forget_vectors()  # whatever happens below, reload the matrices next time
        self._graph = None
        from .index.sync import Syncer
        from .links.linking import relink

        with self._database_errors():
            written = self.store.total_changes()
            report = Syncer(
                self.store, self.config, self.embedder, progress=progress, should_stop=should_stop
            ).run(named)
            if report.full or owner is None or self.store.total_changes() != written:
                relink(self.store)  # links written, and links a new, renamed or gone file affects
                values = {"vault": str(self.vault)}
                if not report.interrupted:
                    values["last_indexed"] = utc_now()
                self.store.set_meta(values)
        return report

    def _vault_paths(self, paths: Iterable[str | os.PathLike[str]]) -> list[str]:
        """The vault-relative, '/'-separated form of each path inside the vault (``""`` for
        the vault folder itself); paths outside it, or climbing out with ``..``, are dropped.
        An absolute path may name the vault as configured or as resolved (a watcher reports
        paths under the resolved folder)."""
        roots = dict.fromkeys([os.path.abspath(self.vault), str(self.vault.resolve())])
        out = []
        for given in paths:
            path = os.fspath(given)
            tries = [os.path.relpath(path, root) for root in roots] if os.path.isabs(path) else [path]
            for rel in (posixpath.normpath(t.replace(os.sep, "/")) for t in tries):
                if rel != ".." and not rel.startswith("../"):
                    out.append("" if rel == "." else rel)
                    break
        return out

    def deepen(
        self,
        *,
        progress: DeepProgressCallback | None = None,
        should_stop: StopCheck | None = None,
        seconds: float | None = None,
        limit: int | None = None,
        model: DeepModel | None = None,
    ) -> DeepReport | None:
        """Give chunks without a deep vector one (see ``deepening.py``), until all have one,
        ``should_stop`` says so, ``seconds`` pass or ``limit`` texts are done. None when
        another process runs this index's deep job (it does the work). ``model`` is a deep
        model already loaded (a process serving several indexes loads it once); default:
        this index's own, loaded on first use. Raises :class:`ModelError` when the deep model
        cannot run here, :class:`ConfigError` when the tier is off."""
        from .index.deepening import deepen, take_lock
        from .search.hubs import store_probes

        if not self.config.deep_tier:
            raise ConfigError("the deep tier is off (deep_tier = false)", hint="set deep_tier = true to use it")
        try:
            if model is None:
                self._sides.forget_deep_failure()  # the job asks the server again
                model = self.deep_model()
            lock = take_lock(self.db_path)
            if lock is None:
                return None
            self._sides.forget_deep_vectors()
            try:
                with self._database_errors():
                    serving = self.store.get_meta("deep_model_fingerprint")
                    if serving in (None, model.fingerprint):  # hub probes of the vectors search uses
                        store_probes(self.store, model)
                    report = deepen(
                        self.store, model, progress=progress, should_stop=should_stop, seconds=seconds, limit=limit
                    )
                    if report.reset:
                        store_probes(self.store, model)
                    return report
            finally:
                lock.close()
        except EmbeddingServerError as exc:  # down at start or mid-job: status says why until it answers
            from .index.deepening import PROBLEM_KEY

            with self._database_errors():
                self.store.set_meta({PROBLEM_KEY: exc.message})
            raise

    def deep_status(self) -> DeepStatus | None:
        """The deep tier's coverage and job (None when the tier is off)."""
        if not self.config.deep_tier:
            return None
        from .embeddings.deep import deep_model_unavailable
        from .embeddings.server import server_host
        from .index.deep_queue import paused, queue_state
        from .index.deepening import (
            PROBLEM_KEY,
            job_running,
            pending_work,
            stored_rate,
            stored_work_rate,
        )

        with self._database_errors():
            building = bool(self.store.get_meta("deep_next_fingerprint"))
            embedded, chunks = self.store.deep_progress(building=building)
            openings_embedded, openings = self.store.deep_opening_progress(building=building)
            name = self.store.get_meta("deep_next_name" if building else "deep_model_name")
            serving = self.store.get_meta("deep_model_name") if building else None
            rate = stored_rate(self.store)
            work_rate = stored_work_rate(self.store)
            # what is left, weighed by length (timed by `python -m benchmarks.deepworker eta`)
            work_left, openings_work_left = pending_work(self.store, building=building) if embedded < chunks else (0.0, 0.0)
            problem = self.store.get_meta(PROBLEM_KEY) or None
        reason = deep_model_unavailable(self.config.deep_model)
        state: DeepState
        if reason is not None:
            state = "unavailable"
        elif embedded >= chunks:
            state, problem = "complete", None
        elif job_running(self.db_path):
            state = "running"
        elif problem is not None:
            state = "paused"
        else:
            queued = queue_state(self.db_path)
            # not queued (the watcher or the daemon synced it): under a pause nothing embeds it
            state = queued if queued is not None else "paused" if paused() else "waiting"
        from .reports import DeepStatus  # a search builds no report types

        return DeepStatus(
            model=name, chunks=chunks, embedded=embedded, state=state, rate=rate, reason=reason,
            openings=openings, openings_embedded=openings_embedded, serving_model=serving,
            host=server_host(self.config.deep_model, self.config.deep_url), problem=problem,
            work_rate=work_rate, work_left=work_left, openings_work_left=openings_work_left,
        )  # fmt: skip

    # -- searching ----------------------------------------------------------------------
    def search(self, request: SearchRequest | str, /, **options: Any) -> SearchResponse:
        """Search the index. Same index state and request → the same response.

        ``request`` is a :class:`~vaultseek.contract.SearchRequest` — what every surface
        builds from its input with ``SearchRequest.from_mapping``, checked there — or a query
        with the request's fields as keywords (``index.search("tokens", k=5, filters={"folders":
        ["work"]})``), checked the same way. Options left out take the configuration. The
        answer is the note view unless ``view="chunks"``: ``response.notes`` holds each file
        once with its best sections, ``response.results`` each note's best section (in the
        chunk view: every ranked section, ``k`` of them). ``now``
        (epoch seconds) is the moment recency and relative dates count from, for one call (an
        evaluation pins it to its corpus's date); default: :attr:`clock`. ``fusion``,
        ``candidates`` and ``deep_weight`` override the configured fusion method, list depth
        and deep list weight (the evaluation harness compares them; ``deep_weight=0`` is the
        hybrid without the deep tier). ``link_boost`` (0: off) and ``link_signal`` re-rank the
        fused list by the link graph (``linkgraph.py``); ``term_match`` (0: off) is term
        matching's share of the lexical score of the head of a hybrid list (``termmatch.py``).
        ``syntax=False`` reads the query as plain words: no ``"phrase"``, ``-word`` or ``tag:x``
        operators (``search/syntax.py``), for text that is not a typed query."""
        note_interactive()  # the deep tier's worker rests while someone searches
        if isinstance(request, SearchRequest):
            if options:
                raise TypeError("pass the options inside the SearchRequest")
        else:
            moment = options.pop("now", None)
            request = SearchRequest.create(request, now=self.clock() if moment is None else moment, **options)
        now = self.clock() if request.now is None else request.now
        config = self.config
        half_life = config.recency_half_life_days if request.recency_half_life_days is None else request.recency_half_life_days
        fusion = request.fusion if request.fusion is not None else config.fusion
        term_match = request.term_match
        if term_match is None:  # the configured strength, where it applies (convex fusion);
            term_match = config.term_match if fusion == "convex" else 0.0  # asked for, a notice
        params = SearchParams(
            mode=request.mode,
            view=request.view,
            k=request.k if request.k is not None else config.top_k,
            candidates=request.candidates if request.candidates is not None else config.candidates,
            fusion=fusion,
            rrf_k=config.rrf_k,
            bm25_weight=config.bm25_weight,
            vector_weight=config.vector_weight,
            deep_weight=config.deep_weight if request.deep_weight is None else request.deep_weight,
            max_tokens=request.max_tokens,
            scope=self._real_scope(request.filters),
            title_match=config.title_match if request.title_match is None else request.title_match,
            recency_half_life_days=float(half_life) if half_life else None,
            recency_weight=config.recency_weight,
            term_match=term_match,
            intent=config.intent if request.intent is None else request.intent,
            now=now,
            link_boost=request.link_boost if request.link_boost is not None else config.link_boost,
            link_signal=request.link_signal if request.link_signal is not None else config.link_signal,
            syntax=request.syntax is not False,
            rerank_depth=config.rerank_depth,
            rerank_weight=config.rerank_weight,
        )
        reranker, expander, notices = self._model_steps(request)
        with self._database_errors():
            response = run_search(
                self.store, request.query, params, self._sides.search_side, link_graph=self.link_graph,
                deep_side=self._sides.deep_side if config.deep_tier else None, reranker=reranker, expander=expander,
            )  # fmt: skip
        return replace(response, notices=(*notices, *response.notices)) if notices else response

    def _model_steps(self, request: SearchRequest) -> tuple[RerankerLike | None, Expander | None, list[str]]:
        """The reranker and query expansion this search asks for (the request's ``rerank`` and
        ``expand``, else the settings), built once per index; and the notices for those asked
        for that cannot run (none configured, the HTTP library not installed)."""
        config = self.config
        notices: list[str] = []
        reranker = expander = None
        if request.rerank if request.rerank is not None else config.rerank != "off":
            if config.rerank == "off":
                notices.append('reranking asked for, but no reranker is set up (rerank = "off"): see docs/models.md')
            else:
                from .search.servers import open_reranker  # a search that asks no model skips it

                try:
                    reranker = self._models.get("rerank") or self._models.setdefault("rerank", open_reranker(config))
                except VaultseekError as exc:
                    notices.append(skipped("reranking", exc))
        if request.expand if request.expand is not None else config.expand:
            from .search.servers import open_expander

            try:
                index_path = None if self.config.db is None else Path(self.config.db)
                expander = self._models.get("expand") or self._models.setdefault("expand", open_expander(config, index_path))
            except VaultseekError as exc:
                notices.append(skipped("query expansion", exc))
        return reranker, expander, notices

    def link_graph(self) -> LinkGraph:
        """The resolved link graph, rebuilt when any connection has committed since."""
        version = self.store.data_version()
        if self._graph is None or version != self._graph_version:
            with self._database_errors():
                self._graph = LinkGraph(self.store.link_edges())
            self._graph_version = version
        return self._graph

    # -- links --------------------------------------------------------------------------
    def links(self, note: str) -> NoteLinks:
        """A note's outgoing links (resolved and unresolved) and its backlinks. ``note`` is a
        vault-relative path or a name as a link would write it (raises QueryError). An
        outgoing link's ``heading_found`` says whether its ``#heading`` exists in the note it
        points at (read from the vault now: see ``anchors.py``)."""
        from .links.anchors import check_headings
        from .links.linking import get_note_path, note_links

        with self._database_errors():
            found = note_links(self.store, get_note_path(self.store, self._real_path(note), self.vault))
        found = check_headings(found, self.vault)
        outgoing = tuple(_shown_link(link) for link in found.outgoing)
        return replace(found, path=shown_path(found.path), outgoing=outgoing,
                       backlinks=tuple(_shown_link(link) for link in found.backlinks))

    def related(self, note: str, *, k: int = 10) -> RelatedNotes:
        """The ``k`` notes most related to ``note`` by links and by meaning, best first."""
        from .links.linking import get_note_path
        from .links.related import find_related

        if k < 1:
            raise QueryError("k must be at least 1")
        with self._database_errors():
            path = get_note_path(self.store, self._real_path(note), self.vault)
            notices = []
            try:
                vectors: VectorIndex | None = self._sides.vector_side()[0]
            except VectorsUnavailable as exc:
                vectors = None
                notices.append(f"similarity unavailable ({exc}); related by links only")
            deep, coverage = None, 0.0
            if self.config.deep_tier:
                try:
                    deep, _model, coverage = self._sides.deep_side()
                except (VectorsUnavailable, ModelError):
                    pass  # no deep vectors yet, from another model, or its server away: the other lists serve
            found = find_related(
                self.store, self.link_graph(), vectors, path, k=k, notices=notices, deep=deep, deep_coverage=coverage
            )
        results = tuple(
            replace(r, path=shown_path(r.path), shared=tuple(shown_path(p) for p in r.shared)) for r in found.results
        )
        return replace(found, path=shown_path(found.path), results=results)

    # -- the map ------------------------------------------------------------------------
    def vault_map(
        self, request: MapRequest | None = None, *, limit: int = 50, progress: Callable[[str], None] | None = None
    ) -> VaultMap:
        """The vault's map (``vaultseek map``): kept in the index and brought up to date on
        each call (only changed notes move), or, with ``request.filters``, made for that
        scope alone. ``limit`` caps the missing links listed. Raises
        :class:`MapUnavailableError` when the index has no vectors or too few notes."""
        from .reports import MapRequest
        from .vaultmap.service import current_map

        request = request or MapRequest()
        if limit < 0:
            raise QueryError("limit must be 0 or more")
        if request.clusters is not None and request.clusters < 1:
            raise QueryError("clusters must be at least 1")
        static, deep = self._map_vectors()
        with self._database_errors():
            only = self._paths_in(request.filters) if request.filters is not None else None
            return current_map(self.store, static, deep, request, only=only, read_only=self.read_only,
                               shown=shown_path, key=self._map_key(), limit=limit, progress=progress)  # fmt: skip

    def map_note(self, note: str, *, k: int = 10) -> MapNote:
        """``note``'s place on the map: its cluster and role, its ``k`` nearest notes (linked
        or not), and its missing links: the first ``k`` notes :meth:`related` ranks for it (by
        meaning, and by the links they share) that it does not link."""
        from .links.linking import get_note_path
        from .vaultmap.service import note_on_map

        if k < 1:
            raise QueryError("k must be at least 1")
        with self._database_errors():
            path = get_note_path(self.store, self._real_path(note), self.vault)
        related = self.related(path, k=min(2 * k + 20, 200))
        candidates = [self._real_path(r.path) for r in related.results if not r.linked]
        static, deep = self._map_vectors()
        with self._database_errors():
            return note_on_map(self.store, static, deep, path, k=k, shown=shown_path, read_only=self.read_only,
                               key=self._map_key(), candidates=candidates)  # fmt: skip

    def missing_links(self, note: str | None = None, *, limit: int = 50) -> tuple[MissingLink, ...]:
        """Pairs of notes that belong together but never link, best first, each with the two
        passages that make them close: the vault's (the closest unlinked pairs of the map), or
        ``note``'s own (as :meth:`map_note` finds them)."""
        from .vaultmap.service import missing_links

        if limit < 1:
            raise QueryError("limit must be at least 1")
        if note is not None:
            return self.map_note(note, k=limit).missing_links
        static, deep = self._map_vectors()
        with self._database_errors():
            return missing_links(self.store, static, deep, limit=limit, shown=shown_path, read_only=self.read_only,
                                 key=self._map_key())  # fmt: skip

    def _map_key(self) -> str:
        """Which index this is, for the map's one-builder-at-a-time lock."""
        return f"{self.database_url or self.db_path}#{self.config.collection}"

    def _map_vectors(self) -> tuple[VectorIndex, VectorIndex | None]:
        """The stored vectors a map is made from: static, and deep when there are any (read
        as stored: no model runs)."""
        try:
            static = self._sides.vector_side()[0]
        except (VectorsUnavailable, ModelError) as exc:
            message = exc.message if isinstance(exc, ModelError) else str(exc)
            raise MapUnavailableError(f"the map needs the index's vectors: {message}",
                                      hint="run `vaultseek index` first") from exc  # fmt: skip
        with self._database_errors():
            return static, self._sides.stored_deep_vectors()

    def _paths_in(self, filters: SearchFilter | Mapping[str, Any]) -> set[str]:
        """The indexed files inside ``filters``."""
        from .search.filters import parse_filter

        scope = self._real_scope(filters if isinstance(filters, SearchFilter) else parse_filter(filters))
        if scope is None:
            return set(self.store.file_states())
        ids = set(self.store.file_ids_in(scope).tolist())
        return {path for path, state in self.store.file_states().items() if state.id in ids}

    # -- reading ------------------------------------------------------------------------
    def get_note(self, path: str) -> list[ChunkRow]:
        """All chunks of a note, in order (raises QueryError if it is not indexed). ``path``
        may be the file's real path or its path as shown (see :mod:`.index.names`); the rows
        carry the shown one."""
        rows = self.store.chunks_of_file(self._real_path(path))
        if not rows:
            raise NotFoundError(f"{path} is not in the index", hint="check the path with `status`")
        return [_shown_row(row) for row in rows]

    def get_chunk(self, chunk_id: int) -> ChunkRow:
        """One chunk by its id (ids are stable until the note is edited; raises QueryError)."""
        with self._database_errors():
            row = self.store.chunks_by_id([chunk_id]).get(chunk_id)
        if row is None:
            raise NotFoundError(
                f"no chunk with id {chunk_id}", hint="ids change when a note is edited; search again"
            )
        return _shown_row(row)

    def _real_path(self, path: str) -> str:
        """The indexed path ``path`` stands for: itself, unless it is a path as shown (it
        holds a redaction marker and no indexed file has it), which stands for the one indexed
        file shown that way. Raises QueryError when several are: a search result's chunk id
        tells them apart."""
        if MARKER not in path:
            return path
        with self._database_errors():
            known = self.store.file_states()
        if path in known:
            return path
        found = matching_paths(path, known)
        if len(found) > 1:
            raise QueryError(
                f"{len(found)} files are shown as {path}",
                hint="open the one you mean by the chunk id of a search result (get_chunk)",
            )
        return found[0] if found else path

    def _real_scope(self, scope: SearchFilter | None) -> SearchFilter | None:
        """``scope`` with each path it names as shown replaced by the file's real path."""
        if scope is None or not scope.paths or not any(MARKER in p for p in scope.paths):
            return scope
        return replace(scope, paths=tuple(self._real_path(p) for p in scope.paths))

    def filter_misses(self, scope: SearchFilter | Mapping[str, Any] | None) -> list[str]:
        """What in ``scope`` no indexed file has — a folder, a tag, a kind — one message each,
        naming the nearest names the index holds (a search adds them to its notices)."""
        from .search.filter_hints import filter_misses
        from .search.filters import parse_filter

        parsed = scope if scope is None or isinstance(scope, SearchFilter) else parse_filter(scope)
        parsed = self._real_scope(parsed)
        with self._database_errors():
            return filter_misses(self.store, parsed)

    def evidence(self, query: str, results: Sequence[SearchResult]) -> list[Evidence]:
        """What the relevance judgment reads of each of ``query``'s ``results`` (see
        ``search/relevance.py``), as a search reads it: the calibration of the judgment fits
        its weights to these."""
        from .search.relevance import MIN_LEGIBLE, QueryWords, gather_evidence
        from .search.vocabulary import refine_query
        from .text.lexical import parse_query

        with self._database_errors():
            lexical, corrected = refine_query(self.store, parse_query(query))
        static = deep = None
        try:
            vectors, model = self._sides.vector_side()
            if model.legible_share(query) >= MIN_LEGIBLE:
                static = (vectors, model.embed_one(" ".join(lexical.terms) if corrected else query), model.name)
        except VectorsUnavailable:
            pass
        if self.config.deep_tier:
            try:
                deep_vectors, deep_model, _coverage = self._sides.deep_side()
                deep = (deep_vectors, deep_model.embed_one(deep_window(deep_model, query)), deep_model.name)
            except (VectorsUnavailable, ModelError):  # a server that failed: judged without it
                pass
        with self._database_errors():
            return gather_evidence(results, QueryWords(self.store, lexical), static, deep)

    def embed(self, text: str) -> np.ndarray:
        """``text`` as a unit vector of the index's model (raises :class:`ModelError`)."""
        return self.embedder().embed_one(text)

    def vectors_with_paths(self) -> tuple[list[str], np.ndarray]:
        """Every stored chunk vector (one unit row each) and the vault-relative path of the
        file it belongs to, row by row; empty when the vector side cannot serve this index.
        Intake groups them by folder to learn what each of the vault's domains is about."""
        try:
            index, _model = self._sides.vector_side()
        except VectorsUnavailable:
            return [], np.zeros((0, 0), dtype=np.float32)
        with self._database_errors():
            found = dict(self.store.vector_paths())
        keep = [i for i, chunk_id in enumerate(index.ids) if int(chunk_id) in found]
        paths = [found[int(index.ids[i])] for i in keep]
        return paths, index.vectors(np.asarray(keep, dtype=np.int64))

    def extract(self, text: str, query: str, *, max_tokens: int) -> Extract:
        """The passages of ``text`` (e.g. a long tool output) most relevant to ``query``,
        ranked in memory by BM25 and the index's model, within ``max_tokens``."""
        from .links.extract import extract_relevant

        try:
            model = self.embedder()
        except ModelError:
            return extract_relevant(text, query, max_tokens=max_tokens)

        def similarity(query: str, passages: Sequence[str]) -> list[float]:
            vectors = model.embed([query, *passages])
            return [float(v) for v in vectors[1:] @ vectors[0]]

        return extract_relevant(text, query, max_tokens=max_tokens, similarity=similarity)

    def files(self) -> list[dict[str, Any]]:
        """Every file the index knows (indexed or skipped): path, kind, status, size, chunks,
        title, tags, error, indexed_at. The paths are the real ones, the keys a caller looks
        files up by; show them through :func:`~vaultseek.index.names.shown_path`."""
        with self._database_errors():
            return self.store.file_rows()

    def forget(self, path: str) -> None:
        """Drop a file's rows (chunks, vectors, FTS) now, e.g. right after deleting it, rather
        than at the next sync (which would notice the deletion too)."""
        from .links.linking import relink

        with self._database_errors():
            self.store.delete_file(self._real_path(path))
            relink(self.store)
        self._graph = None

    def status(self) -> IndexStatus:
        from .index.sources import is_external_symlink  # standard library only

        counts = self.store.counts()
        ocr_pages, ocr_pending, ocr_over_limit = self.store.ocr_totals()
        if _on_postgres(self.store):
            size = sum(self.store.sizes().values())
        else:
            size = sum(
                os.path.getsize(p)
                for p in (self.db_path, Path(f"{self.db_path}-wal"))
                if os.path.exists(p)
            )
        skipped = tuple(_shown_skip(item) for item in self.store.skipped_files())
        from .reports import IndexStatus  # a search builds no report types

        return IndexStatus(
            vault=str(self.vault),
            db_path=str(self.db_path),
            files=counts["files"],
            chunks=counts["chunks"],
            vectors=counts["vectors"],
            db_bytes=size,
            model=self.store.get_meta("model_name"),
            model_fingerprint=self.store.get_meta("model_fingerprint"),
            last_indexed=self.store.get_meta("last_indexed"),
            skipped=skipped,
            schema_version=self.schema_version,
            documents=self.store.document_counts(),
            failed_documents=tuple(_shown_skip(item) for item in self.store.skipped_files(documents_only=True)),
            ocr_pages=ocr_pages,
            ocr_pending=ocr_pending,
            ocr_over_limit=ocr_over_limit,
            ocr_max_pages=self.config.ocr_max_pages_per_document,
            deep=self.deep_status(),
            external_symlinks=sum(1 for item in skipped if is_external_symlink(item.reason)),
            follow_external_symlinks=self.config.follow_external_symlinks,
        )


def _shown_row(row: ChunkRow) -> ChunkRow:
    """A chunk as surfaces show it: its file's path with any credential in it redacted."""
    shown = shown_path(row.path)
    return row if shown == row.path else replace(row, path=shown)


def _shown_skip(item: SkippedFile) -> SkippedFile:
    shown = shown_path(item.path)
    return item if shown == item.path else SkippedFile(shown, item.reason)


def _shown_link(link: ResolvedLink) -> ResolvedLink:
    path = link.path if link.path is None else shown_path(link.path)
    return replace(link, source=shown_path(link.source), path=path)


def open_index(
    vault: Path | str | None = None,
    *,
    db: Path | str | None = None,
    create: bool = False,
    read_only: bool = False,
    config: Config | None = None,
    **settings: Any,
) -> Index:
    """Open the index of ``vault`` (resolved as the CLI does), creating it if ``create``; for
    reading only with ``read_only``, or when this user cannot write it."""
    if config is None:
        config = load_config(vault=vault, db=db, **settings)
    return Index(config, create=create, read_only=read_only)

