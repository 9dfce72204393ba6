"""``python -m benchmarks.termmatch``: where term matching's milliseconds go.

Runs on the benchmark vault that ``python -m benchmarks --workdir DIR`` built (its
``vault`` and ``index.db``). For each of the benchmark's sampled queries, after warming up with
300 others as the main benchmark does, it times the whole search with term matching off and
on, then the steps ``search.fuse_with_terms`` takes: the plain fusion's head, reading its
rows, the query words' document frequencies, the trigram matching, the fusion with the
matches blended in.
Prints p50 milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from benchmarks.__main__ import _sample_queries
from vaultseek.engine import open_index
from vaultseek.search.candidates import lexical_hits, vector_hits
from vaultseek.search.combine import list_weights
from vaultseek.search.fusion import convex, convex_head
from vaultseek.search.params import SearchParams
from vaultseek.search.termmatch import (
    DEFAULT_WEIGHT,
    RERANK_DEPTH,
    blend,
    content_words,
    idf,
    match_scores,
)
from vaultseek.text.lexical import parse_query

STEPS = ("search off", "search on", "head", "rows", "frequencies", "matching", "fusion")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.termmatch", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--workdir", required=True, help="the folder `python -m benchmarks --workdir` built"
    )
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args(argv)
    vault, db = Path(args.workdir) / "vault", Path(args.workdir) / "index.db"
    if not db.is_file():
        sys.stderr.write(
            f"error: no benchmark index at {db}; run `python -m benchmarks --workdir {args.workdir}` first\n"
        )
        return 2
    with open_index(vault, db=db) as index:
        store = index.store
        vectors, model = index._sides.vector_side()
        for warm_up in _sample_queries(index, args.queries, 2):
            index.search(warm_up)
        queries = _sample_queries(index, args.queries, 1)
        print(
            f"term matching, {len(queries)} queries, weight {DEFAULT_WEIGHT}, head {RERANK_DEPTH}: p50 ms"
        )
        print("| queries | " + " | ".join(STEPS) + " |")
        print("|---|" + "---:|" * len(STEPS))
        params = SearchParams(term_match=DEFAULT_WEIGHT)
        times: dict[str, list[float]] = {step: [] for step in STEPS}
        for text in queries:
            query = parse_query(text)
            words = content_words(" ".join(query.terms))
            if not words:
                continue
            started = time.perf_counter()
            index.search(text, term_match=0)
            started = _lap(times["search off"], started)
            index.search(text, term_match=DEFAULT_WEIGHT)
            _lap(times["search on"], started)
            bm25 = lexical_hits(store, query, params.candidates)
            vec = vector_hits(store, vectors, model.embed_one(text), params.candidates, None)
            lists = {"bm25": bm25, "vector": vec}
            weights = list_weights(params)
            started = time.perf_counter()
            head = convex_head(lists, RERANK_DEPTH, weights=weights)
            started = _lap(times["head"], started)
            rows = store.chunks_by_id(head)
            started = _lap(times["rows"], started)
            frequencies = [idf(df, len(vectors)) for df in store.word_frequencies(words)]
            started = _lap(times["frequencies"], started)
            texts = [f"{r.heading_context}\n{r.text}" for r in rows.values()]
            matches = dict(zip(rows, match_scores(words, frequencies, texts).tolist(), strict=True))
            started = _lap(times["matching"], started)
            convex(lists, weights=weights, overrides={"bm25": blend(bm25, matches, DEFAULT_WEIGHT)})
            _lap(times["fusion"], started)
        cells = [f"{statistics.median(times[step]):.2f}" for step in STEPS]
        print(f"| {len(times['search on'])} | " + " | ".join(cells) + " |")
    return 0


def _lap(into: list[float], started: float) -> float:
    """Record the milliseconds since ``started``; return now, the next step's start."""
    now = time.perf_counter()
    into.append((now - started) * 1000)
    return now


if __name__ == "__main__":
    sys.exit(main())
