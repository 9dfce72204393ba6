"""An evaluation report as the text table ``vaultseek eval`` prints, and the rows it is made of."""

from __future__ import annotations

from .harness import DEPTH, KIND_METRICS, METRICS, ConfigResult, EvalReport
from .regions import render_regions

COLUMNS = (*METRICS, "p50 ms", "p99 ms")


def table_row(result: ConfigResult) -> list[str]:
    """A result's cells in :data:`COLUMNS` order (shared by the text and Markdown tables)."""
    cells = [f"{result.scores[name]:.3f}" for name in METRICS]
    return [*cells, f"{result.latency_p50_ms:.2f}", f"{result.latency_p99_ms:.2f}"]


KIND_COLUMNS = ("queries", *KIND_METRICS)


def kind_rows(result: ConfigResult) -> list[list[str]]:
    """A result's per-kind rows: the kind, then cells in :data:`KIND_COLUMNS` order (none when
    its queries have no kinds)."""
    return [
        [kind, str(s.queries), *(f"{s.scores[name]:.3f}" for name in KIND_METRICS)]
        for kind, s in result.by_kind.items()
    ]


def chunk_row(result: ConfigResult) -> list[str]:
    """A result's chunk-level cells in :data:`METRICS` order (empty when it has none)."""
    return [f"{result.chunk_scores[name]:.3f}" for name in METRICS] if result.chunk_scores else []


CHUNK_HEADING = "chunk lists (a second section of a note takes a place and counts nothing)"


def _aligned(rows: list[list[str]], left: int) -> list[str]:
    """Rows as text columns: the first ``left`` cells flush left, the numbers flush right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return lines


def render_table(report: EvalReport) -> str:
    """The text ``vaultseek eval`` prints: what was measured, a row per configuration (notes:
    each document once, at its best chunk's place), then (when the queries have kinds) a row per
    configuration and kind, the same metrics over the raw chunk lists, and notices."""
    split = f" ({report.split} split)" if report.split else ""
    skipped = f" ({report.skipped_queries} left out: no relevant document)" if report.skipped_queries else ""
    rows = [["configuration", *COLUMNS]] + [[r.configuration.label, *table_row(r)] for r in report.results]
    head = f"{report.name}{split}: {report.queries:,} queries{skipped}, {report.documents:,} documents"
    lines = [f"{head}; k = candidates = {DEPTH}; hybrid = {report.default_fusion} (the configured default)", ""]
    lines += _aligned(rows, 1)
    by_kind = [[r.configuration.label, *row] for r in report.results for row in kind_rows(r)]
    if by_kind:
        lines += ["", *_aligned([["configuration", "kind", *KIND_COLUMNS], *by_kind], 2)]
    chunk_rows = [[r.configuration.label, *chunk_row(r)] for r in report.results if r.chunk_scores]
    if chunk_rows:
        lines += ["", f"{CHUNK_HEADING}:", *_aligned([["configuration", *METRICS], *chunk_rows], 1)]
    if report.regions is not None:
        scored = [(r.configuration.label, r.by_region) for r in report.results if r.by_region is not None]
        lines += render_regions(report.regions, scored)
    lines += [f"note: {n}" for n in report.notices]
    return "\n".join(lines)
