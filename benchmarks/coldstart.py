"""What one fresh ``vaultseek search`` process spends its time on, stage by stage.

Run as a child process by the benchmark (``python -m benchmarks.coldstart --db … QUERY``);
prints one JSON object of milliseconds per stage. Stages: importing the engine (numpy, apsw,
our modules), opening the database, loading the embedding model, loading the vector matrix,
and the query itself (BM25 + query embedding + KNN + fusion + snippets).
"""

from __future__ import annotations

import argparse
import json
import os
import time


def main() -> None:
    started = time.perf_counter()
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--vault", required=True)
    parser.add_argument("query")
    args = parser.parse_args()

    marks: dict[str, float] = {}
    # As the console script sets it for a search (cli/launcher.py): without it, numpy's import
    # starts an OpenBLAS thread per core and the import stage is not the one a search pays.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    t = time.perf_counter()
    from vaultseek.engine import open_index

    marks["import_ms"] = time.perf_counter() - t
    t = time.perf_counter()
    index = open_index(args.vault, db=args.db)
    marks["open_db_ms"] = time.perf_counter() - t
    t = time.perf_counter()
    index.embedder()
    marks["model_load_ms"] = time.perf_counter() - t
    t = time.perf_counter()
    index._sides.vector_index()
    marks["vector_load_ms"] = time.perf_counter() - t
    t = time.perf_counter()
    response = index.search(args.query)
    marks["query_ms"] = time.perf_counter() - t
    index.close()
    marks["in_process_total_ms"] = time.perf_counter() - started
    out = {key: round(value * 1000, 2) for key, value in marks.items()}
    out["results"] = len(response.results)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
