"""Related notes: by links and by meaning, fused into one list that says why.

Ranked lists of files, fused with the same convex combination a search uses (each list
min-max normalised, then weighted), so every result carries its rank in each list:

* **links** — :meth:`LinkGraph.related`: direct links either way, and neighbours in common
  (co-citation and coupling, Adamic–Adar weighted);
* **vector** — the note's centroid (the mean of its sections' vectors) against every stored
  section; a file scores its best section. The files related by links are scored the same
  way even when they are not among the nearest, so the fusion compares like with like;
* **deep** — the same over the deep tier's vectors, when the index has them: its weight is
  scaled by the share of chunks that have one, as in a search. The centroid is made from
  stored vectors, so no model runs.

A note with no links gets similarity alone; with the vector side unavailable (no model, a
model change half done) the links alone, with a notice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..records import RelatedNote, RelatedNotes
from ..search.fusion import convex
from ..search.linkgraph import LinkGraph
from ..storage.store import Store
from ..storage.vectors import VectorIndex

WEIGHTS = {"links": 0.5, "vector": 0.5, "deep": 1.0}
"""List weights; the deep list's is multiplied by the deep tier's coverage. The deep weight
was chosen on the tune half of a proxy judged set (docs/links.md, "Related notes")."""
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
    deep: VectorIndex | None = None,
    deep_coverage: float = 0.0,
    weights: Mapping[str, float] = WEIGHTS,
) -> RelatedNotes:
    """The ``k`` notes most related to ``path`` (an indexed file), best first. ``deep`` is
    the deep tier's vector matrix, covering ``deep_coverage`` of the chunks."""
    depth = max(2 * k, 20)
    linked = [n for n in graph.related(path) if n.path != path][:depth]
    by_path = {n.path: n for n in linked}
    notes = list(notices)
    similarity: dict[str, float] = {}
    if vectors is not None:
        found = _similar_files(store, vectors, path, depth, [n.path for n in linked])
        if found is None:
            notes.append(f"{path} has no text to compare; related by links only")
        similarity = found or {}
    meaning = (_similar_files(store, deep, path, depth, [n.path for n in linked]) if deep is not None else None) or {}
    names = list(dict.fromkeys([*by_path, *similarity, *meaning]))
    ids = {name: i for i, name in enumerate(names)}
    lists = {
        "links": [(ids[n.path], n.score) for n in linked],
        "vector": _ranked(ids, similarity),
        "deep": _ranked(ids, meaning),
    }
    fused = convex(lists, weights={**weights, "deep": weights["deep"] * deep_coverage})[:k]
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
                deep_rank=f.ranks.get("deep"),
                deep_similarity=meaning.get(name),
            )
        )
    return RelatedNotes(path, tuple(results), tuple(notes))


def _ranked(ids: Mapping[str, int], scores: Mapping[str, float]) -> list[tuple[int, float]]:
    return sorted(((ids[p], s) for p, s in scores.items()), key=lambda item: (-item[1], item[0]))


def _similar_files(
    store: Store, vectors: VectorIndex, path: str, depth: int, also: Sequence[str]
) -> dict[str, float] | None:
    """The ``depth`` files nearest ``path``'s centroid in ``vectors``, plus the files ``also``
    (those related by links) scored the same way; None when ``path`` has no vector there."""
    centroid = _centroid(store, vectors, path)
    if centroid is None:
        return None
    similarity = _nearest_files(store, vectors, centroid, path, depth)
    missing = [p for p in also if p not in similarity]
    similarity.update(_file_similarities(store, vectors, centroid, missing))
    return similarity


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
