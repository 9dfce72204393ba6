"""Two coordinates per note: a force layout of the nearest-neighbour graph.

The method is UMAP's, written for numpy (no numba, no compile at first use):

1. **A fuzzy graph.** Each note's nearest notes get a membership weight that falls from 1 at
   its nearest neighbour, with a per-note width chosen so the weights sum to ``log2(k)`` —
   dense and sparse regions count alike; the two directions of a pair join as a fuzzy union.
2. **Forces.** Starting from the notes' first two principal components, each round draws
   every edge with its weight as the probability: its two notes pull together, and each is
   pushed from a few notes drawn at random (negative sampling). Forces follow UMAP's curve
   ``1 / (1 + a·d^2b)`` for a minimum distance of 0.1. A round's moves are summed per note
   and applied together (numpy has no per-edge loop), so a note's step is scaled down by
   how many edges drew on it, which keeps well-linked notes from overshooting.

An edited or new note is placed without moving the others: at the similarity-weighted mean
of its nearest notes' positions (:func:`place`). ``python -m benchmarks.vaultmap`` compares
this with a PCA projection and scikit-learn's t-SNE (run time, memory, neighbourhoods kept).
"""

from __future__ import annotations

import numpy as np

_A, _B = 1.577, 0.895
"""UMAP's curve parameters for min_dist 0.1 and spread 1."""
_NEGATIVES = 4
_SEED = 7


def fuzzy_graph(neighbours: np.ndarray, similarities: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The undirected edges of the notes' nearest-neighbour graph, once each, as (heads,
    tails, weights in (0, 1])."""
    n, k = neighbours.shape
    if n == 0 or k == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, np.zeros(0, np.float32)
    distance = np.maximum(1.0 - similarities.astype(np.float64), 0.0)
    beyond = np.maximum(distance - distance[:, :1], 0.0)
    target = np.log2(k)
    low, high, width = np.zeros(n), np.full(n, np.inf), np.ones(n)
    for _ in range(40):
        total = np.exp(-beyond / width[:, None]).sum(axis=1)
        wide = total > target
        high = np.where(wide, width, high)
        low = np.where(wide, low, width)
        width = np.where(np.isinf(high), width * 2, (low + high) / 2)
    weights = np.exp(-beyond / np.maximum(width, 1e-6)[:, None]).ravel()
    heads = np.repeat(np.arange(n), k)
    tails = neighbours.ravel()
    keep = heads != tails
    heads, tails, weights = heads[keep], tails[keep], np.maximum(weights[keep], 1e-9)
    keys = np.minimum(heads, tails) * n + np.maximum(heads, tails)
    unique, inverse = np.unique(keys, return_inverse=True)
    total = np.bincount(inverse, weights=weights)
    product = np.exp(np.bincount(inverse, weights=np.log(weights)))
    twice = np.bincount(inverse) > 1
    union = np.where(twice, total - product, total)
    return unique // n, unique % n, union.astype(np.float32)


def initial(vectors: np.ndarray) -> np.ndarray:
    """The notes' first two principal components, scaled to span 10 units."""
    centred = vectors - vectors.mean(axis=0)
    if len(vectors) < 3:
        return np.zeros((len(vectors), 2), np.float32) + np.arange(len(vectors))[:, None]
    _values, axes = np.linalg.eigh(centred.T @ centred)
    start = centred @ axes[:, -2:]
    span = np.ptp(start, axis=0)
    return (10.0 * (start - start.min(axis=0)) / np.maximum(span, 1e-9)).astype(np.float32)


def epochs_for(notes: int) -> int:
    """Rounds of forces: fewer for large maps, where each round moves more notes at once."""
    return 300 if notes <= 2_000 else 200 if notes <= 10_000 else 150


def lay_out(
    heads: np.ndarray, tails: np.ndarray, weights: np.ndarray, start: np.ndarray, *, epochs: int | None = None
) -> np.ndarray:
    """Positions (notes × 2) for the graph, from ``start``."""
    n = len(start)
    y = start.astype(np.float64).copy()
    if n < 3 or not len(heads):
        return y.astype(np.float32)
    rounds = epochs or epochs_for(n)
    rng = np.random.default_rng(_SEED)
    chance = weights / weights.max()
    for round_ in range(rounds):
        rate = 1.0 - round_ / rounds
        drawn = rng.random(len(chance)) < chance
        h, t = heads[drawn], tails[drawn]
        ends = np.concatenate([h, t])
        diff = y[h] - y[t]
        d2 = (diff * diff).sum(axis=1)
        safe = np.maximum(d2, 1e-12)
        pull = np.where(d2 > 0, -2 * _A * _B * safe ** (_B - 1) / (1 + _A * safe**_B), 0.0)
        step = np.clip(pull[:, None] * diff, -4, 4)
        moves = np.concatenate([step, -step])
        pushed = np.repeat(ends, _NEGATIVES)
        others = rng.integers(0, n, len(pushed))
        away = y[pushed] - y[others]
        d2 = (away * away).sum(axis=1)
        push = np.where(others != pushed, 2 * _B / ((0.001 + d2) * (1 + _A * d2**_B)), 0.0)
        push_step = np.clip(push[:, None] * away, -4, 4)
        movers = np.concatenate([ends, pushed])
        all_moves = np.concatenate([moves, push_step])
        share = np.bincount(ends, minlength=n).astype(np.float64)
        scale = rate / np.maximum(np.sqrt(share), 1.0)
        for axis in (0, 1):
            y[:, axis] += np.bincount(movers, weights=all_moves[:, axis], minlength=n) * scale
    return y.astype(np.float32)


def place(positions: np.ndarray, neighbours: np.ndarray, similarities: np.ndarray) -> np.ndarray:
    """Positions for new or edited notes from their nearest kept notes' ``positions``:
    the mean weighted by similarity (the closest counts most)."""
    if neighbours.shape[1] == 0:
        return np.zeros((len(neighbours), 2), np.float32) + positions.mean(axis=0)
    weights = np.maximum(similarities, 0.0) ** 4 + 1e-6
    weights /= weights.sum(axis=1, keepdims=True)
    return (positions[neighbours] * weights[:, :, None]).sum(axis=1).astype(np.float32)
