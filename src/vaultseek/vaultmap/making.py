"""Making the vault map, keeping it in the index, and keeping it current.

A full build (a few seconds for 1k notes, ``docs/map.md`` for 17k) runs every step:
features → nearest notes → layout → clusters → names → regions → missing links. The result
is kept in the index's meta table (:mod:`.kept`) with the PCA basis and the notes' reduced
vectors. Asked again, the map compares what the index holds now with what it was made from:

* nothing changed (same chunks, deep vectors and links) → the kept map, as it is;
* a few notes changed, came or went → only those are placed (at their nearest kept notes),
  given a cluster (the nearest centre) and their regions and missing links redone; every
  other note stays where it was;
* more than ``REBUILD_SHARE`` of the notes changed, the space changed (the deep tier's first
  vectors arrived), or a rebuild was asked for → a full build.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np

from ..storage.store import Store
from ..storage.vectors import VectorIndex
from . import clusters as clustering
from . import features as feat
from . import layout, regions
from .kept import KeptMap

REBUILD_SHARE = 0.25
_LABEL_CHARS = 400
"""Characters of each section read for the clusters' names."""

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Gathered:
    """The index's notes now: paths, mixed full features, which have deep vectors."""

    paths: list[str]
    full: np.ndarray
    space: str
    has_deep: np.ndarray
    signature: list[int]
    centres: feat.Centres


def gather(
    store: Store, static: VectorIndex, deep: VectorIndex | None, only: set[str] | None = None,
    centres: feat.Centres | None = None, made_from: list[int] | None = None,
) -> Gathered:  # fmt: skip
    """Every note's mixed features from the stored chunk vectors (no model runs), centred
    on ``centres`` when given (a kept map's), else on these notes' own means; ``made_from``
    is the index's :func:`signature` when the caller has just read it."""
    made_from = made_from if made_from is not None else signature(store, static, deep)
    owners = store.vector_paths()
    chunk_ids = np.fromiter((cid for cid, _p in owners), dtype=np.int64, count=len(owners))
    owner_paths = [p for _c, p in owners]
    paths = sorted({p for p in owner_paths if only is None or p in only})
    if not paths:
        nothing = np.zeros((0, static.dim), np.float32)
        return Gathered([], nothing, "static", np.zeros(0, bool), made_from, feat.Centres(np.zeros(static.dim, np.float32)))
    where = {p: i for i, p in enumerate(paths)}
    note_of = np.fromiter((where.get(p, -1) for p in owner_paths), dtype=np.int64, count=len(owner_paths))
    keep = note_of >= 0
    rows = np.searchsorted(static.ids, chunk_ids[keep])
    static_means, _present = feat.note_means(len(paths), note_of[keep], static.vectors, rows, static.dim)
    deep_means, has_deep = None, np.zeros(len(paths), bool)
    if deep is not None and len(deep):
        position = np.searchsorted(chunk_ids, deep.ids)
        position = np.minimum(position, len(chunk_ids) - 1)
        known = (chunk_ids[position] == deep.ids) & (note_of[position] >= 0)
        deep_rows = np.flatnonzero(known)
        deep_means, has_deep = feat.note_means(len(paths), note_of[position[deep_rows]], deep.vectors, deep_rows, deep.dim)
    full, space, used = feat.full_features(static_means, deep_means, has_deep, centres)
    return Gathered(paths, full, space, has_deep, made_from, used)


def signature(store: Store, static: VectorIndex, deep: VectorIndex | None) -> list[int]:
    """What the map was made from, in five numbers: chunks with vectors, the newest chunk
    id, chunks with deep vectors, links, and a digest of every file's content hash. (The
    chunks alone miss an edit: an edited note's new chunks may take the very row ids its old
    ones had, when they were the newest — as they are when a note is edited twice running.)"""
    last = int(static.ids[-1]) if len(static) else 0
    return [len(static), last, 0 if deep is None else len(deep), store.link_count(), _contents(store)]


