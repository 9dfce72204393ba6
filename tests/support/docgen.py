"""Real sample documents, written with the same libraries people's documents come from.

Used by the documents benchmark and by the tests: text PDFs (fpdf2), image-only "scanned" PDF
pages (text drawn with Pillow at 300 dpi, no text layer), encrypted PDFs, Word, PowerPoint and
Excel files, CSV in any encoding. fpdf2 is a test/bench dependency only.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


def _pdf() -> Any:
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(True, margin=54)
    return pdf


def text_pdf(path: Path, pages: Sequence[str]) -> Path:
    """One page per string (latin-1 text, Helvetica)."""
    pdf = _pdf()
    for text in pages:
        pdf.add_page()
        pdf.set_font("helvetica", size=11)
        pdf.multi_cell(0, 14, text)
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    return path


def page_image(lines: Sequence[str], *, dpi: int = 300) -> Any:
    """A letter-size grayscale page with ``lines`` printed on it, like a clean scan."""
    from PIL import Image, ImageDraw, ImageFont

    width, height = int(8.5 * dpi), int(11 * dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    size = dpi // 6  # 12 pt
    try:
        font: Any = ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        font = ImageFont.load_default(size=size)
    y = dpi
    for line in lines:
        draw.text((dpi, y), line, fill=0, font=font)
        y += int(size * 1.8)
    return image


def scanned_pdf(path: Path, pages: Sequence[Sequence[str] | str], *, dpi: int = 300) -> Path:
    """A PDF whose pages are images only (a list of lines: an image page; a string: a normal
    text page), so the image pages must be OCRed."""
    pdf = _pdf()
    for page in pages:
        pdf.add_page()
        if isinstance(page, str):
            pdf.set_font("helvetica", size=11)
            pdf.multi_cell(0, 14, page)
            continue
        buffer = io.BytesIO()
        page_image(page, dpi=dpi).save(buffer, format="PNG", dpi=(dpi, dpi))
        buffer.seek(0)
        pdf.image(buffer, x=0, y=0, w=612, h=792)
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    return path


def encrypted_pdf(path: Path, text: str, *, password: str = "hunter2") -> Path:
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.multi_cell(0, 14, text)
    pdf.set_encryption(owner_password=password + "-owner", user_password=password)
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    return path


def docx_file(path: Path, blocks: Iterable[tuple[str, Any]]) -> Path:
    """Blocks: ("title"|"h1"|"h2"|"h3", text), ("p", text) or ("table", [[cell, …], …])."""
    import docx

    document = docx.Document()
    for kind, value in blocks:
        if kind == "title":
            document.add_heading(value, level=0)
        elif kind in ("h1", "h2", "h3"):
            document.add_heading(value, level=int(kind[1]))
        elif kind == "p":
            document.add_paragraph(value)
        elif kind == "table":
            table = document.add_table(rows=len(value), cols=len(value[0]))
            for r, row in enumerate(value):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = str(cell)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(path))
    return path


def pptx_file(path: Path, slides: Iterable[tuple[str, str, str]]) -> Path:
    """Slides as (title, body, speaker notes)."""
    from pptx import Presentation

    deck = Presentation()
    layout = deck.slide_layouts[1]  # title and content
    for title, body, notes in slides:
        slide = deck.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    path.parent.mkdir(parents=True, exist_ok=True)
    deck.save(str(path))
    return path


def xlsx_file(path: Path, sheets: dict[str, Sequence[Sequence[Any]]]) -> Path:
    import openpyxl

    workbook = openpyxl.Workbook()
    if workbook.active is not None:  # the empty sheet a new workbook starts with
        workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook.save(str(path))
    return path


def csv_file(
    path: Path, rows: Iterable[Sequence[Any]], *, encoding: str = "utf-8", delimiter: str = ","
) -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\n").writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path
