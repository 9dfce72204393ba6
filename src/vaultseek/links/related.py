"""Related notes: by links and by meaning, fused into one list that says why.

Two ranked lists of files, fused with the same convex combination a search uses (each list
min-max normalised, weighted 1:1), so every result carries its rank in each list:

* **links** — :meth:`LinkGraph.related`: direct links either way, and neighbours in common
  (co-citation and coupling, Adamic–Adar weighted);
* **vector** — the note's centroid (the mean of its sections' vectors) against every stored
  section; a file scores its best section. The files related by links are scored the same
  way even when they are not among the nearest, so the fusion compares like with like.

A note with no links gets similarity alone; with the vector side unavailable (no model, a
model change half done) the links alone, with a notice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..records import RelatedNote, RelatedNotes
from ..search.fusion import convex
from ..search.linkgraph import LinkGraph
from ..storage.store import Store
from ..storage.vectors import VectorIndex

WEIGHTS = {"links": 0.5, "vector": 0.5}
_SECTIONS_PER_NOTE = 50
"""Nearest sections fetched per wanted note: long reference notes fill many of the nearest
slots with their own sections."""


def find_related(
    store: Store,
    graph: LinkGraph,
    vectors: VectorIndex | None,
    path: str,
    *,
    k: int = 10,
    notices: Sequence[str] = (),
) -> RelatedNotes:
    """The ``k`` notes most related to ``path`` (an indexed file), best first."""
    depth = max(2 * k, 20)
    linked = [n for n in graph.related(path) if n.path != path][:depth]
    by_path = {n.path: n for n in linked}
    notes = list(notices)
    similarity: dict[str, float] = {}
    if vectors is not None:
        centroid = _centroid(store, vectors, path)
        if centroid is None:
            notes.append(f"{path} has no text to compare; related by links only")
        else:
            similarity = _nearest_files(store, vectors, centroid, path, depth)
            missing = [n.path for n in linked if n.path not in similarity]
            similarity.update(_file_similarities(store, vectors, centroid, missing))
    names = list(dict.fromkeys([*by_path, *similarity]))
    ids = {name: i for i, name in enumerate(names)}
    lists = {
        "links": [(ids[n.path], n.score) for n in linked],
        "vector": sorted(((ids[p], s) for p, s in similarity.items()), key=lambda item: (-item[1], item[0])),
    }
    fused = convex(lists, weights=WEIGHTS)[:k]
    titles = store.titles([names[f.item] for f in fused])
    results = []
    for f in fused:
        name = names[f.item]
        link = by_path.get(name)
        results.append(
            RelatedNote(
                path=name,
                title=titles.get(name),
                score=f.score,
                links_rank=f.ranks.get("links"),
                vector_rank=f.ranks.get("vector"),
                linked=link.linked if link is not None else None,
                shared=link.shared if link is not None else (),
                similarity=similarity.get(name),
            )
        )
    return RelatedNotes(path, tuple(results), tuple(notes))


def _columns(vectors: VectorIndex, chunk_ids: np.ndarray) -> np.ndarray:
    """Positions in the vector matrix of the given chunk ids (those that have a vector)."""
    at = np.searchsorted(vectors.ids, chunk_ids)
    at = at[at < len(vectors.ids)]
    return at[np.isin(vectors.ids[at], chunk_ids)]


def _centroid(store: Store, vectors: VectorIndex, path: str) -> np.ndarray | None:
    columns = _columns(vectors, store.chunk_ids_of_files([path]))
    if not len(columns):
        return None
    mean = vectors.vectors(columns).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else None


def _nearest_files(
    store: Store, vectors: VectorIndex, centroid: np.ndarray, path: str, depth: int
) -> dict[str, float]:
    """The ``depth`` files (other than ``path``) whose best section is nearest the centroid."""
    hits = vectors.search(centroid, min(len(vectors), depth * _SECTIONS_PER_NOTE))
    files = store.chunk_paths([chunk_id for chunk_id, _s in hits])
    best: dict[str, float] = {}
    for chunk_id, score in hits:
        name = files.get(chunk_id)
        if name is not None and name != path and name not in best:
            best[name] = score
            if len(best) >= depth:
                break
    return best


def _file_similarities(
    store: Store, vectors: VectorIndex, centroid: np.ndarray, paths: Sequence[str]
) -> dict[str, float]:
    """Each file's best section similarity to the centroid."""
    if not paths:
        return {}
    chunk_ids = store.chunk_ids_of_files(paths)
    columns = _columns(vectors, chunk_ids)
    if not len(columns):
        return {}
    scores = vectors.scores(centroid, columns)
    files = store.chunk_paths([int(i) for i in vectors.ids[columns]])
    best: dict[str, float] = {}
    for chunk_id, score in zip(vectors.ids[columns], scores, strict=True):
        name = files.get(int(chunk_id))
        if name is not None and float(score) > best.get(name, -2.0):
            best[name] = float(score)
    return best
