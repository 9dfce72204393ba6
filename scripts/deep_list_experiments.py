"""Two variations of the deep list measured on the judged tldr sets and not shipped
(docs/research/quality-attempts.md): pseudo-relevance feedback, and a second deep vector for
each note's opening. Both are grafted onto the real search for the run (the deep list's scan,
or fusion), so everything else is the default hybrid.

    python scripts/deep_list_experiments.py feedback --db DIR/de.db \
        --vault ../shared/data/tldr/pages.de --golden benchmarks/golden/tldr-de.jsonl
    python scripts/deep_list_experiments.py opening --db DIR/de.db \
        --vault ../shared/data/tldr/pages.de --golden benchmarks/golden/tldr-de.jsonl

The index needs complete deep vectors (``python -m benchmarks.golden --workdir DIR`` builds it,
``vaultseek deep --db DIR/<lang>.db --vault <pages>`` deepens it). Prints Recall@10 overall and
by kind, on the tune half unless ``--split`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from vaultseek import open_index
from vaultseek.errors import VaultseekError
from vaultseek.evaluation import metrics
from vaultseek.search import combine, hybrid

OPENING_CHARS = 300
"""How much of a file's first chunk (heading context, then text) its opening vector reads."""


def recall(index: Any, lines: list[dict[str, Any]], mode: str, before: Callable[[str], None]) -> dict[str, float]:
    """Recall@10 overall and by kind; ``before(query)`` runs ahead of each search."""
    found: dict[str, list[float]] = {"all": []}
    for line in lines:
        before(line["query"])
        ranking = metrics.first_occurrences(h.path for h in index.search(line["query"], k=10, mode=mode, view="chunks").results)
        value = metrics.recall_at_k(ranking, line["relevant"], 10)
        found["all"].append(value)
        found.setdefault(line["kind"], []).append(value)
    return {kind: round(float(np.mean(values)), 3) for kind, values in found.items()}


def feedback(index: Any, lines: list[dict[str, Any]]) -> None:
    """The deep query moved toward the mean deep vector of the first ``k`` results (of the
    deep list itself, or of the default hybrid), ``q' = q/|q| + beta * c/|c|``, then scanned
    again."""
    deep_index, deep_model, _coverage = index._sides.deep_side()
    rows = {int(chunk): row for row, chunk in enumerate(deep_index.ids)}
    plain_scan = hybrid.scan_query
    setting: dict[str, Any] = {"k": 0, "beta": 0.0, "from": None}

    def scan(vectors: Any, model: Any, text: str, pool: int, scope: Any) -> Any:
        if model is not deep_model or not setting["k"]:
            return plain_scan(vectors, model, text, pool, scope)
        query = model.embed_one(text)
        first = setting["from"] or [chunk for chunk, _score in vectors.top(vectors.scan(query), setting["k"])]
        centroid = vectors.vectors(np.array([rows[int(c)] for c in first if int(c) in rows])).mean(axis=0)
        moved = query / np.linalg.norm(query) + setting["beta"] * centroid / np.linalg.norm(centroid)
        moved = (moved / np.linalg.norm(moved)).astype(np.float32)
        result = vectors.scan(moved)
        return result, (vectors.top(result, pool) if scope is None else [])

    hybrid.scan_query = scan

    def from_hybrid(query: str) -> None:
        k, setting["k"], setting["from"] = setting["k"], 0, None
        setting["from"] = [hit.chunk_id for hit in index.search(query, view="chunks", k=10).results[:k]]
        setting["k"] = k

    print("feedback from | k | beta | deep alone | hybrid")
    for source, k, beta in [("none", 0, 0.0), ("deep", 3, 0.5), ("deep", 10, 0.5), ("deep", 5, 1.0),
                            ("hybrid", 3, 0.3), ("hybrid", 3, 0.5)]:  # fmt: skip
        setting.update(k=k, beta=beta, **{"from": None})
        before = from_hybrid if source == "hybrid" else (lambda _query: None)
        print(source, k, beta, recall(index, lines, "deep", before), recall(index, lines, "hybrid", before), flush=True)


def opening(index: Any, lines: list[dict[str, Any]]) -> None:
    """A deep vector of each file's opening, searched as a fourth list fused at a weight."""
    _deep_index, deep_model, _coverage = index._sides.deep_side()
    first: dict[str, tuple[int, str]] = {}
    for chunk, path, context, text in index.store.conn.execute(
        "SELECT c.id, f.path, c.heading_context, c.text FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"
    ):
        first.setdefault(path, (chunk, f"{context}\n{text}"))
    paths = sorted(first)
    openings = deep_model.embed_passages([first[p][1][:OPENING_CHARS] for p in paths])
    openings /= np.linalg.norm(openings, axis=1, keepdims=True) + 1e-9
    ids = np.array([first[p][0] for p in paths])
    setting: dict[str, Any] = {"weight": 0.0, "hits": []}
    plain_convex, plain_head = combine.convex, combine.convex_head

    def with_openings(lists: Any, weights: Any) -> tuple[Any, Any]:
        if not setting["weight"]:
            return lists, weights
        return {**lists, "opening": setting["hits"]}, {**weights, "opening": setting["weight"]}

    def convex(lists: Any, *, weights: Any = None, overrides: Any = None) -> Any:
        lists, weights = with_openings(lists, weights)
        return plain_convex(lists, weights=weights, overrides=overrides)

    def convex_head(lists: Any, depth: int, *, weights: Any = None) -> Any:
        lists, weights = with_openings(lists, weights)
        return plain_head(lists, depth, weights=weights)

    combine.convex, combine.convex_head = convex, convex_head

    def hits(query: str) -> None:
        vector = deep_model.embed_one(query)
        scores = openings @ (vector / np.linalg.norm(vector))
        setting["hits"] = [(int(ids[i]), float(scores[i])) for i in np.argsort(-scores)[:100]]

    by_id = {first[p][0]: p for p in paths}
    alone: dict[str, list[float]] = {"all": []}
    for line in lines:
        hits(line["query"])
        value = metrics.recall_at_k([by_id[c] for c, _s in setting["hits"]], line["relevant"], 10)
        alone["all"].append(value)
        alone.setdefault(line["kind"], []).append(value)
    print("the openings' list alone", {kind: round(float(np.mean(v)), 3) for kind, v in alone.items()})
    for weight in (0.0, 0.5, 1.0):
        setting["weight"] = weight
        print("hybrid + openings at", weight, recall(index, lines, "hybrid", hits), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment", choices=("feedback", "opening"))
    parser.add_argument("--db", required=True)
    parser.add_argument("--vault", required=True)
    parser.add_argument("--golden", required=True)
    parser.add_argument("--split", default="tune")
    args = parser.parse_args()
    try:
        text = Path(args.golden).read_text("utf-8")
    except OSError as exc:
        parser.error(f"cannot read --golden: {exc}")
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if line.get("split") == args.split]
    if not lines:
        parser.error(f"{args.golden} has no questions whose split is {args.split!r}")
    try:
        with open_index(args.vault, db=args.db) as index:
            status = index.deep_status()
            if status is None or status.pending:
                raise SystemExit(f"{args.db}: the deep vectors are not complete (run `vaultseek deep` first)")
            (feedback if args.experiment == "feedback" else opening)(index, lines)
    except VaultseekError as exc:
        raise SystemExit(f"error: {exc}") from None


if __name__ == "__main__":
    main()
