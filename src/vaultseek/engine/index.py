"""The :class:`Index`, a vault's index and the one object every surface calls, and
:func:`open_index`.

The Index opens the store and closes it, syncs it, searches it and reads from it; the link
graph and the map, the deep tier and the status report are answered by the parts beside it
(listed in the package's docstring). It loads the embedding model and the vector matrix
lazily, so BM25-only work never pays for them, and reloads the matrix when another process
has written to the index.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config, load_config
from ..contract import SearchRequest
from ..embeddings.static import StaticEmbedder
from ..errors import ConfigError, IndexAccessError, ModelError, NotFoundError, VaultNotFoundError
from ..index.activity import note_interactive
from ..places import VaultRegistry
from ..records import SearchFilter, SearchResponse, SearchResult
from ..search.candidates import deep_window
from ..search.hybrid import VectorsUnavailable, run_search
from ..search.linkgraph import LinkGraph
from ..search.sides import Sides
from ..storage import db
from ..storage.store import ChunkRow, Store, utc_now
from .backend import database_errors, describe_backend, open_store, writer_lock_of
from .deep import DeepTier
from .graph import GraphViews
from .paths import Paths, shown_row
from .searching import ModelSteps, search_params
from .status import index_status

if TYPE_CHECKING:
    from ..embeddings.deep import DeepModel
    from ..index.deepening import DeepProgressCallback
    from ..index.sync import ProgressCallback, StopCheck
    from ..links.extract import Extract
    from ..reports import (
        DeepReport,
        DeepStatus,
        IndexStatus,
        MapNote,
        MapRequest,
        MissingLink,
        NoteLinks,
        RelatedNotes,
        SyncReport,
        VaultMap,
    )
    from ..search.relevance import Evidence
    from ..storage.writer_lock import LockHolder, WriterLock

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
        opened = open_store(
            self.db_path, database_url=self.database_url, collection=config.collection, create=create,
            read_only=read_only,
        )  # fmt: skip
        self.store: Store = opened.store
        self.schema_version: int = opened.schema_version
        self.read_only: bool = opened.read_only
        """Opened for reading only (asked for, or this user cannot write the index): search,
        status, links and related work; :meth:`sync` raises :class:`IndexAccessError`."""
        self._sides = Sides(self.store, config)
        """The static and deep models and vectors searches read, kept loaded."""
        self.clock: Callable[[], float] = time.time
        """What "now" is for recency and relative dates, unless a search names its own
        (tests set a fixed one)."""
        self._paths = Paths(self.store, self.vault, self._database_errors)
        """Reads the paths callers pass: shown ones as real ones, paths on disk as the vault's."""
        self._graph = GraphViews(
            self.store, self._sides, vault=self.vault, read_only=self.read_only,
            key=f"{self.database_url or self.db_path}#{config.collection}", paths=self._paths,
            errors=self._database_errors,
        )  # fmt: skip
        """The link graph, links, related notes and the map."""
        self._deep = DeepTier(self.store, self._sides, db_path=self.db_path, errors=self._database_errors)
        """The deep tier's job and status."""
        self._model_steps = ModelSteps()
        """The reranker and the expander, built on the first search that asks for each."""
        self.writer_lock: WriterLock = writer_lock_of(self.store, self.db_path)
        """The index's one-writer lock, which :meth:`sync` holds while it writes (a backend
        on a database server provides its own, e.g. an advisory lock)."""

    @property
    def conn(self) -> db.Connection:
        """The SQLite connection (the SQLite backend only)."""
        return self.store.conn

    def backend_info(self) -> dict[str, str]:
        """Where the index lives, for ``status``: the backend and, on PostgreSQL, the
        database (without its password), collection, server and pgvector versions, size and
        how vectors are searched."""
        return describe_backend(self.store, self.db_path, self.database_url)

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.store.backend

    def _database_errors(self) -> AbstractContextManager[None]:
        """Re-raise database failures (locked, read-only, damaged, a server gone, …) as
        vaultseek errors that name this index; anything else passes through untouched."""
        return database_errors(self.db_path, self.database_url)

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
                from ..reports import SyncReport  # a search builds no report types

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
        named = None if paths is None else self._paths.in_vault(paths)
        self._sides.forget_vectors()  # whatever happens below, reload the matrices next time
        self._graph.forget_graph()
        from ..index.sync import Syncer
        from ..links.linking import relink

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
        return self._deep.deepen(
            self.config, progress=progress, should_stop=should_stop, seconds=seconds, limit=limit, model=model
        )

    def deep_status(self) -> DeepStatus | None:
        """The deep tier's coverage and job (None when the tier is off)."""
        return self._deep.status(self.config)

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
        params = search_params(request, self.config, now=now, scope=self._paths.real_scope(request.filters))
        reranker, expander, notices = self._model_steps.asked_by(request, self.config)
        with self._database_errors():
            response = run_search(
                self.store, request.query, params, self._sides.search_side, link_graph=self.link_graph,
                deep_side=self._sides.deep_side if self.config.deep_tier else None, reranker=reranker, expander=expander,
            )  # fmt: skip
        return replace(response, notices=(*notices, *response.notices)) if notices else response

    def link_graph(self) -> LinkGraph:
        """The resolved link graph, rebuilt when any connection has committed since."""
        return self._graph.link_graph()

    # -- links --------------------------------------------------------------------------
    def links(self, note: str) -> NoteLinks:
        """A note's outgoing links (resolved and unresolved) and its backlinks. ``note`` is a
        vault-relative path or a name as a link would write it (raises QueryError). An
        outgoing link's ``heading_found`` says whether its ``#heading`` exists in the note it
        points at (read from the vault now: see ``anchors.py``)."""
        return self._graph.links(note)

    def related(self, note: str, *, k: int = 10) -> RelatedNotes:
        """The ``k`` notes most related to ``note`` by links and by meaning, best first."""
        return self._graph.related(note, k=k, deep_tier=self.config.deep_tier)

    # -- the map ------------------------------------------------------------------------
    def vault_map(
        self, request: MapRequest | None = None, *, limit: int = 50, progress: Callable[[str], None] | None = None
    ) -> VaultMap:
        """The vault's map (``vaultseek map``): kept in the index and brought up to date on
        each call (only changed notes move), or, with ``request.filters``, made for that
        scope alone. ``limit`` caps the missing links listed. Raises
        :class:`MapUnavailableError` when the index has no vectors or too few notes."""
        return self._graph.vault_map(request, limit=limit, progress=progress)

    def map_note(self, note: str, *, k: int = 10) -> MapNote:
        """``note``'s place on the map: its cluster and role, its ``k`` nearest notes (linked
        or not), and its missing links: the first ``k`` notes :meth:`related` ranks for it (by
        meaning, and by the links they share) that it does not link."""
        return self._graph.map_note(note, k=k, deep_tier=self.config.deep_tier)

    def missing_links(self, note: str | None = None, *, limit: int = 50) -> tuple[MissingLink, ...]:
        """Pairs of notes that belong together but never link, best first, each with the two
        passages that make them close: the vault's (the closest unlinked pairs of the map), or
        ``note``'s own (as :meth:`map_note` finds them)."""
        return self._graph.missing_links(note, limit=limit, deep_tier=self.config.deep_tier)

    # -- reading ------------------------------------------------------------------------
    def get_note(self, path: str) -> list[ChunkRow]:
        """All chunks of a note, in order (raises QueryError if it is not indexed). ``path``
        may be the file's real path or its path as shown (see :mod:`.index.names`); the rows
        carry the shown one."""
        rows = self.store.chunks_of_file(self._paths.real(path))
        if not rows:
            raise NotFoundError(f"{path} is not in the index", hint="check the path with `status`")
        return [shown_row(row) for row in rows]

    def get_chunk(self, chunk_id: int) -> ChunkRow:
        """One chunk by its id (ids are stable until the note is edited; raises QueryError)."""
        with self._database_errors():
            row = self.store.chunks_by_id([chunk_id]).get(chunk_id)
        if row is None:
            raise NotFoundError(
                f"no chunk with id {chunk_id}", hint="ids change when a note is edited; search again"
            )
        return shown_row(row)

    def filter_misses(self, scope: SearchFilter | Mapping[str, Any] | None) -> list[str]:
        """What in ``scope`` no indexed file has — a folder, a tag, a kind — one message each,
        naming the nearest names the index holds (a search adds them to its notices)."""
        from ..search.filter_hints import filter_misses
        from ..search.filters import parse_filter

        parsed = scope if scope is None or isinstance(scope, SearchFilter) else parse_filter(scope)
        parsed = self._paths.real_scope(parsed)
        with self._database_errors():
            return filter_misses(self.store, parsed)

    def evidence(self, query: str, results: Sequence[SearchResult]) -> list[Evidence]:
        """What the relevance judgment reads of each of ``query``'s ``results`` (see
        ``search/relevance.py``), as a search reads it: the calibration of the judgment fits
        its weights to these."""
        from ..search.relevance import MIN_LEGIBLE, QueryWords, gather_evidence
        from ..search.vocabulary import refine_query
        from ..text.lexical import parse_query

        try:
            side = self._sides.vector_side()
        except VectorsUnavailable:
            side = None
        with self._database_errors():  # the query's words as the search refines them, with the model
            refined = refine_query(self.store, parse_query(query), side[1] if side is not None else None)
        lexical, embedded = refined.query, refined.respelled(query)  # the models read the typos corrected
        static = deep = None
        if side is not None and side[1].legible_share(embedded) >= MIN_LEGIBLE:
            static = (side[0], side[1].embed_one(embedded), side[1].name)
        if self.config.deep_tier:
            try:
                deep_vectors, deep_model, _coverage = self._sides.deep_side()
                deep = (deep_vectors, deep_model.embed_one(deep_window(deep_model, embedded)), deep_model.name)
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
        from ..links.extract import extract_relevant

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
        from ..links.linking import relink

        with self._database_errors():
            self.store.delete_file(self._paths.real(path))
            relink(self.store)
        self._graph.forget_graph()

    def status(self) -> IndexStatus:
        """The index's counts, size, skipped files, OCR totals and deep tier (``status``)."""
        return index_status(self.store, self.config, db_path=self.db_path, schema_version=self.schema_version,
                            deep=self.deep_status())  # fmt: skip


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

