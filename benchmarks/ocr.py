"""OCR engines on scanned pages in English, German and Chinese: ``python -m benchmarks.ocr``.

    python -m benchmarks.ocr [--pages 3] [--workdir DIR] [--json FILE]

The known text is real prose: the descriptions in tldr pages (``../shared/data/tldr``) of the
same commands in English (``pages``), German (``pages.de``, umlauts and ß) and Chinese
(``pages.zh``). Each page of it is printed at 11 pt on a letter page at 300 dpi with a real font
(a serif font for the Latin pages, a CJK sans for the Chinese ones, found with ``fc-match``),
then made to look scanned: a grey paper tone, a slight rotation, a little blur, sensor noise
and specks. The pages are wrapped in a PDF (fpdf2) with no text layer and rendered back with
pypdfium2 at 300 dpi in grayscale, as ``vaultseek index`` does, and each engine reads every page
through the same object ``index`` uses:

* Tesseract (:mod:`vaultseek.documents.ocr`) with the page's language pack, and for English and
  German also with the default ``ocr_languages = "eng+deu"``;
* RapidOCR (:mod:`vaultseek.documents.ocr_rapid`), the bundled multilingual model.

Accuracy is the character error rate: the edit distance between the OCR text and the known
text over the known text's length, after NFKC normalisation (full-width punctuation becomes
ASCII) with runs of whitespace made one space (Latin) or removed (Chinese, where Tesseract puts
spaces between characters). Time is wall-clock and CPU seconds a page (CPU: this process and
its children, so Tesseract's child process and RapidOCR's threads both count), one page at a
time; RapidOCR's one-off model load is timed apart. Ratios are against Tesseract with the
page's own pack, measured in the same run. Chinese rows need a CJK font (Debian:
``fonts-noto-cjk``) and Tesseract's ``chi_sim`` pack; a missing one is named and its rows left
out.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import resource
import shutil
import subprocess
import tempfile
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.vaultgen import get_shared_data

LANGUAGES = {"en": ("pages", "eng"), "de": ("pages.de", "deu"), "zh": ("pages.zh", "chi_sim")}
"""Benchmark language → (tldr folder, Tesseract pack)."""
FONT_QUERIES = {"en": "serif:lang=en", "de": "serif:lang=de", "zh": "sans-serif:lang=zh-cn"}
DPI = 300
FONT_PT = 11
LINES_PER_PAGE = 30
"""Printed lines a page: 11 pt at 1.6 line spacing from a one-inch top margin."""
@dataclass(frozen=True, slots=True)
class Wear:
    """How a printed page is made to look scanned."""

    name: str
    dpi: int
    """The scan's resolution (the PDF page holds the image at this; index renders at 300)."""
    ink: int
    """The grey of the printed text (0 is black)."""
    paper: tuple[float, float]
    """The paper's brightness, a share of white, drawn per page from this range."""
    rotation: float
    """Degrees of skew, drawn per page from ±this."""
    blur: float
    noise: float
    """The standard deviation of the sensor noise, in grey levels."""
    specks: float
    """The share of pixels that are dust or toner specks."""
    jpeg: int | None
    """The JPEG quality the scanner saved at; None: lossless."""


WEARS = (
    Wear("mild", 300, 0, (0.90, 0.96), 0.8, 0.7, 14, 0.0004, None),
    Wear("rough", 200, 70, (0.80, 0.88), 1.5, 1.1, 24, 0.001, 35),
)
"""A good office scan, and a worn copy scanned at 200 dpi and saved as a low-quality JPEG."""
_MARKUP = re.compile(r"https?://\S+|<[^>]*>|[`*_\[\]]|\{\{|\}\}")


@dataclass(frozen=True, slots=True)
class Row:
    scan: str
    language: str
    engine: str
    pages: int
    cer: float
    wall_per_page: float
    cpu_per_page: float
    cer_ratio: float | None = None
    """This engine's error rate over Tesseract's with the page's own pack (< 1: fewer errors)."""
    wall_ratio: float | None = None
    cpu_ratio: float | None = None


