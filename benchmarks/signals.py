"""``python -m benchmarks.signals``: each vault-aware ranking signal, on vs off.

    python -m benchmarks.signals --data ../shared/data --workdir /tmp/vaultseek-signals \\
        --out docs/signals.md [--json /tmp/signals.json]

Two kinds of judged queries:

- **a real vault's own structure** (:mod:`benchmarks.vaultgolden`): the PowerShell 7.5
  reference and conceptual docs, with queries from their aliases, titles and descriptions and
  relevance from their links;
- **the BEIR collections** of ``../shared/data/ir`` (SciFact on both splits), where no signal
  has anything to find — no links, no aliases, one date — so a signal that is *on by default*
  must leave them as they are.

Every signal is measured against the default hybrid search with everything else unchanged; the
difference in nDCG@10 (and MRR@10, which is what a known-item query feels) is paired per query
and shown with its standard error. A signal is turned on by default only where it helps the
vault sets beyond noise and costs no BEIR collection more than 0.005 (the project's rule); the
document this writes says which are on.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import vaultgolden
from benchmarks.quality import KEPT_MARKER, collections, kept_tail
from vaultseek.cli.terminal import ProgressBar
from vaultseek.engine import open_index
from vaultseek.errors import VaultseekError
from vaultseek.evaluation.harness import (
    ConfigResult,
    Configuration,
    EvalReport,
    evaluate_beir,
    evaluate_golden,
)
from vaultseek.search.termmatch import DEFAULT_WEIGHT

SIGNALS: dict[str, tuple[tuple[str, Any], ...]] = {
    "title": (("title_match", True),),
    "intent": (("intent", True),),
    "links": (("link_boost", 0.3),),
    "recency": (("recency_half_life_days", 365.0),),
    "terms": (("term_match", DEFAULT_WEIGHT),),
}
"""Each signal switched on at its documented strength (the ``Index.search`` keyword arguments).
A signal is switched *off* by passing the opposite explicitly, so the baseline does not depend
on which signals the configuration file or the defaults turn on."""
OFF: tuple[tuple[str, Any], ...] = (
    ("title_match", False), ("intent", False), ("link_boost", 0.0), ("recency_half_life_days", 0),
    ("term_match", 0.0),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Paired:
    delta: float
    stderr: float

    def render(self) -> str:
        return f"{self.delta:+.3f} ± {self.stderr:.3f}"


def paired(base: dict[str, float], other: dict[str, float]) -> Paired:
    """Mean per-query difference and its standard error."""
    diffs = [other[q] - base[q] for q in base if q in other]
    if not diffs:
        return Paired(0.0, 0.0)
    mean = sum(diffs) / len(diffs)
    if len(diffs) < 2:
        return Paired(mean, 0.0)
    var = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    return Paired(mean, math.sqrt(var / len(diffs)))


def configurations(now: float | None) -> list[Configuration]:
    """``hybrid`` with every signal off, then one row per signal on, then all of them on."""
    clock = (("now", now),) if now is not None else ()
    base = dict(OFF)
    rows = [
        Configuration("bm25", "bm25", None, tuple(base.items()) + clock),
        Configuration("vector", "vector", None, tuple(base.items()) + clock),
        Configuration("hybrid", "hybrid", None, tuple(base.items()) + clock),
    ]
    for name, options in SIGNALS.items():
        rows.append(Configuration(f"hybrid+{name}", "hybrid", None, tuple({**base, **dict(options)}.items()) + clock))
    everything = dict(base)
    for options in SIGNALS.values():
        everything.update(options)
    rows.append(Configuration("hybrid+all", "hybrid", None, tuple(everything.items()) + clock))
    return rows


def run_vault(workdir: Path, data: Path, bar: ProgressBar) -> tuple[list[tuple[str, EvalReport]], float]:
    """Build (once) and index the PowerShell vault, then evaluate every golden set."""
    root = workdir / "powershell"
    vault, golden, db = root / "vault", root / "golden", root / "index.db"
    if not (golden / "title.jsonl").is_file() or not vault.is_dir():
        notes = vaultgolden.build_vault(vaultgolden.powershell_source(data), vault)
        vaultgolden.write_golden(vaultgolden.golden_sets(notes), golden)
        db.unlink(missing_ok=True)
    newest = max((p.stat().st_mtime for p in vault.rglob("*.md")), default=time.time())
    reports = []
    with open_index(vault, db=db, create=True) as index:
        index.sync(progress=bar, remember=False)
        for name in vaultgolden.SETS:
            reports.append((f"powershell:{name}", evaluate_golden(index, golden / f"{name}.jsonl",
                                                                  chosen=configurations(newest), progress=bar)))
    return reports, newest


def run_beir(data: Path, workdir: Path, bar: ProgressBar) -> list[tuple[str, EvalReport]]:
    reports = []
    for folder in collections(data / "ir"):
        splits = ("test", "train") if folder.name == "scifact" else (None,)
        for split in splits:
            report = evaluate_beir(folder, split=split, workdir=workdir,
                                   chosen=configurations(None), progress=bar)  # fmt: skip
            reports.append((f"{folder.name} ({split})" if split else folder.name, report))
    return reports


def _result(report: EvalReport, label: str) -> ConfigResult:
    return next(r for r in report.results if r.configuration.label == label)


def table(reports: Sequence[tuple[str, EvalReport]], metric: str) -> str:
    labels = [f"hybrid+{name}" for name in SIGNALS] + ["hybrid+all"]
    head = ["set", "queries", "bm25", "vector", "hybrid", *(f"{label.removeprefix('hybrid')} Δ" for label in labels)]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for name, report in reports:
        base = _result(report, "hybrid")
        cells = [name, f"{report.queries:,}"]
        cells += [f"{_result(report, mode).scores[metric]:.3f}" for mode in ("bm25", "vector", "hybrid")]
        for label in labels:
            other = _result(report, label)
            if metric == "nDCG@10":
                cells.append(paired(base.per_query_ndcg, other.per_query_ndcg).render())
            else:
                cells.append(f"{other.scores[metric] - base.scores[metric]:+.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render(reports: Sequence[tuple[str, EvalReport]], command: str, seconds: float) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    strengths = ", ".join(f"{name}: " + ", ".join(f"`{k}={v!r}`" for k, v in opts) for name, opts in SIGNALS.items())
    return "\n".join([
        "# Vault-aware ranking signals, on vs off",
        "",
        "Generated by `python -m benchmarks.signals` (see its docstring); rerun it:",
        "",
        f"```\n{command}\n```",
        "",
        f"Run {when}; {seconds:.0f} s. Strengths measured: {strengths}.",
        "Every row's baseline is the default hybrid search with all signals off; a Δ column is that",
        "signal alone switched on (`+all`: every signal on), as the paired mean per-query difference",
        "± its standard error.",
        "",
        "## nDCG@10",
        "",
        table(reports, "nDCG@10"),
        "",
        "## MRR@10 (what a known-item search feels: where the one right note lands)",
        "",
        table(reports, "MRR@10"),
        "",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.signals", description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", help="the shared data folder (default: %(default)s)")
    parser.add_argument("--workdir", default="/tmp/vaultseek-signals", help="scratch vaults and indexes, reused")
    parser.add_argument("--out", help="write the Markdown here (default: print it)")
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers")
    parser.add_argument("--no-beir", action="store_true", help="only the vault sets")
    args = parser.parse_args(argv)
    data, workdir = Path(args.data), Path(args.workdir)
    if not (data / "powershell-docs").is_dir():
        sys.stderr.write(f"error: {data} holds no powershell-docs (pass --data)\n")
        return 2
    started = time.perf_counter()
    bar = ProgressBar()
    try:
        reports, _newest = run_vault(workdir, data, bar)
        if not args.no_beir:
            reports += run_beir(data, workdir, bar)
    except (VaultseekError, TypeError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    finally:
        bar.clear()
    command = "python -m benchmarks.signals " + " ".join(argv if argv is not None else sys.argv[1:])
    text = render(reports, command.strip(), time.perf_counter() - started)
    if args.out:
        out = Path(args.out)
        previous = out.read_text("utf-8") if out.is_file() else ""
        Path(args.out).write_text(text + ("\n" + kept_tail(previous) if KEPT_MARKER in previous else ""), "utf-8")
    else:
        sys.stdout.write(text)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {name: r.to_dict(per_query=True) for name, r in reports}, indent=1), "utf-8")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
