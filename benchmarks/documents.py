"""Documents benchmark: text-PDF throughput, OCR seconds per page and per image, unchanged re-runs.

    python -m benchmarks.documents [--workdir DIR] [--json FILE] [--only formats]

Builds, in the workdir, real documents with the same libraries people's come from: text PDFs
with many pages, a PDF of image-only 300-dpi pages, 1,000 small mixed documents (PDF, DOCX,
XLSX, CSV, HTML, TXT, JSON) and, as the baseline for re-runs, 1,000 markdown notes. Each
figure is measured with its baseline in the same run:

* text PDFs: pages per second extracted *and* indexed (chunked, embedded, written) against
  pypdfium2's text extraction alone over the same files;
* OCR: seconds per image-only page through the whole pipeline, against Tesseract alone on the
  same rendered page;
* re-run over an unchanged folder of 1,000 documents against the same over 1,000 notes, and a
  re-run after touching every document (stat changed, content not: hashed, never re-extracted);
* images (``ocr_images``): seconds of wall and CPU time per screenshot-like image through the
  whole pipeline with each OCR engine, against that engine alone on the same images;
* the peak memory of reading a transparent PNG just inside the pixel limit, in a fresh process;
* canvases, EPUBs and ODTs: a first index of 100 of each against 300 notes of the same text.

``--only formats`` measures just the last two.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support import docgen

from vaultseek import open_index

WORDS = (
    "hangar zeppelin beam mast mooring inspection crew schedule budget invoice turbine bearing "
    "filter valve pressure sensor report quarterly review harbour cargo ledger crate contract "
    "supplier delivery warranty engine propeller rudder ballast gas cell envelope fabric"
).split()


def _prose(rng: random.Random, words: int) -> str:
    sentences = []
    while words > 0:
        n = rng.randint(8, 16)
        sentences.append(" ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + ".")
        words -= n
    return " ".join(sentences)


def build(workdir: Path, *, text_pdfs: int, pages_per_pdf: int, scan_pages: int, mixed: int) -> dict[str, Path]:
    rng = random.Random(7)
    folders = {name: workdir / name for name in ("textpdf", "scans", "mixed", "notes")}
    for folder in folders.values():
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    for i in range(text_pdfs):
        docgen.text_pdf(folders["textpdf"] / f"manual-{i:02d}.pdf", [_prose(rng, 350) for _ in range(pages_per_pdf)])
    lines = [[f"Scanned maintenance sheet {p}", *(_prose(rng, 9) for _ in range(12))] for p in range(scan_pages)]
    docgen.scanned_pdf(folders["scans"] / "scanned.pdf", lines)
    for i in range(mixed):
        target = folders["mixed"] / f"d{i // 100:02d}"
        target.mkdir(exist_ok=True)
        kind = i % 7
        name = f"doc-{i:04d}"
        if kind == 0:
            docgen.text_pdf(target / f"{name}.pdf", [_prose(rng, 120)])
        elif kind == 1:
            docgen.docx_file(target / f"{name}.docx", [("h1", f"Memo {i}"), ("p", _prose(rng, 80))])
        elif kind == 2:
            docgen.xlsx_file(target / f"{name}.xlsx", {"Costs": [["item", "cost"], *([rng.choice(WORDS), j] for j in range(30))]})
        elif kind == 3:
            docgen.csv_file(target / f"{name}.csv", [["item", "cost"], *([rng.choice(WORDS), j] for j in range(30))])
        elif kind == 4:
            (target / f"{name}.html").write_text(
                f"<html><head><title>Page {i}</title></head><body><nav>Home | About</nav>"
                f"<article><p>{_prose(rng, 120)}</p></article><footer>© ACME</footer></body></html>"
            )
        elif kind == 5:
            (target / f"{name}.txt").write_text(_prose(rng, 150))
        else:
            (target / f"{name}.json").write_text(json.dumps({"id": i, "tags": rng.sample(WORDS, 3), "note": _prose(rng, 30)}))
    for i in range(mixed):
        target = folders["notes"] / f"n{i // 100:02d}"
        target.mkdir(parents=True, exist_ok=True)
        (target / f"note-{i:04d}.md").write_text(f"# Note {i}\n\n## Part\n\n{_prose(rng, 120)}\n")
    return folders


def _index(folder: Path, db: Path) -> Any:
    with open_index(folder, db=db, create=True) as index:
        return index.sync(remember=False)


def _timed(folder: Path, db: Path) -> tuple[float, Any]:
    started = time.perf_counter()
    report = _index(folder, db)
    return time.perf_counter() - started, report


def run(workdir: Path, *, text_pdfs: int = 10, pages_per_pdf: int = 50, scan_pages: int = 5, mixed: int = 1000) -> dict[str, Any]:
    import pypdfium2 as pdfium

    from vaultseek.documents.ocr import open_ocr

    folders = build(workdir, text_pdfs=text_pdfs, pages_per_pdf=pages_per_pdf, scan_pages=scan_pages, mixed=mixed)
    dbs = workdir / "dbs"
    if dbs.exists():
        shutil.rmtree(dbs)
    dbs.mkdir()
    out: dict[str, Any] = {}

    # Text PDFs: the whole pipeline against pypdfium2's extraction alone.
    pages = text_pdfs * pages_per_pdf
    started = time.perf_counter()
    for pdf in sorted(folders["textpdf"].glob("*.pdf")):
        document = pdfium.PdfDocument(str(pdf))
        for page in document:
            page.get_textpage().get_text_bounded()
        document.close()
    bare = time.perf_counter() - started
    _index(folders["notes"], dbs / "warm.db")  # load the model and imports once, outside the timings
    seconds, report = _timed(folders["textpdf"], dbs / "textpdf.db")
    out["text_pdf"] = {
        "pages": pages, "chunks": report.chunks_written, "seconds": round(seconds, 2),
        "pages_per_second": round(pages / seconds, 1),
        "baseline_pypdfium2_pages_per_second": round(pages / bare, 1),
    }  # fmt: skip

    # OCR: seconds per image-only page, against Tesseract alone on one rendered page.
    seconds, report = _timed(folders["scans"], dbs / "scans.db")
    document = pdfium.PdfDocument(str(folders["scans"] / "scanned.pdf"))
    image = document[0].render(scale=300 / 72, grayscale=True).to_pil()
    engine = open_ocr("eng+deu")
    started = time.perf_counter()
    engine.read(image)
    alone = time.perf_counter() - started
    document.close()
    out["ocr"] = {
        "pages": report.pages_ocred, "seconds": round(seconds, 2),
        "seconds_per_page": round(seconds / max(1, report.pages_ocred), 3),
        "baseline_tesseract_alone_seconds_per_page": round(alone, 3),
        "languages": engine.languages,
    }  # fmt: skip

    # Unchanged re-runs: 1,000 documents against 1,000 notes; then every document touched.
    first, report = _timed(folders["mixed"], dbs / "mixed.db")
    again, unchanged = _timed(folders["mixed"], dbs / "mixed.db")
    _index(folders["notes"], dbs / "notes.db")
    notes_again, _r = _timed(folders["notes"], dbs / "notes.db")
    now = time.time()
    for path in folders["mixed"].rglob("*"):
        if path.is_file():
            os.utime(path, (now + 5, now + 5))
    touched_seconds, touched = _timed(folders["mixed"], dbs / "mixed.db")
    out["mixed"] = {
        "documents": report.scanned, "first_index_seconds": round(first, 2),
        "unchanged_rerun_seconds": round(again, 3), "unchanged": unchanged.unchanged,
        "baseline_notes_unchanged_rerun_seconds": round(notes_again, 3),
        "touched_rerun_seconds": round(touched_seconds, 3), "touched": touched.touched,
        "re_extracted_after_touch": touched.documents_extracted,
    }  # fmt: skip
    return out


SCREENSHOTS = (("small", (1280, 720), 12), ("full HD", (1920, 1080), 26), ("phone", (1170, 2532), 60))
"""(name, size, lines of 20-pixel text): typical screenshots."""


def _cpu() -> float:
    """CPU seconds of this process and its finished children (Tesseract runs as a child)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_formats(workdir: Path, *, per_size: int = 2, books: int = 100) -> dict[str, Any]:
    """OCR cost per image with each engine, and a first index of canvases, EPUBs and ODTs."""
    from PIL import Image

    from vaultseek.documents.ocr import open_engine

    rng = random.Random(11)
    out: dict[str, Any] = {"images": {}}
    shots = workdir / "images"
    if shots.exists():
        shutil.rmtree(shots)
    shots.mkdir(parents=True)
    for name, size, lines in SCREENSHOTS:
        for i in range(per_size):
            docgen.text_image(shots / f"{name.replace(' ', '-')}-{i}.png", [_prose(rng, 7)[:90] for _ in range(lines)], size=size)
    images = sorted(shots.glob("*.png"))
    for engine_name in ("rapidocr", "tesseract"):
        engine = open_engine(engine_name, "eng+deu")
        if not engine.available:
            out["images"][engine_name] = {"unavailable": engine.notice}
            continue
        engine.read(Image.new("L", (200, 60), 255))  # load the models outside the timings
        started, cpu = time.perf_counter(), _cpu()
        for image in images:
            engine.read(Image.open(image).convert("L"))
        alone_wall, alone_cpu = time.perf_counter() - started, _cpu() - cpu
        (shots / ".vaultseek.toml").write_text(f'ocr_images = true\nocr_engine = "{engine_name}"\n')
        db = workdir / f"images-{engine_name}.db"
        db.unlink(missing_ok=True)
        started, cpu = time.perf_counter(), _cpu()
        report = _index(shots, db)
        wall, used = time.perf_counter() - started, _cpu() - cpu
        out["images"][engine_name] = {
            "images": report.pages_ocred, "seconds_per_image": round(wall / len(images), 2),
            "cpu_seconds_per_image": round(used / len(images), 2),
            "baseline_engine_alone_seconds_per_image": round(alone_wall / len(images), 2),
            "baseline_engine_alone_cpu_seconds_per_image": round(alone_cpu / len(images), 2),
        }  # fmt: skip

    out["image_at_limit"] = _image_at_limit(workdir)

    folder, notes = workdir / "books", workdir / "books-notes"
    for target in (folder, notes):
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
    for i in range(books):
        sections = [(f"Part {j}", _prose(rng, 120)) for j in range(4)]
        docgen.canvas_file(folder / f"board-{i:03d}.canvas", [{"id": str(j), "type": "text", "text": f"# {h}\n{t}"}
                                                               for j, (h, t) in enumerate(sections)])  # fmt: skip
        docgen.epub_file(folder / f"book-{i:03d}.epub", f"Book {i}", [(h, f"<h1>{h}</h1><p>{t}</p>") for h, t in sections])
        docgen.odt_file(folder / f"memo-{i:03d}.odt", [item for h, t in sections for item in (("h1", h), ("p", t))])
        for kind in ("board", "book", "memo"):
            (notes / f"{kind}-{i:03d}.md").write_text("".join(f"# {h}\n\n{t}\n\n" for h, t in sections))
    for db in (workdir / "books.db", workdir / "books-notes.db"):
        db.unlink(missing_ok=True)  # a first index, also when --workdir is reused
    seconds, report = _timed(folder, workdir / "books.db")
    notes_seconds, _r = _timed(notes, workdir / "books-notes.db")
    out["books"] = {
        "files": report.scanned, "chunks": report.chunks_written, "skipped": len(report.skipped),
        "first_index_seconds": round(seconds, 2), "baseline_notes_first_index_seconds": round(notes_seconds, 2),
    }  # fmt: skip
    return out