# -- the known text -------------------------------------------------------------------------
def prose_lines(page: str) -> list[str]:
    """The sentences of a tldr page: its description and the text before each example."""
    lines = []
    for raw in page.splitlines():
        if raw.startswith(("> ", "- ")):
            text = _MARKUP.sub("", raw[2:]).strip().rstrip(":\uff1a").strip()  # and a full-width colon
            if text and "http" not in raw and not text.lower().startswith(("more information", "weitere informationen", "更多信息")):
                lines.append(text)
    return lines


def known_lines(data: Path, pages: int, seed: int) -> dict[str, list[str]]:
    """For each language, enough prose lines for ``pages`` pages, from the tldr pages of the
    same commands (alias pages, which are one template sentence, left out)."""
    roots = {lang: data / "tldr" / folder / "common" for lang, (folder, _pack) in LANGUAGES.items()}
    names = sorted(set.intersection(*({p.name for p in root.glob("*.md")} for root in roots.values())))
    names = [n for n in names if "alias of" not in (roots["en"] / n).read_text("utf-8")]
    random.Random(seed).shuffle(names)
    texts: dict[str, list[str]] = {}
    for lang, root in roots.items():
        lines: list[str] = []
        for name in names:
            lines.extend(prose_lines((root / name).read_text("utf-8")))
            if len(lines) >= pages * LINES_PER_PAGE:
                break
        texts[lang] = lines
    return texts


# -- scanned pages --------------------------------------------------------------------------
def find_font(query: str) -> tuple[str, int] | None:
    """The font file (and face in a collection) fontconfig matches for ``query`` that covers
    its language, or None."""
    if shutil.which("fc-match") is None:
        return None
    found = subprocess.run(
        ["fc-match", "-s", "-f", "%{file}\\t%{index}\\t%{lang}\\n", query], capture_output=True, text=True, check=False
    ).stdout
    lang = query.split("lang=", 1)[1]
    for line in found.splitlines():
        path, index, langs = [*line.split("\t"), "", ""][:3]
        if lang in langs.split("|") and path.endswith((".ttf", ".otf", ".ttc")):
            return path, int(index or 0)
    return None


def wrap(lines: Sequence[str], font: Any, width: int) -> list[str]:
    """Break lines to fit ``width`` pixels: Latin text at spaces, Chinese between characters."""
    out: list[str] = []
    for line in lines:
        latin = all(ord(ch) < 0x2E80 for ch in line)
        pieces, joiner = (line.split(), " ") if latin else (list(line), "")
        current = ""
        for piece in pieces:
            trial = f"{current}{joiner}{piece}" if current else piece
            if current and font.getlength(trial) > width:
                out.append(current)
                current = piece
            else:
                current = trial
        if current:
            out.append(current)
    return out


def scanned_pages(
    lines: Sequence[str], font_file: tuple[str, int], pages: int, wear: Wear, rng: random.Random
) -> list[tuple[Any, str]]:
    """``pages`` letter pages with ``lines`` printed on them (wrapped, 11 pt) and ``wear``,
    each with the text exactly as printed."""
    from PIL import ImageFont

    font = ImageFont.truetype(font_file[0], round(FONT_PT * DPI / 72), index=font_file[1])
    printed = wrap(lines, font, int(6.5 * DPI))
    return [
        (scanned_page(printed[i * LINES_PER_PAGE:(i + 1) * LINES_PER_PAGE], font, wear, rng),
         "\n".join(printed[i * LINES_PER_PAGE:(i + 1) * LINES_PER_PAGE]))
        for i in range(pages)
    ]  # fmt: skip


