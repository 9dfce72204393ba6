"""The brute-force KNN baselines our numpy vector search is measured against.

Why: the seed design searches embeddings with a plain numpy matrix instead of a vector extension.
That choice has to be justified with numbers, against the obvious alternative: sqlite-vec's
``vec0`` virtual table, which also does an exact (brute-force) scan, loaded into apsw (the system
``sqlite3`` module here cannot load extensions). Both baselines report the same latency figures
and the ids they found, so a run also checks that they agree on the answer.

``python -m benchmarks.baselines`` measures both at the seed scale (50,000 × 256) on random
unit vectors and prints a small table.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from vaultseek.evaluation.metrics import percentile


@dataclass(frozen=True)
class LatencyStats:
    """Per-query latency of one KNN method, plus what it returned."""

    p50_ms: float
    p99_ms: float
    mean_ms: float
    n: int
    """Timed queries (queries × repeats)."""
    ids: np.ndarray = field(repr=False, compare=False)
    """(queries, k) matrix row indices, nearest first, from the first repeat."""
    setup_ms: float = 0.0
    """One-off cost before the first query: for vec0, creating the table and inserting every row;
    for numpy, normalizing the matrix."""


def random_unit_vectors(rows: int, dim: int, *, seed: int = 0) -> np.ndarray:
    """``rows`` random float32 vectors of length 1: stand-ins for embeddings, no model needed."""
    vectors = np.random.default_rng(seed).standard_normal((rows, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def mean_overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Average share of ids two (queries, k) result matrices have in common, query by query.

    Order within the top k is ignored: two exact searches may order near-equal distances
    differently (float32 rounding differs between a BLAS dot product and vec0's loop).
    """
    if a.shape != b.shape:
        raise ValueError(f"result shapes differ: {a.shape} vs {b.shape}")
    if a.size == 0:
        return 1.0
    shared = [len(set(x.tolist()) & set(y.tolist())) for x, y in zip(a, b, strict=True)]
    per_query: int = a.shape[1]
    return sum(shared) / (len(shared) * per_query)


def _check_inputs(
    matrix: np.ndarray, queries: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, int]:
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    if matrix.ndim != 2 or queries.ndim != 2:
        raise ValueError("matrix and queries must both be 2-D (rows × dim)")
    if matrix.shape[1] != queries.shape[1]:
        raise ValueError(f"dimensions differ: matrix {matrix.shape[1]}, queries {queries.shape[1]}")
    if matrix.shape[0] == 0 or k < 1:
        raise ValueError("need at least one row and k >= 1")
    return matrix, queries, min(k, matrix.shape[0])


def _stats(latencies: list[float], ids: np.ndarray, setup_ms: float) -> LatencyStats:
    return LatencyStats(
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
        mean_ms=sum(latencies) / len(latencies),
        n=len(latencies),
        ids=ids,
        setup_ms=setup_ms,
    )


