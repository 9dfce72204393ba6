"""Hostile documents: Office and ODT zip bombs, PDFs that inflate, XML entity bombs, huge
canvases, pixel bombs, enormous lines of text and a 2 GB inbox item, each indexed (or taken) in
a fresh process and measured against an ordinary document of the same type.

    python -m benchmarks.hostile [--workdir DIR] [--json FILE] [--cases NAME ...] [--timeout S]
        [--memory-cap-mb MB] [--no-intake] [--no-overhead]

Builds, with :mod:`zipfile` and highly compressible XML written straight into the archive:

* a DOCX of about 1 MB whose ``word/document.xml`` inflates to 300 MB of paragraphs;
* a PPTX of about 6 MB whose one slide inflates to 1.5 GB of text runs;
* an XLSX with a two-row sheet and a 250 MB shared-strings part of unique strings;
* an XLSX of a few KB whose sheet states it spans the whole grid, ``A1:XFD1048576``;
* a 99 MB plain-text file that is one line (under the 100 MB document cap);
* at the limits — just under what is read rather than skipped: a DOCX and a one-slide PPTX
  holding 23 MB of prose XML, an XLSX with 23 MB of shared strings;
* PDFs whose one page's Flate-compressed content stream inflates to millions of ``(word) Tj``
  operators, written byte by byte with :mod:`zlib` (``tests/support/hostile_pdf.py``): 1.2 MB
  (1.85 million operators) and 3.6 MB (5.5 million); PDFium needs about 1 GB per million;
* a PDF of five short pages (a fact on page 4), whose outcome shows the chunks it became;
* EPUB and ODT files whose XML declares entities: a chapter holding a "billion laughs" (an
  entity expanding to 10⁹ ``lol`` s), a chapter loading a DTD and entities from the network
  and ``/etc/passwd`` (XXE), an ODT whose text is ``/etc/passwd``;
* ODTs whose ``content.xml`` holds 300 MB of identical paragraphs (a zip bomb), 250 MB of prose
  (past ``max_inflated_mb``, which binds only Office files: ODT is streamed) and 22 MB of prose
  (just inside the 20 MB text cap);
* canvases of 18,500 and 20,000 cards of 1,000 characters (just under and over the 20 MB a
  canvas may be), of 100,000 cards, 100,000 connections and 1,000 groups (past the cards,
  connections and groups read), and of JSON lists nested 5 million deep;
* PNGs, read with ``ocr_images`` on (``VAULTSEEK_OCR_IMAGES=true`` in the child's environment):
  one of a few hundred bytes claiming 100,000 × 100,000 pixels, a 4K screenshot and a
  full-page screenshot of 1,440 × 30,000 pixels;
* notes of 3 MB on one line: ``password=`` repeated, ``api_key=<hex>`` repeated, base64 tokens
  (the scrubbing benchmark's adversarial lines, :mod:`benchmarks.scrub`) and prose; their
  outcome adds the longest chunk and the CPU seconds per MB past the ordinary note's;
* ``vaultseek intake`` of an inbox holding a 2 GB file (sparse: it costs no disk) and the
  1.2 MB inflating PDF, with the peak memory of the intake process and its reader;

and, as each one's baseline, an ordinary document of the same type. Each file is indexed alone
(``vaultseek index``, a fresh vault and index) in a child process whose address space is capped
at ``--memory-cap-mb`` (a run that needs more fails inside the child, not on the machine) and
which is stopped after ``--timeout`` seconds. For each file it prints wall and CPU seconds,
peak resident memory (the child's own ``ru_maxrss``, from ``os.wait4``), the exit code, and
what the index made of the file (chunks and the longest one's characters, or the reason it was
skipped, and any notice). Peak memory is the largest of the index process and the document
reader child it starts (``ru_maxrss`` counts the children it waited for). The target is at
most 500 MB per file for the index process; the reader child of a document may take 1,024 MB
past its start (``Limits.max_reader_bytes``) before it is stopped.

It also measures what reading documents in a child costs per file: the same small PDFs read
in this process and through one :class:`~vaultseek.documents.sandbox.ReaderProcess`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import IO, Any

from tests.support import docgen, hostile_pdf

from benchmarks.scrub import FAMILIES, _tokens
from vaultseek.documents.limits import megabytes

MB = 1024 * 1024
TARGET_MB = 500

WORDS = (
    "hangar zeppelin beam mast mooring inspection crew schedule budget invoice turbine bearing "
    "filter valve pressure sensor report quarterly review harbour cargo ledger crate contract"
).split()

_DOCX_PARAGRAPH = b"<w:p><w:r><w:t>Line 0001 of the hangar log: mooring mast inspected.</w:t></w:r></w:p>"
_PPTX_PARAGRAPH = b"<a:p><a:r><a:t>Slide text: the mooring mast was inspected again.</a:t></a:r></a:p>"
_ODT_PARAGRAPH = b"<text:p>Line 0001 of the hangar log: the mooring mast was inspected.</text:p>"


def _write_repeated(out: IO[bytes], unit: bytes, size: int) -> None:
    """``unit`` repeated to ``size`` bytes, in blocks of about 1 MB (never all in memory)."""
    block = unit * max(1, MB // len(unit))
    written = 0
    while written + len(block) <= size:
        out.write(block)
        written += len(block)
    out.write(unit * ((size - written) // len(unit)))


def _repack(source: Path, target: Path, member: str, write: Callable[[IO[bytes]], object]) -> Path:
    """Copy the archive ``source`` to ``target`` with ``member`` rewritten by ``write``, streamed
    into the archive at the strongest deflate level."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(source) as old, \
            zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as new:  # fmt: skip
        for info in old.infolist():
            if info.filename == member:
                with new.open(member, "w", force_zip64=True) as out:
                    write(out)
            else:
                new.writestr(info, old.read(info.filename))
    return target


