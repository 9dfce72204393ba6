from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultseek.vectors import VectorIndex


def brute_force(ids: np.ndarray, matrix: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    """Sort every row. Scores are the index's own (``query @ matrixᵀ``): ``matrix @ query``
    sums in another order, and on exactly tied rows (coarse vectors) the last bit differs
    (n=8039, k=17, seed=8039 found it), which would test float rounding, not the selection."""
    scores = VectorIndex(ids, matrix).similarities(query)
    return [int(ids[i]) for i in sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))[:k]]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40), st.integers(0, 2**31 - 1))
def test_knn_equals_brute_force(n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = rng.permutation(10 * n)[:n].astype(np.int64)
    query = matrix[rng.integers(n)]
    assert [i for i, _s in VectorIndex(ids, matrix).search(query, k)] == brute_force(ids, matrix, query, k)


@settings(max_examples=40, deadline=None)
@given(st.integers(6_500, 12_000), st.integers(1, 25), st.booleans(), st.integers(0, 2**31 - 1))
def test_block_bounded_selection_equals_brute_force(n: int, k: int, coarse: bool, seed: int) -> None:
    """Large enough that the top k is bounded by block maxima first (``vectors.BLOCK``):
    the rows past the last whole block and many exact ties (coarse vectors) included."""
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, 8)).astype(np.float32)
    if coarse:  # few distinct values: lots of tied scores across blocks
        matrix = np.sign(matrix)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = rng.permutation(3 * n)[:n].astype(np.int64)
    query = matrix[rng.integers(n - 40, n)]  # a row in the partial last block
    assert n // 64 > 4 * k  # the bounded path runs
    assert [i for i, _s in VectorIndex(ids, matrix).search(query, k)] == brute_force(ids, matrix, query, k)


def test_ties_are_broken_by_id() -> None:
    matrix = np.ones((5, 4), dtype=np.float32) / 2
    index = VectorIndex(np.array([9, 3, 7, 1, 5]), matrix)
    assert [i for i, _s in index.search(matrix[0], 3)] == [1, 3, 5]


def test_empty_and_zero_query() -> None:
    assert VectorIndex(np.zeros(0, dtype=np.int64), np.zeros((0, 4), dtype=np.float32)).search(np.ones(4), 3) == []
    index = VectorIndex(np.array([1]), np.ones((1, 4), dtype=np.float32))
    assert index.search(np.zeros(4, dtype=np.float32), 3) == []


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 200), st.integers(0, 2**31 - 1))
def test_loading_transposed_matches_decoding_rows(n: int, seed: int) -> None:
    """The fast whole-index decode (no scale pass, transposed in one copy) gives the same unit
    vectors as the per-row decode, including an all-zero vector."""
    from vaultseek.store import _vector_blob, decode_vectors, decode_vectors_transposed

    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, 32)).astype(np.float32) * rng.uniform(0.01, 50, (n, 1)).astype(np.float32)
    vectors[0] = 0.0
    blobs = [_vector_blob(v) for v in vectors]
    rows = decode_vectors(blobs)
    matrix_t = decode_vectors_transposed(blobs)
    assert matrix_t.shape == (32, n) and matrix_t.flags.c_contiguous
    np.testing.assert_allclose(matrix_t, rows.T, atol=1e-6)
    index = VectorIndex.from_transposed(np.arange(n), matrix_t)
    assert index.dim == 32 and len(index) == n
    np.testing.assert_allclose(index.matrix, rows, atol=1e-6)
