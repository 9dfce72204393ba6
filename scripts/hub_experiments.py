"""Hubness of each ranked list over queries that nothing in the vault answers.

A hub is a chunk that lands in the top 10 of many unrelated queries (a glossary, a credits
page, a long generic page). For an index with deep vectors, each list (BM25, static vectors,
deep vectors) answers every "foreign" query — another collection's questions and random word
pairs — and the script reports, per list: the share of queries whose top 10 holds the list's
busiest chunk (``max N10``), the skewness of the N10 distribution, and how many top-10 slots go
to chunks found by more than 2% of the queries.

    python scripts/hub_experiments.py --db DIR/ja.db --vault ../shared/data/tldr/pages.ja \\
        --foreign ../shared/data/ir/scifact --pairs 600
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from vaultseek import open_index
from vaultseek.search import hybrid
from vaultseek.text.lexical import parse_query


def foreign_queries(folders: Iterable[Path], golden: Iterable[Path], pairs: int, seed: int = 7) -> list[str]:
    """Questions of other collections (BEIR queries, golden lines) and random word pairs drawn
    from those collections' own text."""
    out: list[str] = []
    words: list[str] = []
    for folder in folders:
        for name in ("queries.jsonl", "queries_train.jsonl"):
            path = folder / name
            if path.is_file():
                out += [json.loads(line)["text"] for line in path.open(encoding="utf-8")]
        corpus = folder / "corpus.jsonl"
        if corpus.is_file():
            with corpus.open(encoding="utf-8") as lines:
                for _n, line in zip(range(2000), lines, strict=False):
                    words += re.findall(r"[a-z]{5,12}", json.loads(line)["text"].lower())
    for path in golden:
        out += [json.loads(line)["query"] for line in path.open(encoding="utf-8")]
    rng = random.Random(seed)
    vocabulary = sorted(set(words))
    out += [f"{rng.choice(vocabulary)} {rng.choice(vocabulary)}" for _ in range(pairs)] if vocabulary else []
    return out


def hub_figures(tops: list[list[int]]) -> dict[str, float]:
    counts = Counter(item for top in tops for item in set(top))
    n10 = np.array(list(counts.values()), dtype=np.float64)
    queries = max(len(tops), 1)
    skew = float(((n10 - n10.mean()) ** 3).mean() / (n10.std() ** 3)) if len(n10) > 1 and n10.std() else 0.0
    busy = {item for item, c in counts.items() if c > 0.02 * queries}
    slots = sum(len(top) for top in tops) or 1
    return {
        "max_n10": float(n10.max() / queries) if len(n10) else 0.0,
        "skew": skew,
        "busy_slot_share": sum(1 for top in tops for item in top if item in busy) / slots,
        "distinct": float(len(counts)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--vault", required=True)
    parser.add_argument("--foreign", action="append", default=[], help="a BEIR folder whose questions are foreign here")
    parser.add_argument("--golden", action="append", default=[], help="a golden file whose questions are foreign here")
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--show", type=int, default=3, help="name the busiest chunks of each list")
    args = parser.parse_args()
    queries = foreign_queries([Path(f) for f in args.foreign], [Path(g) for g in args.golden], args.pairs)
    with open_index(args.vault, db=args.db, read_only=True) as index:
        static, model = index._vector_side()
        lists: dict[str, Callable[[str], list[int]]] = {
            "bm25": lambda q: [i for i, _s in hybrid.lexical_hits(index.store, parse_query(q), 10)],
            "vector": lambda q: [i for i, _s in static.search(model.embed_one(q), 10)],
        }
        try:
            deep, deep_model, _coverage = index._deep_side()
            lists["deep"] = lambda q: [i for i, _s in deep.search(deep_model.embed_one(q), 10)]
        except hybrid.VectorsUnavailable:
            pass
        lists["hybrid"] = lambda q: [r.chunk_id for r in index.search(q, k=10).results]
        print(f"{len(queries)} foreign queries")
        for name, top_of in lists.items():
            tops = [top_of(q) for q in queries]
            figures = hub_figures(tops)
            busiest = Counter(i for top in tops for i in set(top)).most_common(args.show)
            rows = index.store.chunks_by_id([i for i, _c in busiest])
            named = ", ".join(f"{rows[i].path}#{rows[i].section[:20]} ({c})" for i, c in busiest if i in rows)
            print(f"{name:7} max N10 {figures['max_n10']:.3f}  skew {figures['skew']:6.2f}  "
                  f"busy slots {figures['busy_slot_share']:.3f}  distinct {figures['distinct']:.0f}  | {named}")


if __name__ == "__main__":
    main()
