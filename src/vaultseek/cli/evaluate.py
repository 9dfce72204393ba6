"""The ``eval`` command: measure search quality on judged queries (BEIR or a golden file)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any, TextIO

from .common import UsageError, open_index_for

AddCommon = Callable[[argparse.ArgumentParser], None]


def add_parsers(commands: Any, add_common: AddCommon) -> None:
    evaluate = commands.add_parser("eval", help="measure search quality on judged queries")
    evaluate.add_argument("folder", nargs="?", metavar="BEIR_FOLDER", help="corpus.jsonl, queries.jsonl, qrels.tsv")
    evaluate.add_argument("--golden", metavar="FILE", help='JSON Lines {"id", "query", "relevant": {path: grade}, optional "kind", "split"}')
    evaluate.add_argument("--split", metavar="NAME", help='BEIR: use queries_NAME.jsonl / qrels_NAME.tsv; --golden: only lines whose "split" is NAME')
    evaluate.add_argument("--workdir", metavar="DIR", help="keep the BEIR corpus's scratch index here, reused")
    evaluate.add_argument("--json", action="store_true", help="machine-readable output")
    evaluate.add_argument("--modes", type=_names, default=None, metavar="LIST", help="e.g. bm25,hybrid")
    evaluate.add_argument("--fusion", type=_names, default=None, metavar="LIST", help="hybrid variants, e.g. rrf,convex")
    evaluate.add_argument("--term-match", action="store_true", help="also measure hybrid with term matching on and off (hybrid+terms and hybrid-terms rows)")
    evaluate.add_argument("--rerank", action="store_true", help="also measure hybrid with the configured reranker (a hybrid+rerank row)")
    evaluate.add_argument("--expand", action="store_true", help="also measure hybrid with query expansion (a hybrid+expand row)")
    evaluate.add_argument("--by-region", action="store_true", help="also Recall@10 by region of the vault map: per cluster, and core vs bridge notes")
    add_common(evaluate)


def _names(text: str) -> list[str]:
    """A comma-separated list flag (one value, so it never swallows the positional folder)."""
    return [name.strip() for name in text.split(",") if name.strip()]


def cmd_eval(args: argparse.Namespace, out: TextIO) -> int:
    if (args.folder is None) == (args.golden is None):
        raise UsageError(
            "give either a BEIR folder or --golden FILE",
            hint="vaultseek eval ../data/scifact --split test, or vaultseek eval --golden q.jsonl --vault ~/vault",
        )
    if args.golden is None and (args.vault or args.db):
        raise UsageError("--vault and --db go with --golden; a BEIR folder is indexed into --workdir")
    if args.golden is not None and args.workdir:
        raise UsageError("--workdir goes with a BEIR folder, not --golden")
    from ..config import FUSION_METHODS
    from ..evaluation.harness import (
        EXPAND,
        MODES,
        NO_TERM_MATCH,
        RERANK,
        TERM_MATCH,
        configurations,
        evaluate_beir,
        evaluate_golden,
    )
    from ..evaluation.tables import render_table
    from .terminal import ProgressBar

    chosen = configurations(args.modes or MODES, FUSION_METHODS if args.fusion is None else args.fusion)
    if args.term_match:
        if not any(c.mode == "hybrid" for c in chosen):
            raise UsageError("--term-match measures hybrid search", hint="include hybrid in --modes")
        chosen = (*chosen, TERM_MATCH, NO_TERM_MATCH)
    if (args.rerank or args.expand) and not any(c.mode == "hybrid" for c in chosen):
        raise UsageError("--rerank and --expand measure hybrid search", hint="include hybrid in --modes")
    chosen = (*chosen, *((RERANK,) if args.rerank else ()), *((EXPAND,) if args.expand else ()))
    bar = ProgressBar()
    try:
        if args.golden is not None:
            with open_index_for(args, create=False) as index:
                report = evaluate_golden(index, args.golden, split=args.split, chosen=chosen, progress=bar,
                                         by_region=args.by_region)  # fmt: skip
        else:
            report = evaluate_beir(
                args.folder, split=args.split, workdir=args.workdir, chosen=chosen, progress=bar,
                config_file=args.config, by_region=args.by_region,
            )  # fmt: skip
    finally:
        bar.clear()
    out.write((json.dumps(report.to_dict(), ensure_ascii=False) if args.json else render_table(report)) + "\n")
    return 0


COMMANDS = {"eval": cmd_eval}