def _contents(store: Store) -> int:
    digest = hashlib.blake2b(digest_size=8)
    for path, state in sorted(store.file_states().items()):
        digest.update(f"{path}\0{state.content_hash}\0".encode())
    return int.from_bytes(digest.digest(), "big") >> 1


def read_links(store: Store, kept: KeptMap) -> None:
    """The kept map's link counts and linked pairs, from the index's links now."""
    where = {p: i for i, p in enumerate(kept.paths)}
    linked = set()
    counts = np.zeros(len(kept.paths), np.int64)
    for source, target in store.link_edges():
        a, b = where.get(source), where.get(target)
        if a is None or b is None:
            continue
        counts[a] += 1
        counts[b] += 1
        linked.add((a, b) if a < b else (b, a))
    kept.links, kept.linked = counts, linked


def build(store: Store, found: Gathered, *, clusters: int | None, progress: Progress | None = None) -> KeptMap:
    """A full map of the gathered notes; ``progress`` hears of each step as it starts (six:
    reduce, nearest notes, layout, clusters, names, regions)."""
    say = progress or (lambda _message: None)
    now = time.time()
    n = len(found.paths)
    say(f"reducing the vectors of {n:,} notes")
    basis = feat.fit_basis(found.full, found.space, found.centres)
    vectors = basis.project(found.full)
    say("finding each note's nearest notes")
    neighbours, sims = feat.nearest(vectors)
    say("laying the notes out")
    heads, tails, weights = layout.fuzzy_graph(neighbours, sims)
    xy = layout.lay_out(heads, tails, weights, layout.initial(vectors))
    say("finding clusters")
    k = clustering.cluster_count(n, clusters)
    labels, centres = clustering.k_means(vectors, k)
    say("naming the clusters")
    words = _cluster_words(store, found.paths, labels, k)
    kept = KeptMap.empty(found.paths, basis, vectors, xy, labels, centres, found.signature)
    kept.built_at = kept.updated_at = now
    kept.deep_share = float(found.has_deep.mean()) if n else 0.0
    kept.wanted_clusters = clusters
    kept.words = words
    say("finding bridges, islands and missing links")
    _regions_of_all(store, kept, neighbours, sims)
    return kept


def update(store: Store, kept: KeptMap, found: Gathered) -> tuple[KeptMap, int] | None:
    """The kept map brought up to date with the gathered notes, moving only those that
    changed; None when too much changed for that (build anew)."""
    if found.space != kept.basis.space or not kept.paths:
        return None
    vectors = kept.basis.project(found.full)
    old = {p: i for i, p in enumerate(kept.paths)}
    carried = np.array([old.get(p, -1) for p in found.paths], dtype=np.int64)
    same = carried >= 0
    drift = np.ones(len(found.paths), np.float32)
    drift[same] = np.linalg.norm(vectors[same] - kept.vectors[carried[same]].astype(np.float32), axis=1)
    moved = np.flatnonzero(drift > 2e-3)
    removed = len(kept.paths) - int(same.sum())
    if len(moved) + removed > REBUILD_SHARE * max(len(found.paths), len(kept.paths)):
        return None
    staying = np.setdiff1d(np.arange(len(found.paths)), moved)
    if not len(staying):
        return None
    xy = np.zeros((len(found.paths), 2), np.float32)
    xy[staying] = kept.xy[carried[staying]]
    labels = np.zeros(len(found.paths), np.int64)
    labels[staying] = kept.labels[carried[staying]]
    if len(moved):
        near, near_sims = feat.nearest(vectors[moved], among=vectors[staying])
        xy[moved] = layout.place(xy[staying], near, near_sims) if near.size else xy[staying].mean(axis=0)
        labels[moved] = np.argmax(vectors[moved] @ kept.centres.T, axis=1)
    fresh = KeptMap.carry(kept, found.paths, vectors, xy, labels, carried, found.signature)
    fresh.updated_at = time.time()
    fresh.deep_share = float(found.has_deep.mean())
    neighbours, sims = feat.nearest(vectors[moved], feat.NEIGHBOURS + 1, among=vectors)
    neighbours, sims = _drop_self(neighbours, np.where(neighbours == moved[:, None], -np.inf, sims))
    _regions_of(store, fresh, moved, neighbours, sims)
    return fresh, len(moved)


