"""Spreadsheets (.xlsx) and delimited text (.csv, .tsv): the header row plus batches of rows.

openpyxl's owner (read-only, cached values: formulas show their last computed result),
imported by :func:`read_xlsx` only: openpyxl comes with the ``documents`` extra, and CSV is
read by the core install. Each chunk is ``[Sheet: name]`` (workbooks only), the header row,
then up to :data:`ROWS_PER_CHUNK` rows as ``cell | cell`` lines, and cites its sheet and row
range. Rows are numbered as the application shows them: the header is row 1 of a CSV; empty
rows are skipped but counted.

Reading stops at the text cap (``max_document_text_mb``), and a workbook also after
:data:`MAX_CELLS` cells or past Excel's last row: a sheet's stated size is not trusted, since a
few bytes claiming ``A1:XFD1048576`` would otherwise pad every row to 16,384 cells. Only the
first ``max_document_text_mb`` characters of a CSV are decoded.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
from collections.abc import Iterable, Iterator
from typing import Any

from ..records import Location
from .encoding import decode_head
from .extraction import (
    DocumentError,
    ExtractContext,
    Extracted,
    ExtractionStopped,
    Segment,
)
from .limits import TextBudget

ROWS_PER_CHUNK = 20
MAX_CELLS = 10_000_000
"""Cells a workbook may make the reader visit, empty ones included."""
EXCEL_ROWS = 1_048_576
_SNIFF_CHARS = 64 * 1024


def read_xlsx(data: bytes, context: ExtractContext) -> Extracted:
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:
        raise DocumentError(f"corrupt XLSX (not a readable workbook: {exc.__class__.__name__})") from exc
    budget = TextBudget(context.limits.max_text_chars)
    cells = 0
    stopped: list[str] = []

    def rows(sheet: Any) -> Iterator[tuple[int, tuple[Any, ...]]]:
        nonlocal cells
        sheet.reset_dimensions()  # its stated size is not trusted (see the module docstring)
        for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
            cells += len(row)
            if number > EXCEL_ROWS or cells > MAX_CELLS:
                where = f"row {EXCEL_ROWS:,}" if number > EXCEL_ROWS else f"{MAX_CELLS:,} cells"
                stopped.append(f"{context.path}: read as far as {where} (sheet {sheet.title}); the rest was dropped")
                return
            yield number, row

    try:
        segments: list[Segment] = []
        for sheet in workbook.worksheets:
            if budget.spent or (stopped and cells > MAX_CELLS):
                break
            segments.extend(row_batches(rows(sheet), context, budget, sheet=sheet.title))
    finally:
        workbook.close()
    return Extracted(segments=segments, truncated=budget.truncated, notices=stopped)


def read_csv(data: bytes, context: ExtractContext) -> Extracted:
    text, more = decode_head(data, context.limits.max_text_chars)
    sample = text[:_SNIFF_CHARS]
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel_tab if context.path.lower().endswith(".tsv") else csv.excel
    budget = TextBudget(context.limits.max_text_chars)
    try:
        reader = csv.reader(io.StringIO(text, newline=""), dialect)
        segments = list(row_batches(enumerate(reader, start=1), context, budget))
    except csv.Error as exc:
        raise DocumentError(f"malformed CSV ({exc})") from exc
    return Extracted(segments=segments, truncated=more or budget.truncated)


def row_batches(
    rows: Iterable[tuple[int, Iterable[Any]]],
    context: ExtractContext,
    budget: TextBudget,
    *,
    sheet: str | None = None,
) -> Iterator[Segment]:
    """The header row plus batches of rows, as whole structured segments, until ``budget`` is
    spent."""
    prefix = f"[Sheet: {sheet}]\n" if sheet is not None else ""
    header: str | None = None
    batch: list[tuple[int, str]] = []

    def segment() -> Segment:
        lines = "\n".join(line for _n, line in batch)
        return Segment(
            f"{prefix}{header}\n{lines}",
            Location(sheet=sheet, row_start=batch[0][0], row_end=batch[-1][0]),
            structured=True,
            whole=True,
        )

    for number, cells in rows:
        values = [_cell_text(v) for v in cells]
        while values and not values[-1]:
            values.pop()
        if not any(values):
            continue
        line = budget.take(" | ".join(values))
        if not line:
            break
        if header is None:
            header = line
            header_row = number
            continue
        batch.append((number, line))
        if len(batch) == ROWS_PER_CHUNK:
            if context.should_stop():
                raise ExtractionStopped
            yield segment()
            batch = []
    if batch:
        yield segment()
    elif header is not None and header_row == number:  # a sheet that is only a header row
        yield Segment(f"{prefix}{header}", Location(sheet=sheet, row_start=header_row, row_end=header_row), structured=True, whole=True)


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    return " ".join(str(value).split())
