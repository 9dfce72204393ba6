"""The vault's graph and map views of one index: the resolved link graph (kept, rebuilt when
the store changes), a note's links and backlinks, its related notes, and the vault map with
its missing links.

Each answer names paths as surfaces show them (:func:`~vaultseek.index.names.shown_path`) and
takes a shown path back (``paths.py``). Links, related notes and the map's modules are
imported where they are used: a search needs none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MapUnavailableError, ModelError, QueryError
from ..index.names import shown_path
from ..records import SearchFilter
from ..search.hybrid import VectorsUnavailable
from ..search.linkgraph import LinkGraph
from ..search.sides import Sides
from ..storage.store import Store
from ..storage.vectors import VectorIndex
from .backend import ErrorScope
from .paths import Paths, shown_link

if TYPE_CHECKING:
    from ..reports import MapNote, MapRequest, MissingLink, NoteLinks, RelatedNotes, VaultMap


@dataclass(frozen=True, slots=True)
class _Meaning:
    """The vectors notes are compared on for related notes and their closeness."""

    vectors: VectorIndex | None
    deep: VectorIndex | None
    coverage: float
    models: tuple[str | None, str | None]
    unavailable: str | None
    """Why the static side is unavailable (None: it is there)."""


class GraphViews:
    """The link graph and map questions :class:`~vaultseek.engine.Index` answers (documented
    there), over its store and vectors. ``paths`` reads the paths it is given; ``errors``
    re-raises database failures as vaultseek errors; ``key`` names the index for the map's
    one-builder-at-a-time lock. ``deep_tier`` comes with each call, from the index's
    configuration as it is then (a caller may replace it on an open index)."""

    def __init__(
        self,
        store: Store,
        sides: Sides,
        *,
        vault: Path,
        read_only: bool,
        key: str,
        paths: Paths,
        errors: ErrorScope,
    ) -> None:
        self.store = store
        self.sides = sides
        self.vault = vault
        self.read_only = read_only
        self.key = key
        self.paths = paths
        self.errors = errors
        self._graph: LinkGraph | None = None
        self._graph_version: int | None = None

    # -- links --------------------------------------------------------------------------
    def link_graph(self) -> LinkGraph:
        """The resolved link graph, rebuilt when any connection has committed since."""
        version = self.store.data_version()
        if self._graph is None or version != self._graph_version:
            with self.errors():
                self._graph = LinkGraph(self.store.link_edges())
            self._graph_version = version
        return self._graph

    def forget_graph(self) -> None:
        """Rebuild the link graph on its next use (this process is about to change links)."""
        self._graph = None

    def links(self, note: str) -> NoteLinks:
        from ..links.anchors import check_headings
        from ..links.linking import get_note_path, note_links

        with self.errors():
            found = note_links(self.store, get_note_path(self.store, self.paths.real(note), self.vault))
        found = check_headings(found, self.vault)
        outgoing = tuple(shown_link(link) for link in found.outgoing)
        return replace(found, path=shown_path(found.path), outgoing=outgoing,
                       backlinks=tuple(shown_link(link) for link in found.backlinks))  # fmt: skip

    def related(self, note: str, *, k: int, deep_tier: bool) -> RelatedNotes:
        from ..links.linking import get_note_path
        from ..links.related import find_related

        if k < 1:
            raise QueryError("k must be at least 1")
        with self.errors():
            path = get_note_path(self.store, self.paths.real(note), self.vault)
            meaning = self._meaning(deep_tier)
            notices = [] if meaning.unavailable is None else [f"similarity unavailable ({meaning.unavailable}); related by links only"]
            found = find_related(
                self.store, self.link_graph(), meaning.vectors, path, k=k, notices=notices, deep=meaning.deep,
                deep_coverage=meaning.coverage, models=meaning.models,
            )
        results = tuple(
            replace(r, path=shown_path(r.path), shared=tuple(shown_path(p) for p in r.shared)) for r in found.results
        )
        return replace(found, path=shown_path(found.path), results=results)

    # -- the map ------------------------------------------------------------------------
    def vault_map(
        self, request: MapRequest | None, *, limit: int, progress: Callable[[str], None] | None
    ) -> VaultMap:
        from ..reports import MapRequest
        from ..vaultmap.service import current_map

        request = request or MapRequest()
        if limit < 0:
            raise QueryError("limit must be 0 or more")
        if request.clusters is not None and request.clusters < 1:
            raise QueryError("clusters must be at least 1")
        static, deep = self.map_vectors()
        with self.errors():
            only = self._paths_in(request.filters) if request.filters is not None else None
            return current_map(self.store, static, deep, request, only=only, read_only=self.read_only,
                               shown=shown_path, key=self.key, limit=limit, progress=progress)  # fmt: skip

    def map_note(self, note: str, *, k: int, deep_tier: bool) -> MapNote:
        from ..links.linking import get_note_path
        from ..links.related import closeness
        from ..vaultmap.service import note_on_map

        if k < 1:
            raise QueryError("k must be at least 1")
        with self.errors():
            path = get_note_path(self.store, self.paths.real(note), self.vault)
        related = self.related(path, k=min(2 * k + 20, 200), deep_tier=deep_tier)
        candidates = [self.paths.real(r.path) for r in related.results if not r.linked and r.close is not False]
        static, deep = self.map_vectors()
        with self.errors():
            found = note_on_map(self.store, static, deep, path, k=k, shown=shown_path, read_only=self.read_only,
                                key=self.key, candidates=candidates)  # fmt: skip
            told = {self.paths.real(r.path): r.close for r in related.results}
            others = {self.paths.real(n.path): n.path for n in found.neighbours}
            untold = [p for p in others if p not in told]  # mostly none: the related notes hold the nearest
            if untold:
                meaning = self._meaning(deep_tier)
                told |= closeness(self.store, self.link_graph(), meaning.vectors, path, untold,
                                  deep=meaning.deep, models=meaning.models)  # fmt: skip
        close = {shown: told.get(real) for real, shown in others.items()}
        return replace(found, neighbours=tuple(replace(n, close=close.get(n.path)) for n in found.neighbours))

    def missing_links(self, note: str | None, *, limit: int, deep_tier: bool) -> tuple[MissingLink, ...]:
        from ..vaultmap.service import missing_links

        if limit < 1:
            raise QueryError("limit must be at least 1")
        if note is not None:
            return self.map_note(note, k=limit, deep_tier=deep_tier).missing_links
        static, deep = self.map_vectors()
        with self.errors():
            return missing_links(self.store, static, deep, limit=limit, shown=shown_path, read_only=self.read_only,
                                 key=self.key)  # fmt: skip

    def _meaning(self, deep_tier: bool) -> _Meaning:
        """The vectors related notes are compared on: the static side, and the deep tier's
        when it is on and has vectors from its model."""
        vectors: VectorIndex | None = None
        static_model = deep_model = None
        unavailable = None
        try:
            vectors, embedder = self.sides.vector_side()
            static_model = embedder.name
        except VectorsUnavailable as exc:
            unavailable = str(exc)
        deep, coverage = None, 0.0
        if deep_tier:
            try:
                deep, model, coverage = self.sides.deep_side()
                deep_model = model.name
            except (VectorsUnavailable, ModelError):
                pass  # no deep vectors yet, from another model, or its server away: the other lists serve
        return _Meaning(vectors, deep, coverage, (static_model, deep_model), unavailable)

    def map_vectors(self) -> tuple[VectorIndex, VectorIndex | None]:
        """The stored vectors a map is made from: static, and deep when there are any (read
        as stored: no model runs)."""
        try:
            static = self.sides.vector_side()[0]
        except (VectorsUnavailable, ModelError) as exc:
            message = exc.message if isinstance(exc, ModelError) else str(exc)
            raise MapUnavailableError(f"the map needs the index's vectors: {message}",
                                      hint="run `vaultseek index` first") from exc  # fmt: skip
        with self.errors():
            return static, self.sides.stored_deep_vectors()

    def _paths_in(self, filters: SearchFilter | Mapping[str, Any]) -> set[str]:
        """The indexed files inside ``filters``."""
        from ..search.filters import parse_filter

        scope = self.paths.real_scope(filters if isinstance(filters, SearchFilter) else parse_filter(filters))
        if scope is None:
            return set(self.store.file_states())
        ids = set(self.store.file_ids_in(scope).tolist())
        return {path for path, state in self.store.file_states().items() if state.id in ids}
