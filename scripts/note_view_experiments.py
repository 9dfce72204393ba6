"""The note view on judged sets whose notes have many sections, and a ranking variant measured
and not shipped (docs/research/note-view.md).

The sets are ``benchmarks.vaultgolden``'s four — alias, title, description, neighbourhood —
over the PowerShell 7.5 reference and conceptual docs (1,110 notes, most of them long pages of
many sections), built and indexed into ``--workdir`` the first time. For each set:

1. **Notes against chunk lists**: the default hybrid search (k = 100, the chunk view), scored
   as the note view ranks its notes (``search/grouping.py``'s ``note_order``: a note's best
   section plus a share of its next two, the notes the query names first), with each note at
   its best section's place alone, and as the raw list, where a note's second section takes a
   place and counts nothing (``harness.chunk_list``).
2. **A bonus for several strong sections**: the notes re-ranked by ``best × (1 + beta × n)``,
   ``n`` the extra sections the note view shows beside its best (``search/grouping.py``'s rule),
   for a few ``beta``; chosen on the tune half of each set (even positions), and the best
   ``beta`` then read on the test half (odd positions).

    python scripts/note_view_experiments.py --data ../shared/data --workdir DIR
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout, for `benchmarks`

from benchmarks import vaultgolden

from vaultseek import open_index
from vaultseek.evaluation import metrics
from vaultseek.evaluation.harness import chunk_list
from vaultseek.records import SearchResult
from vaultseek.search.grouping import MAX_SECTIONS, PAGE, SECTION_SHARE, note_order

BETAS = (0.0, 0.02, 0.05, 0.1, 0.2)
DEPTH = 100


def notes_with_extras(ranked: list[SearchResult]) -> list[tuple[str, float, int]]:
    """(path, best score, extra sections the note view shows) per note, in note-view order."""
    firsts: dict[str, int] = {}
    for position, hit in enumerate(ranked):
        firsts.setdefault(hit.path, position)
    order = sorted(firsts, key=firsts.__getitem__)
    page_end = firsts[order[PAGE - 1]] if len(order) >= PAGE else len(ranked)
    out = []
    for path in order:
        chunks = [(i, hit) for i, hit in enumerate(ranked) if hit.path == path]
        best = chunks[0][1]
        floor = SECTION_SHARE * (best.score - best.signals.get("title", 0.0))
        extra = [h for i, h in chunks[1:] if i < page_end and h.score >= floor][: MAX_SECTIONS - 1]
        out.append((path, best.score, len(extra)))
    return out


def scores(ranking: list[str], judged: dict[str, float]) -> dict[str, float]:
    return {
        "nDCG@10": metrics.ndcg_at_k(ranking, judged, 10),
        "MRR@10": metrics.reciprocal_rank_at_k(ranking, judged, 10),
        "Recall@10": metrics.recall_at_k(ranking, judged, 10),
        "Hit@1": metrics.hit_at_k(ranking, judged, 1),
    }


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {name: round(statistics.mean(r[name] for r in rows), 4) for name in rows[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    root = Path(args.workdir).expanduser()
    vault, golden, db = root / "vault", root / "golden", root / "index.db"
    if not (golden / "title.jsonl").is_file() or not vault.is_dir():
        notes = vaultgolden.build_vault(vaultgolden.powershell_source(Path(args.data)), vault)
        vaultgolden.write_golden(vaultgolden.golden_sets(notes), golden)
    results: dict[str, Any] = {}
    with open_index(vault, db=db, create=True, deep_tier=False) as index:
        index.sync(remember=False)
        for name in vaultgolden.SETS:
            rows = [r for r in vaultgolden.iter_rows(golden / f"{name}.jsonl") if metrics.has_relevant(r["relevant"])]
            per_query: list[dict[str, Any]] = []
            for row in rows:
                ranked = list(index.search(row["query"], view="chunks", k=DEPTH).results)
                paths = [hit.path for hit in ranked]
                notes = notes_with_extras(ranked)
                bonus = {}
                for beta in BETAS:
                    order = sorted(range(len(notes)), key=lambda i: (-notes[i][1] * (1 + beta * notes[i][2]), i))
                    bonus[beta] = scores([notes[i][0] for i in order], row["relevant"])
                shipped = note_order((hit.path, hit.score, hit.signals.get("title", 0.0) > 0) for hit in ranked)
                per_query.append({
                    "notes": scores(shipped, row["relevant"]),
                    "best section": scores(metrics.first_occurrences(paths), row["relevant"]),
                    "chunks": scores(chunk_list(paths), row["relevant"]),
                    "bonus": bonus,
                })  # fmt: skip
            tune, test = per_query[0::2], per_query[1::2]
            by_beta = {beta: mean([q["bonus"][beta] for q in tune]) for beta in BETAS}
            best = max(BETAS, key=lambda beta: (by_beta[beta]["nDCG@10"], -beta))
            results[name] = {
                "queries": len(rows),
                "notes": mean([q["notes"] for q in per_query]),
                "best section": mean([q["best section"] for q in per_query]),
                "chunks": mean([q["chunks"] for q in per_query]),
                "tune_by_beta": {str(beta): figures for beta, figures in by_beta.items()},
                "best_beta_on_tune": best,
                "test_at_best": mean([q["bonus"][best] for q in test]),
                "test_at_zero": mean([q["bonus"][0.0] for q in test]),
            }
            print(name, json.dumps(results[name]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