def scanned_page(printed: Sequence[str], font: Any, wear: Wear, rng: random.Random) -> Any:
    """One page: the lines printed at 300 dpi from the top margin down, then skewed, blurred,
    scanned at ``wear.dpi`` onto grey paper with sensor noise and specks."""
    from PIL import Image, ImageDraw, ImageFilter

    page = Image.new("L", (int(8.5 * DPI), int(11 * DPI)), 255)
    draw = ImageDraw.Draw(page)
    y = DPI
    for line in printed:
        draw.text((DPI, y), line, fill=wear.ink, font=font)
        y += int(font.size * 1.6)
    page = page.rotate(rng.uniform(-wear.rotation, wear.rotation), resample=Image.Resampling.BICUBIC, fillcolor=255)
    page = page.filter(ImageFilter.GaussianBlur(wear.blur))
    if wear.dpi != DPI:
        page = page.resize((round(page.width * wear.dpi / DPI), round(page.height * wear.dpi / DPI)), Image.Resampling.BOX)
    noise = np.random.default_rng(rng.randrange(2**32))
    pixels = np.asarray(page, dtype=np.float32) * rng.uniform(*wear.paper)
    pixels += noise.normal(0, wear.noise, pixels.shape)
    specks = noise.random(pixels.shape) < wear.specks
    pixels[specks] = noise.uniform(0, 120, int(specks.sum()))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def write_pdf(path: Path, images: Sequence[Any], wear: Wear) -> None:
    """The images as the pages of a letter-size PDF with no text layer."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="letter")
    for image in images:
        pdf.add_page()
        buffer = io.BytesIO()
        if wear.jpeg is None:
            image.save(buffer, format="PNG", dpi=(wear.dpi, wear.dpi))
        else:
            image.save(buffer, format="JPEG", quality=wear.jpeg, dpi=(wear.dpi, wear.dpi))
        buffer.seek(0)
        pdf.image(buffer, x=0, y=0, w=612, h=792)
    pdf.output(str(path))


def render_pdf(path: Path) -> list[Any]:
    """Every page of a PDF as a 300-dpi grayscale PIL image, as ``index`` renders scans."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        images = []
        for page in document:
            bitmap = page.render(scale=DPI / 72, grayscale=True)
            images.append(bitmap.to_pil().copy())
            bitmap.close()
            page.close()
        return images
    finally:
        document.close()