def _splice(xml: bytes, marker: bytes, write_between: Callable[[IO[bytes]], None]) -> Callable[[IO[bytes]], None]:
    """A writer for ``xml`` with ``write_between``'s output inserted right after ``marker``."""
    cut = xml.index(marker) + len(marker)

    def write(out: IO[bytes]) -> None:
        out.write(xml[:cut])
        write_between(out)
        out.write(xml[cut:])

    return write


def _write_varied_whole(out: IO[bytes], wrap: bytes, size: int) -> None:
    """Whole paragraphs of random words, each ``wrap`` around its text, up to ``size`` bytes:
    they compress about as well as real prose does (6 to 8:1)."""
    rng = random.Random(11)
    written = 0
    while True:
        paragraphs = [
            wrap % " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))).encode() for _ in range(2000)
        ]
        for paragraph in paragraphs:
            if written + len(paragraph) > size:
                return
            out.write(paragraph)
            written += len(paragraph)


def _inflating(path: Path, base: Path, member: str, marker: bytes, paragraph: bytes, wrap: bytes, *,
               inflated_mb: float, varied: bool) -> Path:  # fmt: skip
    """``base`` (a real document) copied to ``path`` with ``inflated_mb`` MB of paragraphs in
    ``member`` right after ``marker``: ``paragraph`` repeated (a zip bomb, about 300:1), or
    ``varied`` prose, each paragraph ``wrap`` around its text (a huge honest document)."""
    xml = zipfile.ZipFile(base).read(member)
    size = int(inflated_mb * MB)
    fill = (
        (lambda out: _write_varied_whole(out, wrap, size))
        if varied
        else (lambda out: _write_repeated(out, paragraph, size))
    )
    _repack(base, path, member, _splice(xml, marker, fill))
    base.unlink()
    return path


def docx_inflating(path: Path, *, inflated_mb: float = 300, varied: bool = False) -> Path:
    """A real DOCX whose ``word/document.xml`` holds ``inflated_mb`` MB of paragraphs."""
    base = docgen.docx_file(path.with_suffix(".base.docx"), [("h1", "Hangar log"), ("p", "BODYMARK")])
    return _inflating(path, base, "word/document.xml", b"<w:body>", _DOCX_PARAGRAPH,
                      b"<w:p><w:r><w:t>%s</w:t></w:r></w:p>", inflated_mb=inflated_mb, varied=varied)  # fmt: skip


def pptx_inflating(path: Path, *, inflated_mb: float = 1536, varied: bool = False) -> Path:
    """A real PPTX whose one slide holds ``inflated_mb`` MB of paragraphs in its body."""
    base = docgen.pptx_file(path.with_suffix(".base.pptx"), [("Mooring", "BODYMARK", "")])
    return _inflating(path, base, "ppt/slides/slide1.xml", b"BODYMARK</a:t></a:r></a:p>", _PPTX_PARAGRAPH,
                      b"<a:p><a:r><a:t>%s</a:t></a:r></a:p>", inflated_mb=inflated_mb, varied=varied)  # fmt: skip


