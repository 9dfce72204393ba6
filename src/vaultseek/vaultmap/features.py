"""What places a note on the map: one vector per note, and its nearest notes.

A note's vector is the mean of its sections' vectors (the same centroid related notes use),
in each of the index's two spaces:

* **static** — the bundled model's vector of every chunk, always there;
* **deep** — the deep tier's, for the chunks it has reached.

The two mix by concatenation: each space is centred (the deep model's vectors all lean one
way, which would make every pair look alike) and scaled to unit length, then weighted, so the
cosine of two notes' features is ``STATIC_WEIGHT × static cosine + DEEP_WEIGHT × deep
cosine``. A note the deep tier has not reached yet borrows the deep half of its nearest
static neighbours that have one (the mean of up to ``_BORROWED`` of them): it sits where its
words put it until its own deep vectors arrive. With no deep vectors at all the map is
static alone.

The features are then reduced to ``DIMENSIONS`` by PCA (the covariance's top eigenvectors),
which keeps the kept vectors small and the clustering cheap on 20k notes; the basis is kept
with the map so that an edited note is projected the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

STATIC_WEIGHT = 0.4
DEEP_WEIGHT = 0.6
"""How much each space counts once both are there: the deep model, the better reader of
meaning, a little more. Not tuned: on the tune half of the tldr language groups the static
weight moved the clusters' agreement (ARI 0.57–0.67) with no trend (docs/map.md, "Measured")."""
DEEP_READY = 0.9
"""The share of notes with deep vectors from which the map uses them. Below it (the hours
after a first index) the map stays static: mixing a few deep notes in would re-lay it out
every time the deep tier moved on."""
DIMENSIONS = 128
"""Dimensions kept by PCA: on the 16,894-note benchmark vault (static, 256 dimensions) a
note's ten nearest found in 128 are 85% of those in the full space (48: 56%, 96: 77%, 192:
94%) for the same search time (``python -m benchmarks.vaultmap methods``)."""
NEIGHBOURS = 15
"""Nearest notes kept per note: the layout's graph, bridges, density and missing links."""
_BORROWED = 5
_BLOCK = 2048
_SAMPLED = 1024
_READ = 4096


@dataclass(frozen=True, slots=True)
class Centres:
    """The mean note vector of each space, subtracted before mixing. Kept with a map: an
    edit must not shift every other note's features."""

    static: np.ndarray
    deep: np.ndarray | None = None


@dataclass(frozen=True, slots=True)
class Basis:
    """The PCA projection a map was made with: ``(x - mean) @ axes`` then unit length."""

    mean: np.ndarray
    axes: np.ndarray
    space: str
    centres: Centres

    def project(self, full: np.ndarray) -> np.ndarray:
        return unit_rows((full - self.mean) @ self.axes)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


def note_means(
    notes: int, owners: np.ndarray, read: Callable[[np.ndarray], np.ndarray], rows: np.ndarray, dim: int
) -> tuple[np.ndarray, np.ndarray]:
    """The mean vector of each of ``notes`` notes, over the vectors ``read(rows)``
    (``owners[i]`` is the note of ``rows[i]``), and which notes had any row. Read ``_READ``
    rows at a time: the sums are all that is held, not a float copy of every stored vector (on
    50k chunks that copy, in fresh memory, cost more than the sums)."""
    count = np.bincount(owners, minlength=notes).astype(np.float32)
    sums = np.zeros((notes, dim), dtype=np.float32)
    for start in range(0, len(rows), _READ):
        block = owners[start : start + _READ]
        starts = np.flatnonzero(np.r_[True, np.diff(block) != 0])
        runs = np.add.reduceat(read(rows[start : start + _READ]), starts, axis=0)
        firsts = block[starts]
        if len(np.unique(firsts)) == len(firsts):
            sums[firsts] += runs
        else:  # a note's rows apart within the block
            np.add.at(sums, firsts, runs)
    present = count > 0
    sums[present] /= count[present, None]
    return sums, present