_PEAK = """
import sys, time
from pathlib import Path
from vaultseek.documents import ExtractContext, OcrSettings, extract
def peak():  # VmHWM: this process's own peak (ru_maxrss would carry the parent's over the fork)
    line = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024
path = Path(sys.argv[1])
data = path.read_bytes()
before = peak()
started = time.perf_counter()
found = extract(path.name, data, ExtractContext(path=path.name, ocr=OcrSettings(engine="tesseract", languages="eng")))
print(time.perf_counter() - started, before, peak(), sum(len(s.text) for s in found.segments))
"""


def _image_at_limit(workdir: Path) -> dict[str, Any]:
    """Peak memory of reading a transparent 7,000 × 7,000 PNG (49 million pixels, just under the
    limit) in a fresh process, against the same process before it reads anything."""
    import subprocess
    import sys

    from PIL import Image, ImageDraw

    path = workdir / "poster.png"
    poster = Image.new("RGBA", (7000, 7000), (0, 0, 0, 0))
    ImageDraw.Draw(poster).text((300, 300), "Poster text at the pixel limit", fill=(0, 0, 0, 255), font_size=160)
    poster.save(path)
    del poster
    output = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, check=True)
    seconds, before, peak, chars = output.stdout.split()
    return {"pixels": 49_000_000, "file_mb": round(path.stat().st_size / 2**20, 2), "seconds": round(float(seconds), 2),
            "baseline_process_mb": round(float(before)), "peak_mb": round(float(peak)), "chars": int(chars)}  # fmt: skip


