"""``python -m benchmarks.hubs``: how often one chunk lands in the top ten of unrelated queries.

A *hub* is a chunk near everything (``search/hubs.py``). For each judged set's index, every
**foreign** query — the other vault families' judged questions, the questions of the BEIR
collections, ``unrelated.jsonl``'s test half and random pairs of words drawn from SciFact's
abstracts — is answered by each list on its own (BM25, the static vectors, the deep vectors
with and without the hub offsets) and by the default hybrid search, as sections and as notes,
and per list the table gives:

- **hub rate**: the share of queries whose top ten holds the list's busiest chunk (in the
  note view's row, its busiest note);
- **N10 skew**: the skewness of how often each chunk is in a top ten (0 for an even spread;
  the usual measure of hubness);
- **busy slots**: the share of top-ten places taken by chunks found by more than 2 % of the
  queries.

It also gives the hybrid's nDCG@10 on the set's tune half with and without the offsets, the
price of the counterweight. The indexes are those ``python -m benchmarks.coverage`` reads,
with their deep vectors (``vaultseek deep``); the probes are stored by ``vaultseek deep``.

    python -m benchmarks.hubs --data ../shared/data --workdir DIR --sets tldr-de,psdocs-en \\
        [--pairs 500]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path

import numpy as np

from benchmarks.coverage import HYBRID, golden_source
from vaultseek.engine import Index, open_index
from vaultseek.evaluation.harness import run_configurations
from vaultseek.search.candidates import lexical_hits
from vaultseek.search.hybrid import VectorsUnavailable
from vaultseek.text.lexical import parse_query

GOLDEN = Path(__file__).resolve().parent / "golden"
BEIR = ("scifact", "cranfield", "medline", "cisi", "cacm", "npl", "lisa")


def foreign_queries(data: Path, family: str, pairs: int, seed: int = 7) -> list[str]:
    """Queries nothing in a ``family`` vault answers: other families' judged questions, the
    BEIR collections' questions, the unrelated prompts' test half, and random word pairs."""
    out: list[str] = []
    for path in sorted(GOLDEN.glob("*.jsonl")):
        lines = [json.loads(line) for line in path.open(encoding="utf-8")]
        if path.name == "unrelated.jsonl":
            out += [line["query"] for line in lines if line["split"] == "test" and family in line["unrelated_to"]]
        elif not path.name.startswith(family):
            out += [line["query"] for line in lines]
    for name in BEIR:
        queries = data / "ir" / name / "queries.jsonl"
        if queries.is_file():
            out += [json.loads(line)["text"] for line in queries.open(encoding="utf-8")]
    rng = random.Random(seed)
    words: set[str] = set()
    corpus = data / "ir" / "scifact" / "corpus.jsonl"
    if corpus.is_file():
        with corpus.open(encoding="utf-8") as abstracts:
            for _n, line in zip(range(2000), abstracts, strict=False):
                words.update(re.findall(r"[a-z]{5,12}", json.loads(line)["text"].lower()))
    vocabulary = sorted(words)
    out += [f"{rng.choice(vocabulary)} {rng.choice(vocabulary)}" for _ in range(pairs)] if vocabulary else []
    return out


def hub_figures(tops: Sequence[Sequence[Hashable]]) -> tuple[float, float, float]:
    """(hub rate, N10 skew, busy slots) of a list's top tens (of chunks, or of notes)."""
    counts = Counter(item for top in tops for item in set(top))
    if not counts:
        return 0.0, 0.0, 0.0
    n10 = np.array(list(counts.values()), dtype=np.float64)
    skew = float(((n10 - n10.mean()) ** 3).mean() / n10.std() ** 3) if n10.std() else 0.0
    busy = {item for item, c in counts.items() if c > 0.02 * len(tops)}
    slots = sum(len(top) for top in tops) or 1
    return float(n10.max()) / len(tops), skew, sum(item in busy for top in tops for item in top) / slots


def lists_of(index: Index) -> dict[str, Callable[[str], Sequence[Hashable]]]:
    """Each list on its own, and the default hybrid, as query → its top ten chunk ids; and the
    default search's note view, as query → its top ten notes' paths."""
    out: dict[str, Callable[[str], Sequence[Hashable]]] = {
        "bm25": lambda q: [i for i, _s in lexical_hits(index.store, parse_query(q), 10)],
    }
    try:
        static, model = index._sides.vector_side()
        out["vector"] = lambda q: [i for i, _s in static.search(model.embed_one(q), 10)]
    except VectorsUnavailable:
        pass
    try:
        deep, deep_model, _coverage = index._sides.deep_side()
    except VectorsUnavailable:
        deep = None
    if deep is not None:
        offsets = deep.offsets

        def plain(q: str) -> list[int]:
            deep.offsets = None
            try:
                return [i for i, _s in deep.search(deep_model.embed_one(q), 10)]
            finally:
                deep.offsets = offsets

        out["deep, plain cosine"] = plain
        if offsets is not None:
            out["deep, with hub offsets"] = lambda q: [i for i, _s in deep.search(deep_model.embed_one(q), 10)]
    out["hybrid"] = lambda q: [r.chunk_id for r in index.search(q, k=10, view="chunks").results]
    out["hybrid, notes"] = lambda q: [n.path for n in index.search(q, k=10).notes]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hubs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--sets", required=True, help="judged sets whose indexes to measure, e.g. tldr-de,psdocs-en")
    parser.add_argument("--pairs", type=int, default=500, help="random word pairs among the foreign queries")
    args = parser.parse_args(argv)
    data, workdir = Path(args.data), Path(args.workdir)
    for name in args.sets.split(","):
        source = golden_source(name, data, workdir, "tune")
        if not source.db.is_file():
            print(f"error: no index {source.db} for {name}", file=sys.stderr)
            return 2
        queries = foreign_queries(data, name.split("-")[0], args.pairs)
        with open_index(source.vault, db=source.db, read_only=True) as index:
            print(f"{name}: {len(queries):,} foreign queries, {index.status().chunks:,} chunks")
            for label, top_of in lists_of(index).items():
                rate, skew, busy = hub_figures([top_of(q) for q in queries])
                print(f"  {label:24} hub rate {rate:.3f}  N10 skew {skew:6.2f}  busy slots {busy:.3f}", flush=True)
            deep = index._sides.deep_side()[0] if index.config.deep_tier and index.deep_status() else None
            if deep is not None and deep.offsets is not None:
                (weighed,) = run_configurations(index, source.queries, source.document_of, (HYBRID,))
                offsets, deep.offsets = deep.offsets, None
                try:
                    (plain,) = run_configurations(index, source.queries, source.document_of, (HYBRID,))
                finally:
                    deep.offsets = offsets
                print(f"  hybrid nDCG@10 on the tune half: {weighed.scores['nDCG@10']:.3f} with the hub offsets, "
                      f"{plain.scores['nDCG@10']:.3f} without")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