def odt_inflating(path: Path, *, inflated_mb: float = 300, varied: bool = False) -> Path:
    """A real ODT whose ``content.xml`` holds ``inflated_mb`` MB of paragraphs."""
    base = docgen.odt_file(path.with_suffix(".base.odt"), [("h1", "Hangar log"), ("p", "BODYMARK")])
    return _inflating(path, base, "content.xml", b"<office:text>", _ODT_PARAGRAPH,
                      b"<text:p>%s</text:p>", inflated_mb=inflated_mb, varied=varied)  # fmt: skip


_LAUGHS = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html [<!ENTITY lol0 "lol">'
    + b"".join(b'<!ENTITY lol%d "%s">' % (n, b"&lol%d;" % (n - 1) * 10) for n in range(1, 10))
    + b']>\n<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&lol9;</p></body></html>'
)
"""A chapter whose one paragraph is an entity that expands to 10⁹ ``lol`` s (3 GB)."""
_EPUB_XXE = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html SYSTEM "http://127.0.0.1:9/xhtml.dtd" ['
    b'<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;'
    b'<!ENTITY secret SYSTEM "file:///etc/passwd">]>\n'
    b'<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&secret;</p></body></html>'
)
"""A chapter that would load a DTD and a parameter entity from the network and read a file."""
_ODT_XXE = (
    b'<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE d [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
    b"<office:document-content " + docgen.ODT_NAMESPACES.encode() + b"><office:body><office:text>"
    b"<text:p>&secret;</text:p></office:text></office:body></office:document-content>"
)


def epub_chapter(path: Path, chapter: bytes) -> Path:
    """An ordinary two-chapter EPUB whose first chapter is replaced by ``chapter``."""
    base = docgen.epub_file(path.with_suffix(".base.epub"), "Hangar log",
                            [("One", "<p>The mooring mast was inspected.</p>"), ("Two", "<p>Crew rota.</p>")])  # fmt: skip
    _repack(base, path, "OEBPS/text/chapter1.xhtml", lambda out: out.write(chapter))
    base.unlink()
    return path


def odt_content(path: Path, content: bytes) -> Path:
    """An ODT whose ``content.xml`` is ``content``."""
    base = docgen.odt_file(path.with_suffix(".base.odt"), [("p", "The mooring mast was inspected.")])
    _repack(base, path, "content.xml", lambda out: out.write(content))
    base.unlink()
    return path


_XLSX_PARTS = {
    "[Content_Types].xml": (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
        '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
        "</Types>"
    ),
    "_rels/.rels": (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
        "</Relationships>"
    ),
    "xl/workbook.xml": (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        '<sheets><sheet name="Parts" sheetId="1" r:id="rId1"/></sheets></workbook>'
    ),
    "xl/_rels/workbook.xml.rels": (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
        '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
        "</Relationships>"
    ),
}  # fmt: skip
_SHEET = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">{dimension}<sheetData>'
    '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
    '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>42</v></c></row>{more}'
    "</sheetData></worksheet>"
)  # fmt: skip
_STRINGS_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    b"<si><t>part</t></si><si><t>count</t></si><si><t>mooring mast bolt</t></si>"
)


def _xlsx(path: Path, sheet: str, strings: Callable[[IO[bytes]], None]) -> Path:
    """A minimal workbook written part by part: one sheet ``Parts``, its shared strings."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, text in _XLSX_PARTS.items():
            archive.writestr(name, text)
        archive.writestr("xl/worksheets/sheet1.xml", sheet)
        with archive.open("xl/sharedStrings.xml", "w", force_zip64=True) as out:
            out.write(_STRINGS_HEAD)
            strings(out)
            out.write(b"</sst>")
    return path


def xlsx_shared_strings(path: Path, *, inflated_mb: float = 250) -> Path:
    """A workbook whose sheet is two rows and whose shared-strings part holds ``inflated_mb``
    MB of unique strings, all loaded before the first row is read."""
    size = int(inflated_mb * MB)

    def strings(out: IO[bytes]) -> None:
        written, number = 0, 0
        while written < size:
            block = b"".join(
                b"<si><t>spare part %09d for the mooring mast</t></si>" % n for n in range(number, number + 10_000)
            )
            out.write(block)
            written += len(block)
            number += 10_000

    return _xlsx(path, _SHEET.format(dimension="", more=""), strings)


def xlsx_claimed_grid(path: Path) -> Path:
    """A workbook of a few KB whose sheet states it spans the whole grid (``A1:XFD1048576``)
    and has a cell in the grid's last row."""
    last = '<row r="1048576"><c r="A1048576"><v>1</v></c></row>'
    return _xlsx(path, _SHEET.format(dimension='<dimension ref="A1:XFD1048576"/>', more=last), lambda _out: None)


