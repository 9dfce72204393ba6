"""``python -m benchmarks.quality``: the committed retrieval-quality table,
``docs/quality.md``.

Runs :func:`vaultseek.evaluation.harness.evaluate_beir` on every collection in ``../shared/data/ir``
(SciFact on its test split: its train split is for tuning) with every configuration, and writes
one Markdown document: a summary of nDCG@10 per collection and configuration next to the plain
BM25 floor that ``../shared/data/README.md`` states, then the full table per collection, the
command that produced it and when. One command, so anyone can rerun it after changing ranking
and see whether a collection got worse.

    python -m benchmarks.quality --data ../shared/data/ir --workdir /tmp/vaultseek-quality \\
        --out docs/quality.md [--json /tmp/quality.json]

``--workdir`` keeps each collection's scratch vault and index, so a rerun after a ranking
change skips the indexing (about a minute on a 2-core machine); ``--json`` writes the raw
numbers, per-query nDCG@10 included, for paired comparisons.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vaultseek import __version__
from vaultseek.cli.terminal import ProgressBar
from vaultseek.errors import VaultseekError
from vaultseek.evaluation.harness import (
    DEPTH,
    NO_TERM_MATCH,
    EvalReport,
    configurations,
    evaluate_beir,
)
from vaultseek.evaluation.tables import COLUMNS, table_row
from vaultseek.search.termmatch import DEFAULT_WEIGHT

ORDER = ("scifact", "cranfield", "cisi", "medline", "cacm", "npl", "lisa")
"""The collections in the order the data README lists them; any others follow by name."""
SPLITS = {"scifact": "test"}
"""Collections with a train split are reported on test (tuning happens on train)."""
KEPT_MARKER = "<!-- hand-written below this line: python -m benchmarks.quality keeps it -->"
"""Everything from this line to the end of the existing output is carried over unchanged, so
the write-up of tuning attempts lives beside the table it explains and survives a rerun."""


def kept_tail(previous: str) -> str:
    """The hand-written part of a previous output (from :data:`KEPT_MARKER` on), or ""."""
    at = previous.find(KEPT_MARKER)
    return previous[at:].rstrip() + "\n" if at >= 0 else ""


def collections(data: Path) -> list[Path]:
    found = {p.name: p for p in data.iterdir() if (p / "corpus.jsonl").is_file()}
    return [found[n] for n in ORDER if n in found] + [found[n] for n in sorted(found) if n not in ORDER]


def bm25_floors(readme: Path) -> dict[str, float]:
    """The "plain BM25 … gave nDCG@10: scifact 0.660, …" figures of the data README (none if
    it is missing or words them differently: the table then shows a dash)."""
    try:
        text = readme.read_text("utf-8")
    except OSError:
        return {}
    match = re.search(r"BM25 over these\s+files gave nDCG@10:(.*?)(?:—|\n\n)", text, re.DOTALL)
    return {name: float(value) for name, value in re.findall(r"(\w+) (\d\.\d+)", match.group(1))} if match else {}


def _markdown_table(report: EvalReport) -> str:
    best = max(r.scores["nDCG@10"] for r in report.results)
    lines = ["| configuration | " + " | ".join(COLUMNS) + " |", "|---|" + "---:|" * len(COLUMNS)]
    for result in report.results:
        cells = table_row(result)
        if result.scores["nDCG@10"] == best:
            cells[0] = f"**{cells[0]}**"
        lines.append(f"| {result.configuration.label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ndcg(report: EvalReport, label: str) -> float | None:
    return next((r.scores["nDCG@10"] for r in report.results if r.configuration.label == label), None)


def summary(reports: list[EvalReport], floors: dict[str, float]) -> str:
    """nDCG@10 for every collection × configuration, the BM25 floor, and the default hybrid's
    margin over its best single mode (the project's bar: never below it by more than 0.005)."""
    labels = [r.configuration.label for r in reports[0].results]
    head = ["collection", "docs", "queries", "BM25 floor", *labels, "hybrid − best single"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for report in reports:
        floor = floors.get(report.name)
        cells = [f"{_ndcg(report, label):.3f}" for label in labels]
        singles = [v for v in (_ndcg(report, "bm25"), _ndcg(report, "vector")) if v is not None]
        hybrid = _ndcg(report, "hybrid")
        margin = f"{hybrid - max(singles):+.3f}" if hybrid is not None and singles else "—"
        name = f"{report.name} ({report.split})" if report.split else report.name
        row = [name, f"{report.documents:,}", f"{report.queries:,}", f"{floor:.3f}" if floor else "—", *cells, margin]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


PROTOCOL = """\
## How it is measured

- Each collection in `../shared/data/ir` (BEIR layout) is written as a vault, one note per
  document (the title in frontmatter and as `# <title>`, a blank line, the text; no title at
  all when the document has none), and indexed by the real engine: chunking, heading context,
  BM25, vectors.
- Every configuration answers every judged query with k = {depth} and candidates = {depth} (each
  list contributes {depth} hits to fusion, as the product's default `candidates` does), so
  Recall@100 sees a full 100-deep list. `hybrid` uses the configured default fusion with
  term matching (`term_match = {terms}`, the default; see [Search](search.md#ranking-signals));
  `hybrid:<name>` names a fusion (term matching re-scores convex fusion only);
  `hybrid-terms` is the default hybrid with term matching off.
- Results are chunks; they collapse to documents in the note view's order (a note ranks by
  its best section plus a share of its next two: [Notes or sections](search.md#notes-or-sections)).
- nDCG@10 as trec_eval and BEIR compute it: gain = the judged grade (Cranfield's are 1–4),
  discount log2(rank + 1), ideal DCG over all of the query's relevant documents. Recall@k:
  relevant documents in the first k / all relevant ones. MRR@10: 1 / rank of the first relevant
  document within the first 10. nDCG@5 is nDCG cut at the first five. Hit@1: the first result
  is a relevant document (of any grade, not only the best). Queries without a relevant
  document are left out.
- Latency is the wall time of `Index.search` at k = {depth}, warm (one untimed query first). It
  includes building {depth} snippets, so it is several times the k = 10 latency in
  [Benchmarks](benchmarks.md): use it to compare configurations, not as the product's speed. The machine is
  shared: expect ±20%.
- SciFact is reported on its test split (its train split is for tuning). The BM25 floor is a
  plain BM25's nDCG@10 as stated in `../shared/data/README.md`.
- **Bold**: the best nDCG@10 of a collection. "hybrid − best single": the default hybrid's
  nDCG@10 minus the better of bm25 and vector alone.
"""


def _commit() -> str:
    """The checkout's commit, marked when the tree has uncommitted changes ("" outside git)."""
    def git(*args: str) -> str:
        where = Path(__file__).parent
        return subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, check=True).stdout.strip()

    try:
        head, dirty = git("rev-parse", "--short", "HEAD"), git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return ""
    return f" at commit {head}" + (" with uncommitted changes" if dirty else "")


def render(
    reports: list[EvalReport], floors: dict[str, float], command: str, seconds: float, reused: set[str]
) -> str:
    """The whole document; ``reused`` names collections whose index came from ``--workdir``."""
    first = reports[0]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"Python {platform.python_version()} on a {os.cpu_count() or 1}-core machine"
    parts = [
        "# Retrieval quality",
        "",
        "Generated by `python -m benchmarks.quality`; do not edit by hand (except below the",
        "marker near the end, which the generator keeps), rerun it:",
        "",
        f"```\n{command}\n```",
        "",
        (
            f"Run {when}: vaultseek {__version__}{_commit()}, model `{first.model}`, default fusion "
            f"`{first.default_fusion}`, {machine}; {seconds:.0f} s in all."
        ),
        "",
        PROTOCOL.format(depth=DEPTH, terms=DEFAULT_WEIGHT),
        "## nDCG@10",
        "",
        summary(reports, floors),
    ]
    for report in reports:
        split = f" ({report.split} split)" if report.split else ""
        floor = floors.get(report.name)
        skipped = f" ({report.skipped_queries} left out)" if report.skipped_queries else ""
        facts = f"{report.documents:,} documents, {report.queries:,} judged queries{skipped}"
        floor_text = f"{floor:.3f}" if floor else "—"
        built = "index reused from --workdir" if report.name in reused else f"indexed in {report.index_seconds:.1f} s"
        parts += [
            "",
            f"## {report.name}{split}",
            "",
            f"{facts}; BM25 floor {floor_text}; {built}.",
            "",
            _markdown_table(report),
        ]
        parts += [f"\nNote: {n}" for n in report.notices]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality", description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/ir", help="the BEIR collections (default: %(default)s)")
    parser.add_argument("--workdir", help="keep scratch vaults and indexes here, reused by later runs")
    parser.add_argument("--out", default="docs/quality.md", help="the Markdown to write (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers, per query included")
    args = parser.parse_args(argv)
    data = Path(args.data)
    if not data.is_dir():
        sys.stderr.write(f"error: no collections folder {data} (pass --data)\n")
        return 2
    floors = bm25_floors(data.parent / "README.md")
    started = time.perf_counter()
    reports: list[EvalReport] = []
    reused: set[str] = set()
    bar = ProgressBar()
    try:
        for folder in collections(data):
            t = time.perf_counter()
            cached = bool(args.workdir) and (Path(args.workdir) / folder.name / "manifest.json").is_file()
            try:
                report = evaluate_beir(
                    folder, split=SPLITS.get(folder.name), workdir=args.workdir, progress=bar,
                    chosen=(*configurations(), NO_TERM_MATCH),
                )  # fmt: skip
            finally:
                bar.clear()
            reports.append(report)
            if cached:
                reused.add(report.name)
            best = max(report.results, key=lambda r: r.scores["nDCG@10"])
            sys.stderr.write(
                f"{report.name}: {report.queries} queries, indexed in {report.index_seconds:.1f} s, "
                f"{time.perf_counter() - t:.0f} s in all; best nDCG@10 {best.scores['nDCG@10']:.3f} "
                f"({best.configuration.label})\n"
            )
    except VaultseekError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        return exc.exit_code
    if not reports:
        sys.stderr.write(f"error: no BEIR collection (a folder with corpus.jsonl) in {data}\n")
        return 2
    command = "python -m benchmarks.quality " + " ".join(
        f"--{key} {value}" for key, value in (("data", args.data), ("out", args.out)) if value
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tail = kept_tail(out.read_text("utf-8")) if out.is_file() else ""
    text = render(reports, floors, command, time.perf_counter() - started, reused)
    out.write_text(text + ("\n" + tail if tail else ""), "utf-8")
    if args.json:
        raw: list[dict[str, Any]] = [r.to_dict(per_query=True) for r in reports]
        Path(args.json).write_text(json.dumps(raw, indent=1), "utf-8")
    sys.stderr.write(f"wrote {out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
