"""Exact nearest-neighbour search over all chunk vectors, held in memory.

At vault scale (≤ ~100k chunks of 256 floats) one matrix-vector product is exact and takes a
few milliseconds — several times faster than sqlite-vec's brute force over the same rows and
with no index to build or keep in sync (the benchmark measures both in one run).
"""

from __future__ import annotations

import numpy as np


class VectorIndex:
    """Unit-length float32 vectors and the chunk id of each.

    The matrix is kept transposed (one row per dimension): ``query @ matrix_t`` streams each
    dimension's values contiguously, which BLAS does about twice as fast as the row-per-vector
    product here (1.1 ms against 2.3 ms at 50k × 256, measured on this 2-core machine)."""

    def __init__(self, ids: np.ndarray, matrix: np.ndarray) -> None:
        if len(ids) != len(matrix):
            raise ValueError("ids and matrix rows differ in number")
        self.ids = np.ascontiguousarray(ids, dtype=np.int64)
        self.matrix_t = np.ascontiguousarray(np.asarray(matrix, dtype=np.float32).T)

    @classmethod
    def from_transposed(cls, ids: np.ndarray, matrix_t: np.ndarray) -> VectorIndex:
        """Wrap an already transposed float32 matrix (one row per dimension) without a copy."""
        index = cls.__new__(cls)
        index.ids = np.ascontiguousarray(ids, dtype=np.int64)
        index.matrix_t = np.ascontiguousarray(matrix_t, dtype=np.float32)
        if index.matrix_t.ndim != 2 or (len(index.ids) and index.matrix_t.shape[1] != len(index.ids)):
            raise ValueError("ids and matrix columns differ in number")
        return index

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def matrix(self) -> np.ndarray:
        """One row per vector (a view)."""
        return self.matrix_t.T

    @property
    def dim(self) -> int:
        return int(self.matrix_t.shape[0]) if len(self.ids) else 0

    def search(
        self, query: np.ndarray, k: int, *, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` (chunk id, cosine similarity) pairs most similar to ``query`` (rows and
        query are unit length), best first, ties broken by smaller id for reproducibility.
        ``allowed`` (chunk ids) masks the rows first, so all ``k`` come from inside it."""
        n = len(self.ids)
        if k <= 0 or not n or not np.any(query):
            return []
        scores = np.asarray(query, dtype=np.float32) @ self.matrix_t
        ids = self.ids
        if allowed is not None:
            rows = np.flatnonzero(np.isin(ids, allowed, assume_unique=True))
            scores, ids = scores[rows], ids[rows]
            n = len(rows)
            if not n:
                return []
        if k < n:
            # The k-th best score, then everything at least as good (ties included, so the
            # id tie-break below sees them all): cheaper than argpartition over all n.
            kth = np.partition(scores, n - k)[n - k]
            candidates = np.flatnonzero(scores >= kth)
        else:
            candidates = np.arange(n)
        order = candidates[np.lexsort((ids[candidates], -scores[candidates]))[:k]]
        return [(int(i), float(s)) for i, s in zip(ids[order], scores[order])]