def full_features(
    static: np.ndarray, deep: np.ndarray | None, has_deep: np.ndarray, centres: Centres | None = None
) -> tuple[np.ndarray, str, Centres]:
    """The notes' mixed vectors (before reduction), the name of their space and the centres
    subtracted (``centres`` if given: a kept map's). ``static`` holds every note's mean static
    vector; ``deep`` the mean deep vectors, meaningful where ``has_deep``."""
    static_centre = centres.static if centres is not None else static.mean(axis=0)
    static_part = unit_rows(static - static_centre)
    if deep is None or not len(has_deep) or has_deep.mean() < DEEP_READY:
        return static_part, "static", Centres(static_centre)
    deep_centre = centres.deep if centres is not None and centres.deep is not None else deep[has_deep].mean(axis=0)
    deep_part = np.zeros_like(deep, dtype=np.float32)
    deep_part[has_deep] = unit_rows(deep[has_deep] - deep_centre)
    missing = np.flatnonzero(~has_deep)
    if len(missing):
        donors = np.flatnonzero(has_deep)
        for start in range(0, len(missing), _BLOCK):
            block = missing[start : start + _BLOCK]
            sims = static_part[block] @ static_part[donors].T
            take = min(_BORROWED, len(donors))
            nearest = np.argpartition(-sims, take - 1, axis=1)[:, :take]
            deep_part[block] = unit_rows(deep_part[donors[nearest]].mean(axis=1))
    mixed = np.hstack([static_part * np.sqrt(STATIC_WEIGHT), deep_part * np.sqrt(DEEP_WEIGHT)])
    return mixed.astype(np.float32), "static+deep", Centres(static_centre, deep_centre)


def fit_basis(full: np.ndarray, space: str, centres: Centres, dimensions: int = DIMENSIONS) -> Basis:
    """The PCA basis of ``full`` (notes × dim): its covariance's top eigenvectors."""
    mean = full.mean(axis=0).astype(np.float32)
    centred = full - mean
    covariance = (centred.T @ centred).astype(np.float64)
    values, vectors = np.linalg.eigh(covariance)
    keep = min(dimensions, full.shape[1], max(len(full) - 1, 1))
    axes = vectors[:, np.argsort(values)[::-1][:keep]].astype(np.float32)
    return Basis(mean=mean, axes=axes, space=space, centres=centres)


def nearest(vectors: np.ndarray, k: int = NEIGHBOURS, *, among: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` nearest rows of ``among`` (default: the rows themselves, self left
    out) by cosine, best first: (indices, similarities), both (rows × k). Exact, in blocks.

    A full sort of each row's similarities would dominate (20k × 20k values); instead each
    row's k-th best among ``_SAMPLED`` random columns is a floor that the true k best all
    reach, so only the few hundred values above it are sorted."""
    others = vectors if among is None else among
    k = min(k, len(others) - (1 if among is None else 0))
    if k <= 0:
        return np.zeros((len(vectors), 0), np.int64), np.zeros((len(vectors), 0), np.float32)
    found = np.empty((len(vectors), k), dtype=np.int64)
    sims = np.empty((len(vectors), k), dtype=np.float32)
    sample = np.random.default_rng(3).choice(len(others), size=min(_SAMPLED, len(others)), replace=False)
    for start in range(0, len(vectors), _BLOCK):
        block = vectors[start : start + _BLOCK] @ others.T
        if among is None:
            block[np.arange(len(block)), np.arange(start, start + len(block))] = -np.inf
        top, top_sims = _top(block, sample, k)
        found[start : start + len(block)] = top
        sims[start : start + len(block)] = top_sims
    return found, sims


def _top(block: np.ndarray, sample: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best columns of each row of ``block``, best first."""
    if len(sample) <= 4 * k or block.shape[1] <= 4 * len(sample):
        top = np.argpartition(-block, k - 1, axis=1)[:, :k]
        values = np.take_along_axis(block, top, axis=1)
        order = np.argsort(-values, axis=1)
        return np.take_along_axis(top, order, axis=1), np.take_along_axis(values, order, axis=1)
    floor = -np.partition(-block[:, sample], k - 1, axis=1)[:, k - 1]
    rows, cols = np.nonzero(block >= floor[:, None])
    values = block[rows, cols]
    order = np.lexsort((-values, rows))
    rows, cols, values = rows[order], cols[order], values[order]
    take = np.searchsorted(rows, np.arange(len(block)))[:, None] + np.arange(k)
    return cols[take], values[take]
