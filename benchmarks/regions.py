"""``python -m benchmarks.regions``: is retrieval worse between clusters than inside them?

The seed's claim, from a topology analysis of one vault's embedding space: dense clusters
retrieve well, and the sparse bridge regions between clusters are where retrieval struggles.
This measures it on the judged sets with ``vaultseek eval --by-region`` (the default hybrid
alone, or ``--mode``): Recall@10 over the relevant documents of core, member, bridge and
island notes, of thin against dense clusters, and three differences — bridge − core, island −
core, thin − dense — each with a 95 % interval from a bootstrap over the queries (2,000
resamples of the queries, a query's documents in every region it has them moving together), so
a difference the queries cannot tell from zero reads as such.

    python -m benchmarks.regions --data ../shared/data [--beir medline,cranfield] \\
        [--golden psdocs-en,tldr-en] [--mode hybrid] [--workdir DIR] [--out FILE]

BEIR collections come from ``<data>/ir/<name>`` (their corpus indexed as a scratch vault in
``--workdir``, reused by a rerun); golden sets from ``benchmarks/golden`` against their vaults
(:mod:`benchmarks.golden`), every line of the file (no split: nothing is tuned on this).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.golden import GOLDEN_DIR, find_sets, vault_of
from vaultseek.cli.terminal import ProgressBar
from vaultseek.engine import open_index
from vaultseek.errors import VaultseekError
from vaultseek.evaluation.harness import EvalReport, configurations, evaluate_beir, evaluate_golden
from vaultseek.evaluation.regions import DENSE, MIN_JUDGED, THIN, RegionScore, RegionScores

BEIR = ("scifact", "cranfield", "cisi", "medline", "cacm", "npl", "lisa")
GOLDEN = ("psdocs-en", "tldr-en")
RESAMPLES = 2000
DIFFERENCES = (("bridge", "core"), ("island", "core"), (THIN, DENSE))


def difference(first: RegionScore, second: RegionScore, queries: int, *, seed: int = 0) -> tuple[float, float, float]:
    """``first.recall - second.recall`` and its 95 % bootstrap interval over the queries."""
    if not first.per_query or not second.per_query:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, queries, size=(RESAMPLES, queries))
    counts = np.stack([np.bincount(row, minlength=queries) for row in draws])  # resamples × queries

    def means(score: RegionScore) -> np.ndarray:
        at = np.array([q for q, _v in score.per_query])
        values = np.array([v for _q, v in score.per_query])
        weights = counts[:, at]
        total = weights.sum(axis=1)
        return np.where(total > 0, (weights * values).sum(axis=1) / np.maximum(total, 1), np.nan)

    spread = means(first) - means(second)
    low, high = np.nanpercentile(spread, [2.5, 97.5])
    return first.recall - second.recall, float(low), float(high)


def rows(name: str, report: EvalReport) -> list[str]:
    """The report's row of the Markdown table (its one configuration). A difference needs
    :data:`MIN_JUDGED` relevant pairs on each side; with fewer it is "–"."""
    result = report.results[0]
    regions: RegionScores | None = result.by_region
    assert regions is not None and report.regions is not None
    found = {s.region: s for s in (*regions.roles, *regions.density)}
    cells = [name, f"{report.regions.notes:,}", str(len(report.regions.clusters)), str(report.queries),
             f"{result.scores['Recall@10']:.3f}"]  # fmt: skip
    for region in ("core", "member", "bridge", "island", DENSE, THIN):
        score = found[region]
        cells.append(f"{score.recall:.3f} ({score.judged})" if score.queries else "–")
    for first, second in DIFFERENCES:
        few = min(found[first].judged, found[second].judged) < MIN_JUDGED
        value, low, high = difference(found[first], found[second], report.queries)
        cells.append("–" if few or np.isnan(value) else f"{value:+.3f} [{low:+.3f}, {high:+.3f}]")
    return cells


HEAD = ["set", "notes", "clusters", "queries", "Recall@10", "core", "member", "bridge", "island",
        "dense clusters", "thin clusters", "bridge − core", "island − core", "thin − dense"]  # fmt: skip


def markdown(table: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEAD) + " |", "|---|" + "---:|" * (len(HEAD) - 1)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in table)])


def measure_golden(name: str, data: Path, workdir: Path, bar: ProgressBar, mode: str) -> EvalReport:
    vault, index_name = vault_of(data, name)
    with open_index(vault, db=workdir / f"{index_name}.db", create=True) as index:
        index.sync(progress=bar, remember=False)
        return evaluate_golden(index, find_sets(GOLDEN_DIR, [name])[name], chosen=configurations([mode], ()),
                               progress=bar, by_region=True)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.regions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="holds ir/, tldr/, powershell-docs/")
    parser.add_argument("--beir", default=",".join(BEIR), help="BEIR collections under DATA/ir (default: %(default)s)")
    parser.add_argument("--golden", default=",".join(GOLDEN), help="golden sets (default: %(default)s)")
    parser.add_argument("--workdir", type=Path, help="keep the indexes here, reused by a rerun (default: a temporary folder)")
    parser.add_argument("--mode", default="hybrid", choices=("hybrid", "bm25", "vector"), help="default: %(default)s")
    parser.add_argument("--out", type=Path, help="also write the Markdown table here")
    args = parser.parse_args(argv)
    scratch = None if args.workdir else tempfile.TemporaryDirectory(prefix="vaultseek-regions-")
    workdir = Path(scratch.name) if scratch else args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    bar, table, started = ProgressBar(), [], time.perf_counter()
    try:
        for name in filter(None, args.beir.split(",")):
            report = evaluate_beir(args.data / "ir" / name, workdir=workdir, chosen=configurations([args.mode], ()),
                                   progress=bar, by_region=True, split="test" if name == "scifact" else None)  # fmt: skip
            bar.clear()
            table.append(rows(name if name != "scifact" else "scifact (test)", report))
        for name in filter(None, args.golden.split(",")):
            table.append(rows(name, measure_golden(name, args.data, workdir, bar, args.mode)))
            bar.clear()
    except VaultseekError as exc:
        bar.clear()
        print(f"error: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
        return 2
    finally:
        if scratch:
            scratch.cleanup()
    text = markdown(table)
    print(text)
    print(f"\n{time.perf_counter() - started:.0f} s in all")
    if args.out:
        args.out.write_text(text + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
