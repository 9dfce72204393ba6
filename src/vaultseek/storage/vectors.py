"""Exact nearest-neighbour search over all chunk vectors, held in memory as int8 codes.

The index stores each vector as int8 codes and a scale (``quantize``); the cosine of a query
and a chunk is then ``(codes · query) / ‖codes‖`` — the scale cancels. Search keeps exactly
those codes (13 MB at 50k × 256, against 51 MB as float32) and ranks in two steps:

1. **Scan**: the query is rounded to int8 too and every row's integer dot product is taken
   by ``simsimd``'s SIMD kernel. Rounding the query moves a row's cosine by at most
   ``max|q|/254 × ‖codes‖₁/‖codes‖₂ ≤ max|q|/254 × √d`` (:attr:`Scan.slack`), so the scan's
   scores are cosines to within a known margin.
2. **Exact**: only the rows the margin cannot rule out — those within ``2 × slack`` of the
   k-th best scanned score, typically 100–300 for k = 100 at 50k rows — get their exact
   float32 cosine, and the top k is taken from those. The result is the exact top k, ties
   broken by smaller id, as a full float32 product would give.

Why not numpy's float32 product: 51 MB does not fit the 32 MB L3 cache of this class of
machine, so every query streamed it from memory (1.3–1.6 ms with BLAS on both cores); the
int8 scan reads a quarter of it on one core (0.8 ms), leaves the other core free and the
cache to the rest of the search: whole hybrid searches, alternating per query in one process,
took 0.6–0.75 ms less (docs/research/benchmark-history.md). One thread: with two, simsimd's per-call
threads cost more than they saved inside the full search.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import simsimd

SCAN_THREADS = 1
"""Threads for the int8 scan. Two halve the scan alone (0.84 → 0.42 ms) but made whole
searches slower (5.0 against 3.5 ms p50): threads started per call, contending with the rest."""
REFINE_ROWS = 2_000
"""When more rows than this sit within the scan's margin of the k-th best (vectors whose
cosines crowd together, as a contextual model's do: multilingual-e5's top hundred span a few
hundredths), the query's rounding error is scanned too (:meth:`VectorIndex.refine`): a second
int8 pass that shrinks the margin ~250-fold, instead of thousands of exact cosines."""
FLOAT_MARGIN = 1e-4
"""Added to the rounding bound: float32 error in the scan's and the exact scores (≤ ~2e-5)."""