def _drop_self(neighbours: np.ndarray, sims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-sims, axis=1)[:, : max(neighbours.shape[1] - 1, 0)]
    return np.take_along_axis(neighbours, order, axis=1), np.take_along_axis(sims, order, axis=1)


def _regions_of_all(store: Store, kept: KeptMap, neighbours: np.ndarray, sims: np.ndarray) -> None:
    """Links, density, bridges, roles and missing links of every note, from everyone's
    nearest notes."""
    read_links(store, kept)
    kept.mean_similarity = sims[:, : regions.DENSITY_NEIGHBOURS].mean(axis=1).astype(np.float32)
    kept.density = regions.density(sims)
    kept.bridge = regions.bridge_scores(neighbours, kept.labels)
    own = regions.own_share(neighbours, kept.labels)
    kept.roles = regions.roles(kept.density, kept.bridge, own, kept.links)
    everyone = np.arange(len(kept.paths))
    kept.missing = regions.unlinked_pairs(everyone, neighbours, kept.vectors.astype(np.float32), kept.linked)[: regions.MISSING_KEPT]


def _regions_of(store: Store, kept: KeptMap, rows: np.ndarray, neighbours: np.ndarray, sims: np.ndarray) -> None:
    """The same for the notes in ``rows`` alone (``neighbours`` and ``sims`` theirs): their
    density is placed among everyone's kept one, and the missing links they were in are
    found again."""
    read_links(store, kept)
    if not len(rows):
        return
    mean = sims[:, : regions.DENSITY_NEIGHBOURS].mean(axis=1)
    everyone = np.sort(kept.mean_similarity)
    kept.density[rows] = np.searchsorted(everyone, mean) / max(len(everyone) - 1, 1)
    kept.mean_similarity[rows] = mean
    kept.bridge[rows] = regions.bridge_scores(neighbours, kept.labels)
    near = neighbours[:, : regions.depth(kept.labels, neighbours.shape[1])]
    own = (kept.labels[near] == kept.labels[rows][:, None]).mean(axis=1)
    for row, role in zip(rows.tolist(), regions.roles(kept.density[rows], kept.bridge[rows], own, kept.links[rows]), strict=True):
        kept.roles[row] = role
    gone = set(rows.tolist())
    found = regions.unlinked_pairs(rows, neighbours, kept.vectors.astype(np.float32), kept.linked)
    kept.missing = [m for m in kept.missing if m[0] not in gone and m[1] not in gone] + found
    kept.missing = sorted(kept.missing, key=lambda item: -item[2])[: regions.MISSING_KEPT]


def _cluster_words(store: Store, paths: Sequence[str], labels: np.ndarray, k: int) -> list[list[str]]:
    """Each cluster's distinctive words, read from its notes' titles, headings and the
    start of each section."""
    where = {p: i for i, p in enumerate(paths)}
    owner = dict(store.vector_paths())
    texts: list[list[str]] = [[] for _ in paths]
    for path, title in store.titles(list(paths)).items():
        if title and path in where:
            texts[where[path]].append(title)
    for batch in store.iter_chunks():
        for chunk_id, heading, text in batch:
            row = where.get(owner.get(chunk_id, ""))
            if row is not None:
                texts[row].append(f"{heading} {text[:_LABEL_CHARS]}")
    note_words = [clustering.words_of(" ".join(parts)) + _name_words(path) for parts, path in zip(texts, paths, strict=True)]
    return clustering.distinctive_words(labels, note_words, k)


def _name_words(path: str) -> list[str]:
    return clustering.words_of(PurePosixPath(path).stem.replace("-", " ").replace("_", " "))