def _format_rows(figures: dict[str, Any]) -> list[tuple[str, str, str]]:
    rows = []
    for engine, found in figures["images"].items():
        if "unavailable" in found:
            rows.append((f"image OCR with {engine}", "unavailable", ""))
            continue
        rows.append((f"image OCR with {engine}, whole pipeline ({found['images']} screenshots)",
                     f"{found['seconds_per_image']} s/image ({found['cpu_seconds_per_image']} s CPU)", ""))  # fmt: skip
        rows.append((f"baseline: {engine} alone on the same images",
                     (f"{found['baseline_engine_alone_seconds_per_image']} s/image "
                      f"({found['baseline_engine_alone_cpu_seconds_per_image']} s CPU)"), ""))  # fmt: skip
    limit = figures["image_at_limit"]
    rows.append((f"transparent 7,000 × 7,000 PNG ({limit['file_mb']} MB), read and OCRed by Tesseract",
                 f"{limit['peak_mb']} MB peak, {limit['seconds']} s", "≤ 500 MB"))  # fmt: skip
    rows.append(("baseline: the same process before reading it", f"{limit['baseline_process_mb']} MB", ""))
    b = figures["books"]
    rows.append((f"first index of {b['files']} canvases, EPUBs and ODTs ({b['chunks']} chunks)", f"{b['first_index_seconds']} s", ""))
    rows.append((f"baseline: first index of {b['files']} notes of the same text", f"{b['baseline_notes_first_index_seconds']} s", ""))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.documents", description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where to build the documents (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--mixed", type=int, default=1000, help="how many small mixed documents")
    parser.add_argument("--only", choices=["formats"], help="measure only images, canvases, EPUBs and ODTs")
    args = parser.parse_args(argv)
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp()  # the user's config must not shape the figures
    os.environ.setdefault("VAULTSEEK_DEEP_TIER", "false")  # no background worker in the timings
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir or Path(scratch)
        if args.only == "formats":
            formats = run_formats(workdir)
            print("| figure | measured | target |\n|---|---:|---|")
            for row in _format_rows(formats):
                print(f"| {row[0]} | {row[1]} | {row[2]} |")
            if args.json:
                args.json.write_text(json.dumps(formats, indent=2))
            return 0
        figures = run(workdir, mixed=args.mixed)
        figures["formats"] = run_formats(workdir)
    t, o, m = figures["text_pdf"], figures["ocr"], figures["mixed"]
    rows = [
        ("text PDFs extracted + indexed", f"{t['pages_per_second']:,} pages/s ({t['pages']} pages, {t['seconds']} s)", ""),
        ("baseline: pypdfium2 text extraction alone", f"{t['baseline_pypdfium2_pages_per_second']:,} pages/s", ""),
        ("OCR, whole pipeline (300-dpi page, eng+deu)", f"{o['seconds_per_page']} s/page ({o['pages']} pages)", "≤ 1 s"),
        ("baseline: Tesseract alone on one rendered page", f"{o['baseline_tesseract_alone_seconds_per_page']} s", ""),
        (f"first index of {m['documents']:,} mixed documents", f"{m['first_index_seconds']} s", ""),
        (f"re-run, {m['documents']:,} unchanged documents", f"{m['unchanged_rerun_seconds']} s", "≤ 1 s"),
        (f"baseline: re-run, {m['documents']:,} unchanged notes", f"{m['baseline_notes_unchanged_rerun_seconds']} s", ""),
        (f"re-run after touching all {m['documents']:,} (hashed, {m['re_extracted_after_touch']} re-extracted)", f"{m['touched_rerun_seconds']} s", ""),
        *_format_rows(figures["formats"]),
    ]
    print("| figure | measured | target |\n|---|---:|---|")
    for row in rows:
        print(f"| {row[0]} | {row[1]} | {row[2]} |")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