def quantize(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of float vectors → (int8 codes, float32 scale per row), ``row ≈ codes × scale``
    with ``scale = max|row| / 127`` (1 for an all-zero row)."""
    values = np.atleast_2d(np.asarray(matrix, dtype=np.float32))
    peaks = np.abs(values).max(axis=1) if values.size else np.zeros(len(values), dtype=np.float32)
    scales = np.where(peaks > 0, peaks / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(values / scales[:, None]), -127, 127).astype(np.int8)
    return codes, scales


@dataclass(frozen=True, slots=True)
class Scan:
    """One query's approximate score for every row (:meth:`VectorIndex.scan`): its cosine,
    less the row's offset when the index has one."""

    query: np.ndarray
    """The unit float32 query the exact scores use."""
    approximate: np.ndarray
    """float32, one per row: the cosine with the query rounded to int8."""
    slack: float
    """No row's exact cosine differs from its approximate one by more than this."""
    refined: bool = False
    """The query's rounding error has been scanned too (:meth:`VectorIndex.refine`)."""


class VectorIndex:
    """Every chunk's int8 codes (one row each, as stored) and its chunk id."""

    def __init__(self, ids: np.ndarray, codes: np.ndarray) -> None:
        if len(ids) != len(codes):
            raise ValueError("ids and codes differ in number")
        codes = np.asarray(codes)
        if codes.dtype != np.int8 or codes.ndim != 2:
            raise ValueError("codes must be a 2-d int8 matrix (see quantize)")
        self.ids = np.ascontiguousarray(ids, dtype=np.int64)
        self.codes = np.ascontiguousarray(codes)
        squares = np.asarray(simsimd.dot(self.codes, self.codes), dtype=np.float64) if len(codes) else np.zeros(0)
        self.inverse_norms = np.zeros(len(codes), dtype=np.float32)
        np.divide(1.0, np.sqrt(squares), out=self.inverse_norms, where=squares > 0, casting="unsafe")
        self.files: np.ndarray | None = None
        """The file id of each row (0: unknown), loaded by the first filtered search that
        needs it and kept as long as these codes (both are replaced when the index changes)."""
        self.offsets: np.ndarray | None = None
        """Per row, what its score loses in a ranking (``search/hubs.py``: a hub's reach); None:
        rows rank by their cosine. :meth:`cosines` always gives the plain cosine."""
        self.probes: np.ndarray | None = None
        """The hub probes' vectors (one unit row each) that :attr:`offsets` were measured
        against; the relevance judgment reads a query's own reach from them."""

    @classmethod
    def from_floats(cls, ids: np.ndarray, matrix: np.ndarray) -> VectorIndex:
        """An index of float vectors, quantized as the store quantizes them."""
        return cls(ids, quantize(matrix)[0])

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self.codes.shape[1]) if len(self.ids) else 0

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The unit float32 vectors of ``rows`` (row positions), one per row."""
        return self.codes[rows].astype(np.float32) * self.inverse_norms[rows][:, None]

    def scores(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The exact ranking score of each of ``rows`` (row positions) for ``query`` (unit
        length): its cosine, less its offset when the index has :attr:`offsets`."""
        exact = self._cosines(query, rows)
        return exact if self.offsets is None else exact - self.offsets[rows]

    def _cosines(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The exact cosine of ``query`` to each of ``rows``. Summed in float64, so a row's
        score does not depend on which other rows are scored with it (a float32 product's
        rounding follows the matrix's shape, and crowded cosines differ in their last bits)."""
        dots = self.codes[rows].astype(np.float64) @ np.asarray(query, dtype=np.float64)
        return (dots * self.inverse_norms[rows]).astype(np.float32)

    def rows_of(self, chunk_ids: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        """Of ``chunk_ids``, the ones this index holds and their row positions (two aligned
        arrays, in the order given)."""
        wanted = np.fromiter(chunk_ids, dtype=np.int64)
        if not len(self.ids) or not len(wanted):
            return wanted[:0], np.zeros(0, dtype=np.int64)
        positions = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
        found = self.ids[positions] == wanted
        return wanted[found], positions[found]

    def cosines(self, query: np.ndarray, chunk_ids: list[int]) -> dict[int, float]:
        """The exact cosine of ``query`` to each of ``chunk_ids`` this index holds."""
        held, rows = self.rows_of(chunk_ids)
        return dict(zip(held.tolist(), self._cosines(query, rows).tolist(), strict=True))

    def offsets_of(self, chunk_ids: list[int], scale: float = 1.0) -> dict[int, float]:
        """:attr:`offsets` (times ``scale``) of each of ``chunk_ids`` this index holds (empty
        without offsets)."""
        if self.offsets is None:
            return {}
        held, rows = self.rows_of(chunk_ids)
        return dict(zip(held.tolist(), (self.offsets[rows].astype(np.float64) * scale).tolist(), strict=True))

    def scan(self, query: np.ndarray) -> Scan:
        """Every row's score for ``query`` (unit length, not all zero) to within
        :attr:`Scan.slack`, by the int8 scan (see the module's docstring): its cosine, less
        its offset when the index has :attr:`offsets`."""
        query = np.asarray(query, dtype=np.float32)
        step = float(np.abs(query).max()) / 127.0
        if step == 0:
            return Scan(query, np.zeros(len(self.ids), dtype=np.float32), FLOAT_MARGIN)
        rounded = np.rint(query / step).astype(np.int8)[None, :]
        dots = np.asarray(simsimd.cdist(rounded, self.codes, metric="dot", threads=SCAN_THREADS, out_dtype="float32"))[0]
        dots *= self.inverse_norms
        dots *= np.float32(step)
        if self.offsets is not None:
            dots -= self.offsets
        slack = step / 2 * float(np.sqrt(self.codes.shape[1])) + FLOAT_MARGIN
        return Scan(query, dots, slack)

    def refine(self, scan: Scan) -> Scan:
        """``scan`` with the query's rounding error scanned as well: the query is the sum of
        its int8 rounding and a remainder, and the remainder rounded to int8 again leaves an
        error ~254 times smaller, so the margin shrinks by as much for one more pass."""
        if scan.refined:
            return scan
        query = scan.query
        step = float(np.abs(query).max()) / 127.0
        remainder = query - np.rint(query / step).astype(np.float32) * np.float32(step)
        fine = float(np.abs(remainder).max()) / 127.0
        if fine == 0:
            return Scan(query, scan.approximate, FLOAT_MARGIN, refined=True)
        rounded = np.rint(remainder / fine).astype(np.int8)[None, :]
        dots = np.asarray(simsimd.cdist(rounded, self.codes, metric="dot", threads=SCAN_THREADS, out_dtype="float32"))[0]
        dots *= self.inverse_norms
        dots *= np.float32(fine)
        slack = fine / 2 * float(np.sqrt(self.codes.shape[1])) + FLOAT_MARGIN
        return Scan(query, scan.approximate + dots, slack, refined=True)

    def _near(self, scan: Scan, k: int, rows: np.ndarray | None) -> tuple[Scan, np.ndarray]:
        """The refined scan if it was needed (see :data:`REFINE_ROWS`), and the positions
        within ``2 × slack`` of the k-th best (among ``rows``' scores, if given)."""
        approximate = scan.approximate if rows is None else scan.approximate[rows]
        near = _within(approximate, k, 2 * scan.slack)
        if len(near) > REFINE_ROWS and not scan.refined:
            scan = self.refine(scan)
            approximate = scan.approximate if rows is None else scan.approximate[rows]
            near = _within(approximate, k, 2 * scan.slack)
        return scan, near

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` (chunk id, cosine similarity) pairs most similar to ``query`` (unit
        length), best first, ties broken by smaller id for reproducibility. (A filtered
        search ranks its rows with :meth:`scan` and :meth:`top`.)"""
        if k <= 0 or not len(self.ids) or not np.any(query):
            return []
        return self.top(self.scan(query), k)

    def top(self, scan: Scan, k: int, *, rows: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The exact ``k`` best (chunk id, cosine) of ``scan``, only among ``rows`` (row
        positions) if given; best first, ties broken by smaller id."""
        if k <= 0 or not len(scan.approximate) or (rows is not None and not len(rows)):
            return []
        scan, near = self._near(scan, k, rows)
        picked = near if rows is None else rows[near]
        exact = self.scores(scan.query, picked)
        ids = self.ids[picked]
        order = np.lexsort((ids, -exact))[:k]
        return list(zip(ids[order].tolist(), exact[order].tolist()))  # noqa: B905 - per query: a keyword makes zip() ~0.5 µs slower

    def best_rows(self, scan: Scan, k: int) -> tuple[np.ndarray, float]:
        """``(rows, floor)``: the rows that may be among the exact ``k`` best (a superset,
        ties included), in row order, and a floor every other row's cosine is below (and
        the k-th best's is not)."""
        if k <= 0 or not len(scan.approximate):
            return np.zeros(0, dtype=np.int64), float("inf")
        scan, rows = self._near(scan, k, None)
        kth = float(np.partition(scan.approximate[rows], len(rows) - k)[len(rows) - k]) if k <= len(rows) else -np.inf
        return rows, kth - scan.slack


BLOCK = 64
"""Rows per block when :func:`_within` bounds the k-th best score by block maxima."""


def _within(scores: np.ndarray, k: int, margin: float) -> np.ndarray:
    """Positions of the scores at least the ``k``-th best minus ``margin`` (ties included),
    in position order.

    Selecting over all 50k scores (``np.partition`` copies and walks them) took a quarter
    of a millisecond. So first a lower bound: the k-th best of the maxima of 64-row blocks
    — k different rows reach it, so the k-th best score is at least that. Only the few
    hundred scores above the bound (less the margin) are then selected exactly."""
    n = len(scores)
    if k >= n:
        return np.arange(n)
    blocks = n // BLOCK
    if blocks > 4 * k:
        maxima = scores[: blocks * BLOCK].reshape(blocks, BLOCK).max(axis=1)
        bound = np.partition(maxima, blocks - k)[blocks - k]
        candidates = np.flatnonzero(scores >= bound - margin)
        kept = scores[candidates]
        kth = np.partition(kept, len(kept) - k)[len(kept) - k]
        return candidates[kept >= kth - margin]
    kth = np.partition(scores, n - k)[n - k]
    return np.flatnonzero(scores >= kth - margin)