def one_line_txt(path: Path, *, mb: float = 99) -> Path:
    """``mb`` MB of prose sentences with no line break anywhere."""
    rng = random.Random(3)
    sentences = [" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "." for _ in range(2000)]
    unit = (" ".join(sentences) + " ").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        _write_repeated(out, unit, int(mb * MB))
    return path


def canvas_cards(path: Path, *, cards: int = 18_500, chars: int = 1_000) -> Path:
    """A canvas of ``cards`` text cards of ``chars`` characters of prose each, written on one
    line: at the defaults 19.6 MB, just under the 20 MB a canvas may be."""
    rng = random.Random(7)
    nodes = []
    for n in range(cards):
        words = f"Card {n}:"
        while len(words) < chars:
            words += " " + rng.choice(WORDS)
        nodes.append({"id": f"c{n}", "type": "text", "text": words[:chars]})
    return docgen.canvas_file(path, nodes, indent=None)


def canvas_crowded(path: Path, *, cards: int = 100_000, groups: int = 1_000) -> Path:
    """A canvas of ``groups`` nested groups framing ``cards`` short cards joined in a chain by as
    many connections (every tenth labelled), far past the cards, connections and groups read."""
    frames = [{"id": f"g{n}", "type": "group", "label": f"Bay {n}", "x": -groups + n, "y": -groups + n,
               "width": 400 * cards, "height": 4 * groups} for n in range(groups)]  # fmt: skip
    nodes = [{"id": f"c{n}", "type": "text", "text": f"Card {n}: bay {n % 97} checked."} for n in range(cards)]
    edges = [{"id": f"e{n}", "fromNode": f"c{n}", "toNode": f"c{(n + 1) % cards}", **({"label": "then"} if n % 10 == 0 else {})}
             for n in range(cards)]  # fmt: skip
    return docgen.canvas_file(path, frames + nodes, edges, indent=None)


def canvas_nested(path: Path, *, depth: int = 5_000_000) -> Path:
    """A canvas whose one card holds JSON lists nested ``depth`` deep (10 MB at the default)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        out.write('{"nodes": [{"id": "a", "type": "text", "text": "Deep card", "x": 0, "y": 0, "width": 1, '
                  '"height": 1, "extra": ')  # fmt: skip
        out.write("[" * depth + "]" * depth)
        out.write('}], "edges": []}')
    return path


def screenshot(path: Path, *, size: tuple[int, int] = (1440, 30_000)) -> Path:
    """A full-page screenshot: lines of prose down a tall page (43 million pixels at the
    default, under the 50 million an image may claim)."""
    rng = random.Random(9)
    lines = [" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "." for _ in range((size[1] - 60) // 36)]
    return docgen.text_image(path, lines, size=size)


def pixel_bomb(path: Path) -> Path:
    return docgen.png_claiming(path, 100_000, 100_000)


def one_line_note(path: Path, line: Callable[[int], str], *, mb: float = 3) -> Path:
    """A note that is one line of ``mb`` MB, from one of the scrubbing benchmark's adversarial
    line builders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(line(int(mb * MB)))
    return path


def ordinary(kind: str, path: Path) -> Path:
    """The baseline: an ordinary document of ``kind``, a few pages' worth."""
    rng = random.Random(5)

    def prose(words: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."

    if kind == "docx":
        blocks: list[tuple[str, Any]] = [("title", "Hangar log")]
        for n in range(20):
            blocks += [("h1", f"Week {n + 1}"), ("p", prose(120)), ("p", prose(80))]
        return docgen.docx_file(path, blocks)
    if kind == "pptx":
        return docgen.pptx_file(path, [(f"Slide {n + 1}", prose(60), prose(20)) for n in range(20)])
    if kind == "xlsx":
        rows: list[list[Any]] = [["part", "count", "note"], *([f"part {n}", n, prose(8)] for n in range(1000))]
        return docgen.xlsx_file(path, {"Parts": rows})
    if kind == "pdf":
        return docgen.text_pdf(path, [prose(300) for _ in range(10)])
    if kind == "epub":
        return docgen.epub_file(path, "Hangar log", [(f"Week {n + 1}", f"<p>{prose(120)}</p><p>{prose(80)}</p>") for n in range(20)])
    if kind == "odt":
        return docgen.odt_file(path, [block for n in range(20) for block in (("h1", f"Week {n + 1}"), ("p", prose(120)), ("p", prose(80)))])
    if kind == "canvas":
        return docgen.canvas_file(path, [{"id": f"c{n}", "type": "text", "text": f"# Week {n + 1}\n{prose(60)}"} for n in range(20)])
    if kind == "png":
        return docgen.text_image(path, [prose(12) for _ in range(15)])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(prose(100) for _ in range(200)))
    return path


SHORT_PAGES = [
    "Minutes of the harbour board, spring meeting.",
    "Present: the harbour master and two pilots.",
    "Apologies from the customs office.",
    "Decided: the mooring fee rises to 42 crowns.",
    "Next meeting in June.",
]


def short_pages(path: Path) -> Path:
    return hostile_pdf.short_pages_pdf(path, SHORT_PAGES)


def inflating(path: Path, *, operators: int) -> Path:
    return hostile_pdf.inflating_pdf(path, operators, varied=True)


CASES: dict[str, tuple[str, str, Callable[[Path], Path]]] = {
    "docx": ("DOCX bomb (300 MB inflated)", "docx", docx_inflating),
    "pptx": ("PPTX bomb (1.5 GB inflated)", "pptx", pptx_inflating),
    "xlsx": ("XLSX, 250 MB of shared strings", "xlsx", xlsx_shared_strings),
    "grid": ("XLSX of a few KB claiming the whole grid", "xlsx", xlsx_claimed_grid),
    "txt": ("TXT, 99 MB on one line", "txt", one_line_txt),
    "docx-limit": ("DOCX at the limits: 23 MB of prose XML", "docx", partial(docx_inflating, inflated_mb=23, varied=True)),
    "pptx-limit": ("PPTX at the limits: one slide of 23 MB of prose XML", "pptx", partial(pptx_inflating, inflated_mb=23, varied=True)),
    "xlsx-limit": ("XLSX at the limits: 23 MB of shared strings", "xlsx", partial(xlsx_shared_strings, inflated_mb=23)),
    "pdf": ("PDF, 1.2 MB inflating to 1.85 million text operators", "pdf", partial(inflating, operators=1_850_000)),
    "pdf-large": ("PDF, 3.6 MB inflating to 5.5 million text operators", "pdf", partial(inflating, operators=5_550_000)),
    "pdf-short": ("PDF of five short pages (a fact on page 4)", "pdf", short_pages),
    "epub-laughs": ("EPUB, a chapter declaring a billion laughs (10⁹ `lol`s)", "epub", partial(epub_chapter, chapter=_LAUGHS)),
    "epub-xxe": ("EPUB, a chapter with an external DTD and entities (XXE)", "epub", partial(epub_chapter, chapter=_EPUB_XXE)),
    "odt-xxe": ("ODT whose text is the external entity `file:///etc/passwd` (XXE)", "odt", partial(odt_content, content=_ODT_XXE)),
    "odt": ("ODT bomb (300 MB inflated)", "odt", odt_inflating),
    "odt-large": ("ODT of 250 MB of prose XML, past max_inflated_mb", "odt", partial(odt_inflating, inflated_mb=250, varied=True)),
    "odt-limit": ("ODT just inside the text cap: 22 MB of prose XML", "odt", partial(odt_inflating, inflated_mb=22, varied=True)),
    "canvas": ("Canvas of 18,500 cards of 1,000 characters (under the 20 MB cap)", "canvas", canvas_cards),
    "canvas-over": ("Canvas of 20,000 cards of 1,000 characters (over the 20 MB cap)", "canvas", partial(canvas_cards, cards=20_000)),
    "canvas-crowded": ("Canvas of 100,000 cards, 100,000 connections, 1,000 groups", "canvas", canvas_crowded),
    "canvas-deep": ("Canvas holding JSON lists nested 5 million deep", "canvas", canvas_nested),
    "png-bomb": ("PNG claiming 100,000 × 100,000 pixels", "png", pixel_bomb),
    "png-4k": ("PNG 4K screenshot, 3,840 × 2,160 pixels, 58 lines (OCR)", "png", partial(screenshot, size=(3840, 2160))),
    "png-tall": ("PNG full-page screenshot, 1,440 × 30,000 pixels, 831 lines (OCR)", "png", screenshot),
    "line-password": ("Note, 3 MB on one line: `password=password=…`", "md",
                      partial(one_line_note, line=FAMILIES["`password=password=…` (values past the cap)"])),
    "line-apikey": ("Note, 3 MB on one line: `api_key=<hex> ` repeated", "md",
                    partial(one_line_note, line=_tokens(lambda raw: b"api_key=" + raw.hex().encode(), 20))),
    "line-base64": ("Note, 3 MB on one line: base64 tokens", "md",
                    partial(one_line_note, line=FAMILIES["base64 tokens (40 random bytes each)"])),
    "line-prose": ("Note, 3 MB on one line: prose", "md", partial(one_line_txt, mb=3)),
}
"""Name → (what it is, file suffix, how to build it)."""

SETTINGS = {"png": {"VAULTSEEK_OCR_IMAGES": "true"}}
"""File suffix → the settings (environment variables) its files, hostile and ordinary, are
indexed with: images are read only with ``ocr_images`` on."""


def build(workdir: Path, names: list[str]) -> dict[str, tuple[Path, Path]]:
    """For each case, (hostile file, ordinary file of its type), each alone in its own vault
    folder; files already in ``workdir`` are reused."""
    files = {}
    for name in names:
        _label, suffix, make = CASES[name]
        hostile = workdir / f"{name}-hostile" / f"hostile.{suffix}"
        if not hostile.exists():
            make(hostile)
        plain = workdir / f"{suffix}-ordinary" / f"ordinary.{suffix}"
        if not plain.exists():
            ordinary(suffix, plain)
        files[name] = (hostile, plain)
    return files


def measured(command: list[str], *, timeout: float, memory_cap_mb: int,
             settings: dict[str, str] | None = None) -> tuple[dict[str, Any], str, str]:  # fmt: skip
    """Run ``command`` in a child process whose address space is capped, with ``settings``
    added to its environment: its figures (wall and CPU seconds, peak memory, exit code), stdout
    and stderr."""
    cap = memory_cap_mb * MB

    def limit() -> None:  # runs in the child: a capped address space, its own process group
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        os.setsid()

    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=out, stderr=err, env={**os.environ, **(settings or {})},
                                 preexec_fn=limit)  # setrlimit must run in the child
        timed_out = False
        deadline = started + timeout
        own_peak = 0  # the process's own peak (VmHWM), without the reader child it starts
        while True:
            own_peak = max(own_peak, _own_peak_kb(child.pid))
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                os.killpg(child.pid, signal.SIGKILL)
                timed_out = True
                pid, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    figure: dict[str, Any] = {
        "seconds": round(seconds, 2),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),  # Linux reports KiB
        "process_peak_mb": round(own_peak / 1024),
        "exit": child.returncode,
        "timed_out": timed_out,
    }
    return figure, stdout, stderr


