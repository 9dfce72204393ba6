"""Spreadsheets (.xlsx) and delimited text (.csv, .tsv): the header row plus batches of rows.

openpyxl's owner (read-only, cached values: formulas show their last computed result),
imported by :func:`read_xlsx` only: openpyxl comes with the ``documents`` extra, and CSV is
read by the core install. Each chunk is ``[Sheet: name]`` (workbooks only), the header row,
then up to :data:`ROWS_PER_CHUNK` rows as ``cell | cell`` lines, and cites its sheet and row
range. Rows are numbered as the application shows them: the header is row 1 of a CSV; empty
rows are skipped but counted.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
from collections.abc import Iterable, Iterator
from typing import Any

from ..records import Location
from .encoding import decode_text
from .extraction import (
    DocumentError,
    ExtractContext,
    Extracted,
    ExtractionStopped,
    Segment,
)

ROWS_PER_CHUNK = 20
_SNIFF_CHARS = 64 * 1024


def read_xlsx(data: bytes, context: ExtractContext) -> Extracted:
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:
        raise DocumentError(f"corrupt XLSX (not a readable workbook: {exc.__class__.__name__})") from exc
    try:
        segments: list[Segment] = []
        for sheet in workbook.worksheets:
            rows = enumerate(sheet.iter_rows(values_only=True), start=1)
            segments.extend(row_batches(rows, context, sheet=sheet.title))
    finally:
        workbook.close()
    return Extracted(segments=segments)


def read_csv(data: bytes, context: ExtractContext) -> Extracted:
    text = decode_text(data)
    sample = text[:_SNIFF_CHARS]
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel_tab if context.path.lower().endswith(".tsv") else csv.excel
    try:
        reader = csv.reader(io.StringIO(text, newline=""), dialect)
        return Extracted(segments=list(row_batches(enumerate(reader, start=1), context)))
    except csv.Error as exc:
        raise DocumentError(f"malformed CSV ({exc})") from exc


def row_batches(
    rows: Iterable[tuple[int, Iterable[Any]]], context: ExtractContext, *, sheet: str | None = None
) -> Iterator[Segment]:
    """The header row plus batches of rows, as whole structured segments."""
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
        line = " | ".join(values)
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
