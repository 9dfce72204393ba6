"""The map's three questions, as the engine asks them: the map, a note on it, missing links.

Each takes the index's store and vectors (static, and deep when there are any) and answers
with the records of ``reports.py``; paths come out as the index shows them (``shown``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..errors import MapUnavailableError, NotFoundError
from ..reports import MapNote, MapRequest, MissingLink, VaultMap
from ..storage.store import Store
from ..storage.vectors import VectorIndex
from . import making, views
from .features import DEEP_READY
from .kept import KeptMap

MIN_NOTES = 3
Shown = Callable[[str], str]
_BUILDING: dict[str, threading.Lock] = {}
_BUILDING_GUARD = threading.Lock()


def building_lock(key: str) -> threading.Lock:
    """One lock per index (``key`` names it) for making or updating its map: two requests at
    once (a page and its panel) make it once — the second then finds it kept."""
    with _BUILDING_GUARD:
        return _BUILDING.setdefault(key, threading.Lock())


def current_map(
    store: Store, static: VectorIndex, deep: VectorIndex | None, request: MapRequest, *, only: set[str] | None,
    read_only: bool, shown: Shown, key: str, limit: int = 50, progress: making.Progress | None = None,
) -> VaultMap:  # fmt: skip
    """The map of the vault (kept, updated or built) or of the notes in ``only`` (built)."""
    started = time.perf_counter()
    notices: list[str] = []
    if only is not None:
        found = making.gather(store, static, deep, only)
        _enough(len(found.paths), scoped=True)
        kept, how, moved = making.build(store, found, clusters=request.clusters, progress=progress), "scoped", len(found.paths)
    else:
        with building_lock(key):
            kept, how, moved = _kept(store, static, deep, request, progress)
            if how != "kept":
                if read_only:
                    notices.append("the index is read-only: this map was made but not kept, so the next one is made again")
                else:
                    kept.save(store)
    if kept.space == "static+deep" and kept.deep_share < 1.0:
        notices.append(
            f"{kept.deep_share:.0%} of the notes have deep vectors; the rest are placed by their words "
            "until the deep tier reaches them"
        )
    elif kept.space == "static" and 0.0 < kept.deep_share < DEEP_READY:
        notices.append(
            f"the deep tier has reached {kept.deep_share:.0%} of the notes; the map uses their deep vectors "
            f"from {DEEP_READY:.0%} on"
        )
    found_map = views.vault_map(store, kept, static, limit=limit, how=how, moved=moved,
                                seconds=time.perf_counter() - started, notices=notices)  # fmt: skip
    return _shown_map(found_map, shown)


def note_on_map(store: Store, static: VectorIndex, deep: VectorIndex | None, path: str, *, k: int, shown: Shown,
                read_only: bool, key: str, candidates: Sequence[str]) -> MapNote:  # fmt: skip
    """``path`` on the map; its missing links are the first ``k`` of ``candidates`` it does
    not link (the engine passes the notes related to it)."""
    kept = _ready(store, static, deep, read_only, key)
    if path not in kept.paths:
        raise NotFoundError(f"{path} is not on the map", hint="only notes with text are; check the path with `status`")
    found = views.map_note(store, kept, static, path, k=k, candidates=candidates)
    return replace(
        found, path=shown(found.path),
        neighbours=tuple(replace(n, path=shown(n.path)) for n in found.neighbours),
        missing_links=tuple(_shown_link(m, shown) for m in found.missing_links),
        cluster=replace(found.cluster, central=tuple(shown(p) for p in found.cluster.central)),
    )  # fmt: skip


def missing_links(store: Store, static: VectorIndex, deep: VectorIndex | None, *, limit: int, shown: Shown,
                  read_only: bool, key: str) -> tuple[MissingLink, ...]:  # fmt: skip
    """The vault's best missing links (a note's own come with :func:`note_on_map`)."""
    kept = _ready(store, static, deep, read_only, key)
    names = views.name_counts(kept.paths)
    return tuple(_shown_link(views.missing_link(store, static, kept, a, b, s, names=names), shown) for a, b, s in kept.missing[:limit])


def _ready(store: Store, static: VectorIndex, deep: VectorIndex | None, read_only: bool, key: str) -> KeptMap:
    with building_lock(key):
        kept, how, _moved = _kept(store, static, deep, MapRequest(), None)
        if how != "kept" and not read_only:
            kept.save(store)
    return kept


def _kept(
    store: Store, static: VectorIndex, deep: VectorIndex | None, request: MapRequest, progress: making.Progress | None
) -> tuple[KeptMap, str, int]:
    """The kept map as it stands, updated, or built: (map, how, notes placed anew)."""
    kept = None if request.rebuild else KeptMap.load(store)
    if kept is not None and request.clusters is not None and request.clusters != len(kept.centres):
        kept = None
    now = making.signature(store, static, deep)
    if kept is not None and kept.signature == now:
        making.read_links(store, kept)
        return kept, "kept", 0
    if kept is not None:
        found = making.gather(store, static, deep, centres=kept.basis.centres, made_from=now)
        _enough(len(found.paths), scoped=False)
        updated = making.update(store, kept, found)
        if updated is not None:
            return updated[0], "updated", updated[1]
    found = making.gather(store, static, deep, made_from=now)
    _enough(len(found.paths), scoped=False)
    wanted = request.clusters if request.clusters is not None else (kept.wanted_clusters if kept else None)
    return making.build(store, found, clusters=wanted, progress=progress), "built", len(found.paths)


def _enough(notes: int, *, scoped: bool) -> None:
    if notes < MIN_NOTES:
        where = "the scope holds" if scoped else "the index holds"
        raise MapUnavailableError(
            f"a map needs at least {MIN_NOTES} notes with text; {where} {notes}",
            hint="widen the filters" if scoped else "index a vault with more notes (`vaultseek index PATH`)",
        )


def _shown_link(link: MissingLink, shown: Shown) -> MissingLink:
    return replace(link, source=shown(link.source), target=shown(link.target))


def _shown_map(found: VaultMap, shown: Shown) -> VaultMap:
    return replace(
        found,
        notes=tuple(n if (path := shown(n.path)) == n.path else replace(n, path=path) for n in found.notes),
        clusters=tuple(replace(c, central=tuple(shown(p) for p in c.central)) for c in found.clusters),
        missing_links=tuple(_shown_link(m, shown) for m in found.missing_links),
    )