def _own_peak_kb(pid: int) -> int:
    """A live process's peak resident memory (``VmHWM``, its own, not its children's)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def index_alone(file: Path, db: Path, *, timeout: float, memory_cap_mb: int) -> dict[str, Any]:
    """``vaultseek index`` over the folder holding ``file`` in a fresh child process: seconds,
    the child's peak resident memory, exit code, and what the index holds for the file."""
    if db.exists():
        db.unlink()
    command = [sys.executable, "-m", "vaultseek.cli", "index", str(file.parent), "--db", str(db), "--json", "--no-deep"]
    figure, stdout, stderr = measured(command, timeout=timeout, memory_cap_mb=memory_cap_mb,
                                      settings=SETTINGS.get(file.suffix[1:]))
    timed_out = figure["timed_out"]
    figure["size_mb"] = round(file.stat().st_size / MB, 3)
    try:
        report = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        last = stderr.strip().splitlines()[-1:] if stderr.strip() else []
        figure["outcome"] = "killed at the time limit" if timed_out else f"failed: {' '.join(last)[:160]}"
        return figure
    skipped = {item["path"]: item["reason"] for item in report.get("skipped", [])}
    if file.name in skipped:
        figure["outcome"] = f"skipped: {skipped[file.name]}"
    else:
        chunks = report.get("chunks_written", 0)
        figure["outcome"] = f"{chunks:,} chunk{'' if chunks == 1 else 's'}"
        if chunks:
            figure["largest_chunk"] = _largest_chunk(db)
            figure["outcome"] += f", the largest {figure['largest_chunk']:,} characters"
        if file.name == "hostile.pdf" and "short" in file.parent.name:
            figure["outcome"] += ", " + _cited_page(file.parent, db)
    notices = [n for n in report.get("notices", []) if file.name in n]
    if notices:
        figure["notice"] = notices[0]
        if "only its first" in notices[0]:  # the text cap: "… only its first 20 MB of text was …"
            figure["outcome"] += ", the first " + notices[0].split("only its first ", 1)[1].split(" was", 1)[0]
        figure["outcome"] += " (notice)"
    return figure


