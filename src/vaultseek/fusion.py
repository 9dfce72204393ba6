"""Reciprocal Rank Fusion, which also records why each result ranked where it did.

RRF (Cormack et al., 2009) scores a document by ``Σ weight_l / (k + rank_l)`` over the
lists ``l`` it appears in, 1-based ranks. It needs no score calibration between BM25 and
cosine similarity, which live on unrelated scales. The per-list ranks are kept in the result
itself, so every surface shows the same explanation the fusion actually used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_K = 60
FUSION_METHODS = ("rrf", "convex")
"""``rrf``: Reciprocal Rank Fusion on ranks. ``convex``: each list's scores min-max
normalised over its candidates, then ``Σ weight × normalised score``."""
DEFAULT_WEIGHTS: dict[str, dict[str, float]] = {
    "rrf": {"bm25": 1.0, "vector": 1.0},
    "convex": {"bm25": 0.75, "vector": 0.25},
}
"""Per-method list weights when none are configured. RRF keeps the seed design's equal
weights; the convex weights were tuned on SciFact's train split (docs/quality.md)."""


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
) -> list[Fused]:
    """Score-normalised convex combination of lists of ``(item, score)``, best first.

    Each list's scores (higher = better) are mapped to [0, 1] by min-max over that list's own
    candidates, so BM25's unbounded scores and cosine similarities become comparable; an item
    missing from a list gets 0 from it. Ties as in :func:`rrf`."""
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, items in lists.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        if not items:
            continue
        values = [score for _item, score in items]
        low, high = min(values), max(values)
        span = high - low
        for rank, (item, score) in enumerate(items, start=1):
            if name in ranks.setdefault(item, {}):
                continue
            ranks[item][name] = rank
            normalised = (score - low) / span if span > 0 else 1.0
            scores[item] = scores.get(item, 0.0) + weight * normalised
    order = sorted(scores, key=lambda i: (-scores[i], min(ranks[i].values()), i))
    return [Fused(i, scores[i], ranks[i]) for i in order]
