"""The pool of results to judge for the relevance judgment's labels.

For every question of a judged set (both halves), the union of what the searches a user may
meet put in front of it — the hybrid's first 8 with the deep tier and with the fast tiers
alone, the deep list's and the BM25 list's first 3 — each as one JSON line
``{"set", "id", "query", "path", "chunk_id", "section", "text", "judged"}`` (``judged``: the
golden file's grade, or null). A reader then labels each line relevant or not
(``benchmarks/golden/labels/<set>.jsonl``); ``python -m benchmarks.judgment`` reads those labels.

    python scripts/judgment_pool.py --set tldr-de --db DIR/de.db --vault ../shared/data/tldr/pages.de > pool.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vaultseek import open_index

GOLDEN = Path(__file__).resolve().parent.parent / "benchmarks" / "golden"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--vault", required=True)
    args = parser.parse_args()
    lines = [json.loads(line) for line in (GOLDEN / f"{args.set}.jsonl").open(encoding="utf-8")]
    with open_index(args.vault, db=args.db, read_only=True) as index:
        for line in lines:
            query = line["query"]
            seen: dict[int, object] = {}
            for options in ({"k": 8}, {"k": 8, "deep_weight": 0.0}, {"k": 3, "mode": "deep"}, {"k": 3, "mode": "bm25"}):
                options = {**options, "view": "chunks", "syntax": False}
                for hit in index.search(query, **options).results:
                    seen.setdefault(hit.chunk_id, hit)
            for hit in seen.values():
                out = {
                    "set": args.set, "id": line["id"], "query": query, "path": hit.path, "chunk_id": hit.chunk_id,
                    "section": hit.section, "text": hit.text[:1200], "judged": line["relevant"].get(hit.path),
                }
                sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