def sqlite_vec_knn_latency(
    matrix: np.ndarray, queries: np.ndarray, k: int = 30, *, repeats: int = 1
) -> LatencyStats:
    """Exact KNN with a sqlite-vec ``vec0`` table (cosine distance) in an in-memory apsw database.

    The table holds ``matrix`` row ``i`` under rowid ``i``. One untimed query runs first so that
    statement preparation is not charged to the first timed one; then every query is timed from
    execute to the last row fetched, ``repeats`` times over. ``setup_ms`` is the table's create
    and insert time. Raises ImportError when sqlite-vec is not installed.
    """
    import apsw

    try:
        import sqlite_vec
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("sqlite-vec is not installed: pip install 'vaultseek[bench]'") from exc
    matrix, queries, k = _check_inputs(matrix, queries, k)
    conn = apsw.Connection(":memory:")
    try:
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        start = time.perf_counter()
        conn.execute(
            f"CREATE VIRTUAL TABLE vectors USING vec0("
            f"embedding float[{matrix.shape[1]}] distance_metric=cosine)"
        )
        with conn:
            conn.executemany(
                "INSERT INTO vectors(rowid, embedding) VALUES (?, ?)",
                ((i, matrix[i].tobytes()) for i in range(matrix.shape[0])),
            )
        setup_ms = (time.perf_counter() - start) * 1000
        sql = "SELECT rowid FROM vectors WHERE embedding MATCH ? AND k = ? ORDER BY distance"
        conn.execute(sql, (queries[0].tobytes(), k)).fetchall()
        ids = np.empty((queries.shape[0], k), dtype=np.int64)
        latencies: list[float] = []
        for repeat in range(max(1, repeats)):
            for i, query in enumerate(queries):
                blob = query.tobytes()
                t0 = time.perf_counter()
                rows = conn.execute(sql, (blob, k)).fetchall()
                latencies.append((time.perf_counter() - t0) * 1000)
                if repeat == 0:
                    ids[i] = np.fromiter((row[0] for row in rows), dtype=np.int64, count=k)
        return _stats(latencies, ids, setup_ms)
    finally:
        conn.close()


def numpy_knn_latency(
    matrix: np.ndarray, queries: np.ndarray, k: int = 30, *, repeats: int = 1
) -> LatencyStats:
    """Exact KNN by cosine: normalized dot product, then argpartition and a sort of the top k.

    This is the shape of the seed design's vector search. ``setup_ms`` is normalizing the
    matrix (done once per index load); each timed query includes normalizing the query vector.
    """
    matrix, queries, k = _check_inputs(matrix, queries, k)
    start = time.perf_counter()
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms == 0, 1, norms)
    setup_ms = (time.perf_counter() - start) * 1000

    def search(query: np.ndarray) -> np.ndarray:
        q = query / (np.linalg.norm(query) or 1.0)
        scores = unit @ q
        if k < scores.shape[0]:
            top = np.argpartition(-scores, k - 1)[:k]
        else:
            top = np.arange(scores.shape[0])
        return top[np.argsort(-scores[top], kind="stable")]

    search(queries[0])
    ids = np.empty((queries.shape[0], k), dtype=np.int64)
    latencies: list[float] = []
    for repeat in range(max(1, repeats)):
        for i, query in enumerate(queries):
            t0 = time.perf_counter()
            top = search(query)
            latencies.append((time.perf_counter() - t0) * 1000)
            if repeat == 0:
                ids[i] = top
    return _stats(latencies, ids, setup_ms)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure vec0 and numpy brute-force KNN on random unit vectors and print a table."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.baselines", description=main.__doc__
    )
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("-k", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    matrix = random_unit_vectors(args.rows, args.dim, seed=args.seed)
    queries = random_unit_vectors(args.queries, args.dim, seed=args.seed + 1)
    try:
        vec = sqlite_vec_knn_latency(matrix, queries, args.k, repeats=args.repeats)
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ref = numpy_knn_latency(matrix, queries, args.k, repeats=args.repeats)
    print(
        f"exact KNN, {args.rows:,} x {args.dim} float32, cosine, k={args.k}, "
        f"{args.queries} queries x {args.repeats}"
    )
    print(f"{'method':<22}{'setup ms':>10}{'p50 ms':>9}{'p99 ms':>9}{'mean ms':>9}{'n':>7}")
    for name, stats in (("sqlite-vec vec0", vec), ("numpy dot+argpartition", ref)):
        print(
            f"{name:<22}{stats.setup_ms:>10.1f}{stats.p50_ms:>9.3f}{stats.p99_ms:>9.3f}"
            f"{stats.mean_ms:>9.3f}{stats.n:>7}"
        )
    print(f"setup: vec0 = create + insert {args.rows:,} rows; numpy = normalize the matrix")
    print(f"top-{args.k} agreement (vec0 vs numpy): {mean_overlap(vec.ids, ref.ids):.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
