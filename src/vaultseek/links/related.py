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

Every result says whether it is **close**: related by links, or its best section's cosine to
the note reaches its model's line (:data:`CLOSE`). The nearest notes of a note nothing in the
vault is about are still listed, but as what they are: when none is close, the answer says so
(:data:`NOTHING_CLOSE`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..records import RelatedNote, RelatedNotes
from ..search.fusion import convex
from ..search.linkgraph import LinkGraph
from ..search.relevance import DEEP, STATIC
from ..storage.store import Store
from ..storage.vectors import VectorIndex

WEIGHTS = {"links": 0.5, "vector": 0.5, "deep": 1.0}
"""List weights; the deep list's is multiplied by the deep tier's coverage. The deep weight
was chosen on the tune half of a proxy judged set (docs/links.md, "Related notes")."""
CLOSE: dict[str, float] = {STATIC: 0.63, DEEP: 0.86}
"""Model name → the cosine (a section's to the note's centroid, less its hub offset for the
deep model) from which two notes are close in meaning. Each is the line that 95 % of notes from
unrelated collections stay under with their nearest note in every English vault measured, on
the tune half (``python -m benchmarks.closeness``; docs/links.md, "Related notes"). A model not
named here cannot tell close from near."""
NOTHING_CLOSE = "nothing in the vault is closely related to this note: no links, and no note close in meaning; the nearest notes are shown"
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
    models: tuple[str | None, str | None] = (None, None),
) -> RelatedNotes:
    """The ``k`` notes most related to ``path`` (an indexed file), best first. ``deep`` is
    the deep tier's vector matrix, covering ``deep_coverage`` of the chunks; ``models`` names
    the static and the deep model, for their :data:`CLOSE` lines."""
    depth = max(2 * k, 20)
    linked = [n for n in graph.related(path) if n.path != path][:depth]
    by_path = {n.path: n for n in linked}
    notes = list(notices)
    also = [n.path for n in linked]
    near = Meaning.of(store, vectors, path, depth, also) if vectors is not None else None
    if vectors is not None and near is None:
        notes.append(f"{path} has no text to compare; related by links only")
    deep_near = Meaning.of(store, deep, path, depth, also) if deep is not None else None
    similarity = dict(near.scores) if near else {}
    meaning = dict(deep_near.scores) if deep_near else {}
    names = list(dict.fromkeys([*by_path, *similarity, *meaning]))
    ids = {name: i for i, name in enumerate(names)}
    lists = {
        "links": [(ids[n.path], n.score) for n in linked],
        "vector": _ranked(ids, similarity),
        "deep": _ranked(ids, meaning),
    }
    fused = convex(lists, weights={**weights, "deep": weights["deep"] * deep_coverage})[:k]
    shown = [names[f.item] for f in fused]
    if near is not None:  # every note shown gets both cosines, so each can be told close or not
        similarity.update(near.scores_of(store, [n for n in shown if n not in similarity]))
    if deep_near is not None:
        meaning.update(deep_near.scores_of(store, [n for n in shown if n not in meaning]))
    titles = store.titles(shown)
    lines = Lines(
        CLOSE.get(models[0] or "") if near else None,
        CLOSE.get(models[1] or "") if deep_near else None,
    )
    results = []
    for f, name in zip(fused, shown, strict=True):
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
                close=lines.close(link is not None, similarity.get(name), meaning.get(name)),
            )
        )
    nothing_close = bool(results) and all(r.close is False for r in results)
    if nothing_close:
        notes.append(NOTHING_CLOSE)
    return RelatedNotes(path, tuple(results), tuple(notes), nothing_close=nothing_close)


def closeness(
    store: Store,
    graph: LinkGraph,
    vectors: VectorIndex | None,
    path: str,
    others: Sequence[str],
    *,
    deep: VectorIndex | None = None,
    models: tuple[str | None, str | None] = (None, None),
) -> dict[str, bool | None]:
    """Whether each of ``others`` is close to ``path``, as :func:`find_related` tells it for
    its results: related by links, or at or above the line of the best model that compared
    the two (for notes another view found, such as the map's nearest)."""
    related = {n.path for n in graph.related(path)}
    sides = []
    for side, model in ((vectors, models[0]), (deep, models[1])):
        centroid = _centroid(store, side, path) if side is not None else None
        line = CLOSE.get(model or "") if centroid is not None else None
        scores = _file_similarities(store, side, centroid, others) if side is not None and centroid is not None else {}
        sides.append((line, scores))
    lines = Lines(sides[0][0], sides[1][0])
    return {
        other: lines.close(other in related, sides[0][1].get(other), sides[1][1].get(other))
        for other in others
    }


@dataclass(frozen=True, slots=True)
class Lines:
    """The :data:`CLOSE` lines of the models that compared a note with the others (None: that
    side did not compare them, or its model has no line)."""

    static: float | None
    deep: float | None

    def close(
        self, linked: bool, similarity: float | None, deep_similarity: float | None
    ) -> bool | None:
        """Whether a note so related is close: linked, or at or above the line of the best
        model that compared the two (the deep model when both have its vectors); None when no
        model with a line compared them and no link relates them."""
        if linked:
            return True
        if self.deep is not None and deep_similarity is not None:
            return deep_similarity >= self.deep
        if self.static is not None and similarity is not None:
            return similarity >= self.static
        return None


@dataclass(frozen=True, slots=True)
class Meaning:
    """One model's view of a note: its centroid (the mean of its sections' vectors) and the
    files nearest it, each scored by its best section."""

    vectors: VectorIndex
    centroid: np.ndarray
    scores: Mapping[str, float]

    @classmethod
    def of(
        cls, store: Store, vectors: VectorIndex, path: str, depth: int, also: Sequence[str] = ()
    ) -> Meaning | None:
        """The ``depth`` files nearest ``path``, plus the files ``also`` (those related by
        links) scored the same way; None when ``path`` has no vector here."""
        centroid = _centroid(store, vectors, path)
        if centroid is None:
            return None
        scores = nearest_files(store, vectors, centroid, depth, leave_out=path)
        scores.update(
            _file_similarities(store, vectors, centroid, [p for p in also if p not in scores])
        )
        return cls(vectors, centroid, scores)

    def scores_of(self, store: Store, paths: Sequence[str]) -> dict[str, float]:
        """Each of ``paths``' best section score against the centroid."""
        return _file_similarities(store, self.vectors, self.centroid, paths)


def _ranked(ids: Mapping[str, int], scores: Mapping[str, float]) -> list[tuple[int, float]]:
    return sorted(((ids[p], s) for p, s in scores.items()), key=lambda item: (-item[1], item[0]))


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


def nearest_files(
    store: Store,
    vectors: VectorIndex,
    centroid: np.ndarray,
    depth: int,
    *,
    leave_out: str | None = None,
) -> dict[str, float]:
    """The ``depth`` files (other than ``leave_out``) whose best section is nearest
    ``centroid`` (unit length), each with that section's score."""
    hits = vectors.search(centroid, min(len(vectors), depth * _SECTIONS_PER_NOTE))
    files = store.chunk_paths([chunk_id for chunk_id, _s in hits])
    best: dict[str, float] = {}
    for chunk_id, score in hits:
        name = files.get(chunk_id)
        if name is not None and name != leave_out and name not in best:
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
