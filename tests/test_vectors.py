from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultseek.storage.vectors import VectorIndex, quantize


def brute_force(index: VectorIndex, query: np.ndarray, k: int) -> list[int]:
    """Score every row exactly (the index's own float32 cosine) and sort them all."""
    scores = index.scores(query, np.arange(len(index)))
    ids = index.ids
    return [int(ids[i]) for i in sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))[:k]]


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40), st.integers(0, 2**31 - 1))
def test_knn_equals_brute_force(n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    matrix = unit_rows(rng, n, 16)
    ids = rng.permutation(10 * n)[:n].astype(np.int64)
    index = VectorIndex.from_floats(ids, matrix)
    query = matrix[rng.integers(n)]
    assert [i for i, _s in index.search(query, k)] == brute_force(index, query, k)


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
    index = VectorIndex.from_floats(ids, matrix)
    query = matrix[rng.integers(n - 40, n)]  # a row in the partial last block
    assert n // 64 > 4 * k  # the bounded path runs
    assert [i for i, _s in index.search(query, k)] == brute_force(index, query, k)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.sampled_from([8, 64, 256]), st.booleans(), st.integers(0, 2**31 - 1))
def test_the_scan_is_within_its_slack_of_the_exact_cosine(n: int, dim: int, spiky: bool, seed: int) -> None:
    """The int8 scan's bound holds for any rows and query, spiky ones (one large component,
    the worst case for rounding the rest) included; the exact top k is then never missed."""
    rng = np.random.default_rng(seed)
    matrix = unit_rows(rng, n, dim)
    query = unit_rows(rng, 1, dim)[0]
    if spiky:
        matrix[:, 0] *= 40
        query[1] *= 40
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        query /= np.linalg.norm(query)
    index = VectorIndex.from_floats(np.arange(n), matrix)
    scan = index.scan(query)
    exact = index.scores(query, np.arange(n))
    assert np.all(np.abs(scan.approximate - exact) <= scan.slack)
    np.testing.assert_allclose(exact, index.vectors(np.arange(n)) @ query, atol=1e-5)
    k = int(rng.integers(1, n + 1))
    rows, floor = index.best_rows(scan, k)
    outside = np.setdiff1d(np.arange(n), rows)
    assert np.all(exact[outside] < floor)
    assert np.sort(exact)[::-1][k - 1] >= floor


def test_ties_are_broken_by_id() -> None:
    matrix = np.ones((5, 4), dtype=np.float32) / 2
    index = VectorIndex.from_floats(np.array([9, 3, 7, 1, 5]), matrix)
    assert [i for i, _s in index.search(matrix[0], 3)] == [1, 3, 5]


def test_empty_and_zero_query() -> None:
    assert VectorIndex.from_floats(np.zeros(0, dtype=np.int64), np.zeros((0, 4), dtype=np.float32)).search(np.ones(4), 3) == []
    index = VectorIndex.from_floats(np.array([1]), np.ones((1, 4), dtype=np.float32))
    assert index.search(np.zeros(4, dtype=np.float32), 3) == []
    assert index.top(index.scan(np.zeros(4, dtype=np.float32)), 3) == [(1, 0.0)]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 200), st.integers(0, 2**31 - 1))
def test_loading_codes_matches_decoding_rows(n: int, seed: int) -> None:
    """The whole-index load keeps the stored codes as they are; the unit vectors they stand
    for are those the per-row decode gives, an all-zero vector included."""
    from vaultseek.storage.store import _vector_blob, decode_codes, decode_vectors

    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, 32)).astype(np.float32) * rng.uniform(0.01, 50, (n, 1)).astype(np.float32)
    vectors[0] = 0.0
    blobs = [_vector_blob(v) for v in vectors]
    codes = decode_codes(blobs)
    assert codes.dtype == np.int8 and codes.shape == (n, 32) and codes.flags.c_contiguous
    np.testing.assert_array_equal(codes, quantize(vectors)[0])
    index = VectorIndex(np.arange(n), codes)
    assert index.dim == 32 and len(index) == n
    np.testing.assert_allclose(index.vectors(np.arange(n)), decode_vectors(blobs), atol=1e-6)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2_500, 6_000), spread=st.sampled_from([0.01, 0.03, 0.1]), k=st.integers(1, 120), seed=st.integers(0, 10_000))
def test_crowded_cosines_are_refined_and_stay_exact(n: int, spread: float, k: int, seed: int) -> None:
    """Vectors around one direction, as a contextual model's are: the first scan's margin
    holds thousands of rows, so the query's rounding error is scanned too; the top k is
    still exactly the brute force's, and the refined scan is within its (smaller) slack."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=384)
    matrix = base / np.linalg.norm(base) + rng.normal(scale=spread, size=(n, 384))
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index = VectorIndex.from_floats(np.arange(n, dtype=np.int64) * 3, matrix.astype(np.float32))
    query = (base / np.linalg.norm(base) + rng.normal(scale=spread, size=384)).astype(np.float32)
    query /= np.linalg.norm(query)
    scan = index.scan(query)
    refined = index.refine(scan)
    exact = index.scores(query, np.arange(n))
    assert refined.refined and refined.slack < scan.slack / 50
    assert np.all(np.abs(refined.approximate - exact) <= refined.slack)
    order = np.lexsort((index.ids, -exact))[:k]
    assert [i for i, _s in index.top(scan, k)] == index.ids[order].tolist()
    rows, floor = index.best_rows(scan, k)
    assert set(order.tolist()) <= set(rows.tolist()) and np.all(np.delete(exact, rows) < floor)