def _largest_chunk(db: Path) -> int:
    """The characters in the index's longest chunk."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(connection.execute("SELECT coalesce(max(length(text)), 0) FROM chunks").fetchone()[0])
    finally:
        connection.close()


def _cited_page(vault: Path, db: Path) -> str:
    """Where a search for the fact on page 4 of the short-page PDF says it is."""
    found = subprocess.run(
        [sys.executable, "-m", "vaultseek.cli", "search", "mooring fee", "--mode", "bm25", "--json",
         "--vault", str(vault), "--db", str(db)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    try:
        return f"'mooring fee' cited as {json.loads(found.stdout)['results'][0]['sections'][0]['label']}"
    except (ValueError, LookupError):
        return "search failed"


def intake_inbox(workdir: Path, pdf: Path, *, timeout: float, memory_cap_mb: int) -> dict[str, Any]:
    """``vaultseek intake`` of an inbox holding a 2 GB file and an inflating PDF, in a fresh
    child process: its figures and each item's outcome."""
    vault = workdir / "intake-vault"
    inbox = vault / "_intake" / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    (vault / "harbour").mkdir(exist_ok=True)
    (vault / "harbour" / "cranes.md").write_text("# Cranes\n\nThe cranes on the north quay are oiled weekly.\n")
    big = inbox / "export.txt"
    with big.open("wb") as handle:
        handle.truncate(2 * 1024 * MB)  # sparse: no disk, but 2 GB to anything that reads it
    (inbox / "bomb.pdf").write_bytes(pdf.read_bytes())
    db = workdir / "dbs" / "intake.db"
    subprocess.run([sys.executable, "-m", "vaultseek.cli", "index", str(vault), "--db", str(db), "--no-deep", "--quiet"],
                   check=False, capture_output=True, timeout=timeout)  # fmt: skip
    command = [sys.executable, "-m", "vaultseek.cli", "intake", "--json", "--vault", str(vault), "--db", str(db)]
    figure, stdout, stderr = measured(command, timeout=timeout, memory_cap_mb=memory_cap_mb)
    figure["size_mb"] = round((big.stat().st_size + pdf.stat().st_size) / MB, 2)
    try:
        outcomes = json.loads(stdout)
        items = outcomes["items"]
        figure["outcome"] = "; ".join(f"{o['item']}: {o.get('error') or o.get('destination')}" for o in items)
    except (ValueError, LookupError, TypeError):
        last = stderr.strip().splitlines()[-1:] if stderr.strip() else []
        figure["outcome"] = f"failed: {' '.join(last)[:200]}"
    return figure


