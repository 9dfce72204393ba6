"""Word (.docx): paragraphs and table rows in document order, cut into sections at headings.

python-docx's owner. Each section becomes one segment whose heading path (``Intro > Scope``)
is kept, so a DOCX chunk cites its section the way a note's does; table rows become
``cell | cell | cell`` lines (a merged cell is named once). Reading stops at the text cap.
"""

from __future__ import annotations

import io
import re
import zipfile

import docx
from docx.document import Document
from docx.enum.style import WD_STYLE_TYPE
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table
from docx.text.paragraph import Paragraph

from .extraction import DocumentError, ExtractContext, Extracted, Segment
from .limits import TextBudget

_HEADING_STYLE = re.compile(r"^heading (\d)$", re.IGNORECASE)


def read(data: bytes, context: ExtractContext) -> Extracted:
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise DocumentError("corrupt DOCX (not a readable Word document)") from exc
    segments: list[Segment] = []
    path: list[tuple[int, str]] = []  # (level, heading)
    lines: list[str] = []
    budget = TextBudget(context.limits.max_text_chars)
    styles = _StyleNames(document)

    def flush() -> None:
        if any(line.strip() for line in lines):
            segments.append(Segment("\n\n".join(lines), heading=tuple(h for _l, h in path)))
        lines.clear()

    for block in document.iter_inner_content():
        if budget.spent:
            break
        if isinstance(block, Paragraph):
            text = block.text.strip()
            if not text:
                continue
            level = _heading_level(styles.name(block))
            if level is not None:
                flush()
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, text))
            lines.append(budget.take(text))
        elif isinstance(block, Table):
            lines.append(budget.take("\n".join(_table_rows(block))))
    flush()
    return Extracted(segments=segments, truncated=budget.truncated)


class _StyleNames:
    """Paragraph style names, each looked up once. python-docx's ``Paragraph.style`` scans every
    style definition to find the default each time it resolves a paragraph without a style of
    its own: with Word's template, about 10 ms a paragraph, minutes for a long document."""

    def __init__(self, document: Document) -> None:
        self.styles = document.styles
        self.names: dict[str | None, str] = {}

    def name(self, paragraph: Paragraph) -> str:
        style_id = paragraph._p.style  # the paragraph's w:pStyle id, None for the default style
        if style_id not in self.names:
            style = self.styles.get_by_id(style_id, WD_STYLE_TYPE.PARAGRAPH)
            self.names[style_id] = (getattr(style, "name", "") or "").strip()
        return self.names[style_id]


def _heading_level(name: str) -> int | None:
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