# -- accuracy and time ----------------------------------------------------------------------
def normalise(text: str, language: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    if language == "zh":
        return re.sub(r"\s+", "", text)
    return re.sub(r"\s+", " ", text).strip()


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions all cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cer(read: str, known: str, language: str) -> float:
    truth = normalise(known, language)
    return edit_distance(normalise(read, language), truth) / max(1, len(truth))


def _cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def measure(scan: str, language: str, engine: str, read: Callable[[Any], str], pages: Sequence[tuple[Any, str]]) -> Row:
    errors, wall, cpu = [], 0.0, 0.0
    for image, known in pages:
        started, cpu_started = time.perf_counter(), _cpu()
        text = read(image)
        wall += time.perf_counter() - started
        cpu += _cpu() - cpu_started
        errors.append(cer(text, known, language))
    n = len(pages)
    return Row(scan, language, engine, n, round(sum(errors) / n, 4), round(wall / n, 2), round(cpu / n, 2))


def with_ratios(rows: list[Row]) -> list[Row]:
    """Each row with its ratios to Tesseract with the page's own pack on the same scans."""
    own = {(r.scan, r.language): r for r in rows if r.engine == f"Tesseract {LANGUAGES[r.language][1]}"}
    out = []
    for row in rows:
        ref = own.get((row.scan, row.language))
        if ref is None:
            out.append(row)
            continue
        out.append(Row(
            row.scan, row.language, row.engine, row.pages, row.cer, row.wall_per_page, row.cpu_per_page,
            cer_ratio=round(row.cer / ref.cer, 3) if ref.cer else None,
            wall_ratio=round(row.wall_per_page / ref.wall_per_page, 2),
            cpu_ratio=round(row.cpu_per_page / ref.cpu_per_page, 2),
        ))  # fmt: skip
    return out


# -- the run --------------------------------------------------------------------------------
def make_scans(workdir: Path, pages: int, seed: int, notes: list[str]) -> dict[tuple[str, str], list[tuple[Any, str]]]:
    """(scan quality, language) → that many pages as ``index`` renders them, with their text."""
    texts = known_lines(get_shared_data(), pages, seed)
    rng = random.Random(seed)
    scans = {}
    for language, lines in texts.items():
        font = find_font(FONT_QUERIES[language])
        if font is None:
            notes.append(f"{language}: left out, no font for {FONT_QUERIES[language]} (Debian: apt-get install fonts-noto-cjk)")
            continue
        for wear in WEARS:
            printed = scanned_pages(lines, font, pages, wear, rng)
            pdf = workdir / f"scan-{wear.name}-{language}.pdf"
            write_pdf(pdf, [image for image, _text in printed], wear)
            scans[wear.name, language] = list(zip(render_pdf(pdf), [text for _image, text in printed], strict=True))
        size = sum(len(normalise(text, language)) for _image, text in scans[WEARS[0].name, language]) // pages
        notes.append(f"{language}: {Path(font[0]).name}, {size:,} characters a page")
    return scans


def run(workdir: Path, *, pages: int, seed: int) -> dict[str, Any]:
    from PIL import Image

    from vaultseek.documents.ocr import open_ocr
    from vaultseek.documents.ocr_rapid import open_rapid

    notes: list[str] = []
    scans = make_scans(workdir, pages, seed, notes)
    rapid = open_rapid("+".join(pack for _folder, pack in LANGUAGES.values()))
    load = None
    if rapid.available:
        started = time.perf_counter()
        rapid.read(Image.new("L", (64, 64), 255))  # loads the models
        load = round(time.perf_counter() - started, 2)
    else:
        notes.append(f"RapidOCR left out: {rapid.notice}")
    rows: list[Row] = []
    for (scan, language), pages_of in scans.items():
        pack = LANGUAGES[language][1]
        for languages in [pack] + (["eng+deu"] if language in ("en", "de") else []):
            tesseract = open_ocr(languages)
            if tesseract.available and tesseract.languages == languages:
                rows.append(measure(scan, language, f"Tesseract {languages}", tesseract.read, pages_of))
            elif f"Tesseract {languages}" not in " ".join(notes):
                notes.append(f"Tesseract {languages} left out: {tesseract.notice or 'not installed'}")
        if rapid.available:
            rows.append(measure(scan, language, "RapidOCR", rapid.read, pages_of))
    return {
        "pages_per_language": pages,
        "rapidocr_load_seconds": load,
        "tesseract": _tesseract_version(),
        "rows": [asdict(r) for r in with_ratios(rows)],
        "notes": notes,
    }


def _tesseract_version() -> str | None:
    if shutil.which("tesseract") is None:
        return None
    out = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else None


def table(result: dict[str, Any]) -> str:
    def ratio(value: float | None) -> str:
        if value is None:
            return "—"
        return "<0.01×" if value < 0.01 else f"{value:.2f}×"

    lines = [
        "| scan | language | engine | pages | CER | vs Tesseract | CPU s/page | vs Tesseract | s/page (wall) | vs Tesseract |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['scan']} | {row['language']} | {row['engine']} | {row['pages']} | {row['cer']:.2%} | {ratio(row['cer_ratio'])} "
            f"| {row['cpu_per_page']:.2f} | {ratio(row['cpu_ratio'])} | {row['wall_per_page']:.2f} | {ratio(row['wall_ratio'])} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ocr", description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=3, help="scanned pages per language (default 3)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="where the PDFs are written (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    with tempfile.TemporaryDirectory(prefix="vaultseek-ocr-bench-") as scratch:
        workdir = args.workdir or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        result = run(workdir, pages=args.pages, seed=args.seed)
    print(table(result))
    print()
    print(f"RapidOCR model load: {result['rapidocr_load_seconds']} s; {result['tesseract'] or 'Tesseract not installed'}")
    for note in result["notes"]:
        print(f"- {note}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
