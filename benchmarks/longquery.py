"""``python -m benchmarks.longquery``: what a query costs by its length, with the deep tier.

1. Indexes ``--notes`` tldr pages (``../shared/data/tldr/pages/common``) into ``--workdir``
   and gives every chunk its deep vector (once: a later run reuses the index).
2. Times warm hybrid searches (static, BM25 and deep lists) of queries made from the same
   prose at a phrase's, a paragraph's, a page's and the longest length a search takes
   (8,000 characters), round-robin, ``--runs`` times each: the CPU time of the search (the
   query's deep embedding is most of it) and its ratio to the phrase's, measured in the same
   run. Also reports what the deep list embedded of each: its characters and the model's
   tokens (at most the model's 512-token window), and, as the baseline, the CPU time of the
   deep model embedding the longest query whole.

Prints a Markdown table; ``--json FILE`` writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from vaultseek.engine import open_index
from vaultseek.search.candidates import deep_window

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("VAULTSEEK_SHARED_DATA", REPO.parent / "shared" / "data"))
LENGTHS = {"a phrase": 30, "a paragraph": 500, "a page": 2_000, "the longest (8,000 characters)": 8_000}


def _prose(chars: int) -> str:
    """``chars`` characters of the README's words (plain prose: no query operators)."""
    words = re.findall(r"[A-Za-z]+", (REPO / "README.md").read_text("utf-8"))
    text = " ".join(words * (1 + 8_000 // max(1, len(" ".join(words)))))
    return text[:chars].rstrip()


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-longquery-"))
    vault, db = work / "vault", work / "index.db"
    if not vault.exists():
        vault.mkdir(parents=True)
        for page in sorted((SHARED / "tldr" / "pages" / "common").glob("*.md"))[: args.notes]:
            shutil.copy(page, vault / page.name)
    queries = {name: _prose(chars) for name, chars in LENGTHS.items()}
    cpu: dict[str, list[float]] = {name: [] for name in queries}
    with open_index(vault, db=db, create=True, deep_tier=True) as index:
        index.sync(remember=False)
        report = index.deepen()
        assert report is not None and report.complete, report
        _vectors, model, _coverage = index._sides.deep_side()
        index.search("warm up the models")
        for _ in range(args.runs):
            for name, query in queries.items():
                model._queries.clear()  # type: ignore[attr-defined] # each run embeds its query
                started = time.process_time()
                index.search(query)
                cpu[name].append((time.process_time() - started) * 1000)
        longest = queries["the longest (8,000 characters)"]
        started = time.process_time()
        model._embed_query(longest)  # type: ignore[attr-defined] # the baseline: embedded whole
        whole_ms = (time.process_time() - started) * 1000
        embedded = {name: deep_window(model, query) for name, query in queries.items()}
        count = model._engine.token_count  # type: ignore[attr-defined]
        tokens = {name: int(count(text, True)) for name, text in embedded.items()}
        whole = {name: int(count(query, True)) for name, query in queries.items()}
    return {
        "notes": args.notes, "runs": args.runs,
        "chars": {name: len(query) for name, query in queries.items()},
        "cpu_p50_ms": {name: statistics.median(values) for name, values in cpu.items()},
        "embedded_chars": {name: len(text) for name, text in embedded.items()},
        "embedded_tokens": tokens, "query_tokens": whole, "longest_embedded_whole_ms": whole_ms,
    }  # fmt: skip


def render(r: dict[str, Any]) -> str:
    cpu = r["cpu_p50_ms"]
    base = cpu["a phrase"]
    lines = [
        f"{r['notes']} notes, every chunk with its deep vector; warm hybrid search, median of {r['runs']} runs",
        "",
        "| query | characters (tokens) | the deep list embeds | CPU p50 | ratio to a phrase |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in cpu:
        embeds = f"{r['embedded_chars'][name]:,} ({r['embedded_tokens'][name]} tokens)"
        lines.append(
            f"| {name} | {r['chars'][name]:,} ({r['query_tokens'][name]:,}) | {embeds} | "
            f"{cpu[name]:.0f} ms | {cpu[name] / base:.1f}× |"
        )
    lines += [
        "",
        (f"Baseline, the same run: the deep model embedding the longest query whole (window by window) "
         f"took {r['longest_embedded_whole_ms']:.0f} ms of CPU on its own."),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--workdir", help="keep the vault and index here (reused by the next run)")
    parser.add_argument("--notes", type=int, default=40, help="tldr pages to index")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", metavar="FILE", help="also write the raw figures here")
    args = parser.parse_args()
    result = run(args)
    print(render(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