def reader_overhead(workdir: Path, *, files: int = 200) -> dict[str, float]:
    """Seconds per small PDF read in this process and through a reader child, and what
    starting the child costs."""
    from vaultseek.documents import ExtractContext, extract
    from vaultseek.documents.sandbox import ReaderProcess

    folder = workdir / "small-pdfs"
    paths = [folder / f"memo-{n}.pdf" for n in range(files)]
    for n, path in enumerate(paths):
        if not path.exists():
            docgen.text_pdf(path, [f"Memo {n}: the north quay cranes were inspected and oiled."] * 2)
    blobs = [(p.name, p.read_bytes()) for p in paths]
    for name, data in blobs[:5]:  # warm: the library loaded, the files cached
        extract(name, data, ExtractContext(path=name))
    started = time.perf_counter()
    for name, data in blobs:
        extract(name, data, ExtractContext(path=name))
    inside = (time.perf_counter() - started) / files
    with ReaderProcess() as reader:
        started = time.perf_counter()
        reader.extract(blobs[0][0], blobs[0][1], ExtractContext(path=blobs[0][0]))
        first = time.perf_counter() - started
        started = time.perf_counter()
        for name, data in blobs:
            reader.extract(name, data, ExtractContext(path=name))
        child = (time.perf_counter() - started) / files
    return {"files": files, "in_process_ms": round(inside * 1000, 2), "reader_child_ms": round(child * 1000, 2),
            "child_start_s": round(first, 2)}  # fmt: skip


