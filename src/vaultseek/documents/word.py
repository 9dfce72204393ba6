"""Word (.docx): paragraphs and table rows in document order, cut into sections at headings.

python-docx's owner. Each section becomes one segment whose heading path (``Intro > Scope``)
is kept, so a DOCX chunk cites its section the way a note's does; table rows become
``cell | cell | cell`` lines (a merged cell is named once).
"""

from __future__ import annotations

import io
import re
import zipfile

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table
from docx.text.paragraph import Paragraph

from .extraction import DocumentError, ExtractContext, Extracted, Segment

_HEADING_STYLE = re.compile(r"^heading (\d)$", re.IGNORECASE)


def read(data: bytes, context: ExtractContext) -> Extracted:
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise DocumentError("corrupt DOCX (not a readable Word document)") from exc
    segments: list[Segment] = []
    path: list[tuple[int, str]] = []  # (level, heading)
    lines: list[str] = []

    def flush() -> None:
        if any(line.strip() for line in lines):
            segments.append(Segment("\n\n".join(lines), heading=tuple(h for _l, h in path)))
        lines.clear()

    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            text = block.text.strip()
            if not text:
                continue
            level = _heading_level(block)
            if level is not None:
                flush()
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, text))
            lines.append(text)
        elif isinstance(block, Table):
            lines.append("\n".join(_table_rows(block)))
    flush()
    return Extracted(segments=segments)


def _heading_level(paragraph: Paragraph) -> int | None:
    name = (getattr(paragraph.style, "name", "") or "").strip()
    if name.lower() == "title":
        return 0
    match = _HEADING_STYLE.match(name)
    return int(match.group(1)) if match else None


def _table_rows(table: Table) -> list[str]:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if not cells or text != cells[-1]:  # a merged cell repeats across its span
                cells.append(text)
        if any(cells):
            rows.append(" | ".join(cells))
    return rows
