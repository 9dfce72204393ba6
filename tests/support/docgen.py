"""Real sample documents, written with the same libraries people's documents come from.

Used by the documents benchmark and by the tests: text PDFs (fpdf2), image-only "scanned" PDF
pages (text drawn with Pillow at 300 dpi, no text layer), encrypted PDFs, Word, PowerPoint and
Excel files, CSV in any encoding, Obsidian canvases, EPUB and ODT (zipped XML written here),
screenshot-like images and a PNG claiming more pixels than it holds. fpdf2 is a test/bench
dependency only.
"""

from __future__ import annotations

import csv
import io
import json
import struct
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape


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


def canvas_file(path: Path, nodes: Sequence[dict[str, Any]], edges: Sequence[dict[str, Any]] = (),
                *, indent: str | None = "\t") -> Path:  # fmt: skip
    """A JSON Canvas 1.0 file (Obsidian's ``.canvas``). Nodes without a position get one in a
    row, 300 pixels apart; ``indent=None`` writes the JSON on one line, as small as it goes."""
    placed = []
    for i, node in enumerate(nodes):
        placed.append({"x": i * 300, "y": 0, "width": 250, "height": 150, **node})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"nodes": placed, "edges": list(edges)}, indent=indent), "utf-8")
    return path


def _zip(path: Path, members: Sequence[tuple[str, str | bytes]]) -> Path:
    """A zip archive; a member named ``mimetype`` is stored uncompressed, as EPUB and ODT
    require."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members:
            method = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            archive.writestr(name, content, compress_type=method)
    return path


def epub_file(path: Path, title: str, chapters: Sequence[tuple[str, str]], *, version: int = 3) -> Path:
    """An EPUB with one XHTML file per chapter, (name in the table of contents, body XHTML),
    in spine order: EPUB 3 with a ``nav`` page, or EPUB 2 with an NCX."""
    items, refs, pages, points, links = [], [], [], [], []
    for i, (name, body) in enumerate(chapters, start=1):
        href = f"text/chapter{i}.xhtml"
        items.append(f'<item id="c{i}" href="{href}" media-type="application/xhtml+xml"/>')
        refs.append(f'<itemref idref="c{i}"/>')
        pages.append((f"OEBPS/{href}", (
            '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
            '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>'
            f"{escape(name)}</title><style>p {{ margin: 0 }}</style></head><body>{body}</body></html>"
        )))  # fmt: skip
        points.append(
            f'<navPoint id="n{i}" playOrder="{i}"><navLabel><text>{escape(name)}</text></navLabel>'
            f'<content src="{href}"/></navPoint>'
        )
        links.append(f'<li><a href="{href}">{escape(name)}</a></li>')
    if version == 3:
        items.append('<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>')
        toc = ("OEBPS/nav.xhtml", (
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
            'xmlns:epub="http://www.idpf.org/2007/ops"><body><nav epub:type="toc"><ol>'
            f"{''.join(links)}</ol></nav></body></html>"
        ))  # fmt: skip
        spine = "<spine>"
    else:
        items.append('<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
        toc = ("OEBPS/toc.ncx", (
            '<?xml version="1.0" encoding="utf-8"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" '
            f'version="2005-1"><navMap>{"".join(points)}</navMap></ncx>'
        ))  # fmt: skip
        spine = '<spine toc="ncx">'
    package = (
        f'<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" '
        f'version="{version}.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="id">urn:uuid:0</dc:identifier><dc:title>{escape(title)}</dc:title>'
        f"<dc:language>en</dc:language></metadata><manifest>{''.join(items)}</manifest>"
        f"{spine}{''.join(refs)}</spine></package>"
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    return _zip(path, [("mimetype", "application/epub+zip"), ("META-INF/container.xml", container),
                       ("OEBPS/content.opf", package), toc, *pages])  # fmt: skip


ODT_NAMESPACES = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
)


def odt_file(path: Path, blocks: Iterable[tuple[str, Any]]) -> Path:
    """An OpenDocument text. Blocks: ("h1"|"h2"|"h3", text), ("p", text), ("list", [item, …]),
    ("table", [[cell, …], …]) or ("xml", raw content XML)."""
    body = []
    for kind, value in blocks:
        if kind in ("h1", "h2", "h3"):
            body.append(f'<text:h text:outline-level="{kind[1]}">{escape(value)}</text:h>')
        elif kind == "p":
            body.append(f"<text:p>{escape(value)}</text:p>")
        elif kind == "list":
            items = "".join(f"<text:list-item><text:p>{escape(v)}</text:p></text:list-item>" for v in value)
            body.append(f"<text:list>{items}</text:list>")
        elif kind == "table":
            rows = "".join(
                "<table:table-row>"
                + "".join(f"<table:table-cell><text:p>{escape(str(c))}</text:p></table:table-cell>" for c in row)
                + "</table:table-row>"
                for row in value
            )
            body.append(f'<table:table table:name="T">{rows}</table:table>')
        else:
            body.append(value)
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODT_NAMESPACES} office:version="1.3">'
        f"<office:body><office:text>{''.join(body)}</office:text></office:body></office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
        'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">'
        '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    return _zip(path, [("mimetype", "application/vnd.oasis.opendocument.text"),
                       ("content.xml", content), ("META-INF/manifest.xml", manifest)])  # fmt: skip


def text_image(path: Path, lines: Sequence[str], *, size: tuple[int, int] = (1280, 720),
               transparent: bool = False) -> Path:  # fmt: skip
    """A screenshot-like image with ``lines`` of 20-pixel text on it (PNG, JPEG, WebP, … by
    the path's ending); ``transparent``: black text on a transparent background."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGBA", size, (0, 0, 0, 0) if transparent else (248, 248, 248, 255))
    draw = ImageDraw.Draw(image)
    try:
        font: Any = ImageFont.truetype("DejaVuSans.ttf", 20)
    except OSError:
        font = ImageFont.load_default(size=20)
    draw.rectangle((0, 0, size[0], 36), fill=None if transparent else (45, 45, 60, 255))
    for i, line in enumerate(lines):
        draw.text((24, 60 + i * 36), line, fill=(15, 15, 15, 255), font=font)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() in (".jpg", ".jpeg", ".bmp"):
        image = image.convert("RGB")
    image.save(path)
    return path


def png_claiming(path: Path, width: int, height: int) -> Path:
    """A small white PNG whose header is rewritten to claim ``width`` × ``height`` pixels (a
    "pixel bomb": its few bytes of pixel data end long before the rows it claims)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (64, 64), 255).save(buffer, format="PNG")
    data = bytearray(buffer.getvalue())
    data[16:24] = struct.pack(">II", width, height)  # IHDR: after the signature, length and type
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))  # the chunk's CRC, over type and data
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(data))
    return path