def run(workdir: Path, names: list[str], *, timeout: float, memory_cap_mb: int) -> dict[str, Any]:
    files = build(workdir, names)
    dbs = workdir / "dbs"
    dbs.mkdir(exist_ok=True)
    out: dict[str, Any] = {}
    baselines: dict[Path, dict[str, Any]] = {}
    for name, (hostile, plain) in files.items():
        if plain not in baselines:
            baselines[plain] = index_alone(plain, dbs / f"{plain.stem}-{plain.suffix[1:]}.db", timeout=timeout, memory_cap_mb=memory_cap_mb)
        figure = index_alone(hostile, dbs / f"{name}-hostile.db", timeout=timeout, memory_cap_mb=memory_cap_mb)
        if hostile.suffix in (".md", ".txt") and figure.get("largest_chunk"):
            # The text's own cost: CPU seconds past the ordinary file's (the process starting,
            # the model loading), per MB.
            figure["cpu_s_per_mb"] = round((figure["cpu_seconds"] - baselines[plain]["cpu_seconds"]) / figure["size_mb"], 2)
            figure["outcome"] += f", {figure['cpu_s_per_mb']} CPU s per MB past the baseline"
        out[name] = {"hostile": figure, "ordinary": baselines[plain]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hostile", description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where to build the files (default: a temporary folder); kept files are reused")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES), help="which hostile files to build and index")
    parser.add_argument("--timeout", type=float, default=300, help="seconds before a child is stopped (default 300)")
    parser.add_argument("--memory-cap-mb", type=int, default=4096, help="each child's address-space cap (default 4096)")
    parser.add_argument("--no-intake", action="store_true", help="leave out the intake inbox run")
    parser.add_argument("--no-overhead", action="store_true", help="leave out the per-file cost of the reader child")
    args = parser.parse_args(argv)
    for key in [k for k in os.environ if k.startswith("VAULTSEEK_")]:
        del os.environ[key]  # the user's settings must not shape the figures …
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["XDG_CONFIG_HOME"] = f"{scratch}/config"  # … nor their config file,
        os.environ["XDG_DATA_HOME"] = f"{scratch}/data"  # and their list of vaults is left alone
        workdir = args.workdir or Path(scratch) / "files"
        workdir.mkdir(parents=True, exist_ok=True)
        figures = run(workdir, args.cases, timeout=args.timeout, memory_cap_mb=args.memory_cap_mb)
        extra: dict[str, Any] = {}
        if not args.no_intake:
            pdf = workdir / "pdf-intake" / "bomb.pdf"
            if not pdf.exists():
                inflating(pdf, operators=1_850_000)
            extra["intake"] = intake_inbox(workdir, pdf, timeout=args.timeout, memory_cap_mb=args.memory_cap_mb)
        if not args.no_overhead:
            extra["reader_overhead"] = reader_overhead(workdir)
    print("| file | size | seconds (CPU) | peak memory | of it the process's own | exit | outcome |\n"
          "|---|---:|---:|---:|---:|---:|---|")
    for name, pair in figures.items():
        label, suffix, _make = CASES[name]
        for which, title in (("hostile", label), ("ordinary", f"baseline: ordinary {suffix.upper()}")):
            f = pair[which]
            peak = f"**{f['peak_rss_mb']:,} MB**" if which == "hostile" else f"{f['peak_rss_mb']:,} MB"
            print(f"| {title} | {megabytes(f['size_mb'] * MB)} | {f['seconds']} ({f['cpu_seconds']}) | {peak} | "
                  f"{f['process_peak_mb']:,} MB | {f['exit']} | {f['outcome']} |")
    if "intake" in extra:
        f = extra["intake"]
        print(f"| `vaultseek intake`: inbox of a 2 GB file and the 1.2 MB PDF | {f['size_mb']} MB | "
              f"{f['seconds']} ({f['cpu_seconds']}) | **{f['peak_rss_mb']:,} MB** | {f['process_peak_mb']:,} MB | "
              f"{f['exit']} | {f['outcome']} |")
    if figures:
        worst = max(pair["hostile"]["peak_rss_mb"] for pair in figures.values())
        print(f"\nworst hostile peak: {worst:,} MB (the larger of the index process and its reader child, "
              "which is stopped at 1,024 MB past its start)")
    if "reader_overhead" in extra:
        o = extra["reader_overhead"]
        print(f"reading {o['files']} small PDFs: {o['in_process_ms']} ms each in the process, "
              f"{o['reader_child_ms']} ms each through the reader child (started once: {o['child_start_s']} s)")
    if args.json:
        args.json.write_text(json.dumps({**figures, **extra}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
