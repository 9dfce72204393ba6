"""OCR's cost per document is bounded: blank pages are recognised without Tesseract, and at
most ``ocr_max_pages_per_document`` pages of one PDF are OCRed, the rest counted where
``vaultseek status`` shows them. Real PDFs (fpdf2 and Pillow), real Tesseract, real index."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support import docgen

from conftest import run_cli
from test_documents import SCAN_LINES, needs_tesseract
from vaultseek import open_index

PAGES = [
    ["Minutes of the lighthouse committee", "The brass lantern was polished by Mr Quillfeather."],
    ["Second page of the minutes", "The foghorn compressor needs a new gasket."],
    ["Third page of the minutes", "Volunteers repainted the gallery railing in ochre."],
]


def test_blank_pages_are_not_ocred(vault: Path, tmp_path: Path) -> None:
    needs_tesseract()
    docgen.text_pdf(vault / "blank.pdf", [""] * 40)  # 40 empty pages: no text layer, nothing drawn
    docgen.scanned_pdf(vault / "scan.pdf", [[], SCAN_LINES, []])  # blank scans around a real one
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.pages_extracted == 43 and report.pages_ocred == 1
        assert index.search("Ramsbottom", mode="bm25").results[0].location.page == 2
        status = index.status()
        assert status.ocr_pages == 1 and status.ocr_pending == 0 and status.ocr_over_limit == 0


def test_pages_past_the_limit_are_counted_and_ocred_once_it_is_raised(vault: Path) -> None:
    needs_tesseract()
    docgen.scanned_pdf(vault / "minutes.pdf", PAGES)
    (vault / ".vaultseek.toml").write_text("ocr_max_pages_per_document = 1\n")
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.pages_ocred == 1
        assert "minutes.pdf: 2 of 3 pages not OCRed (limit: ocr_max_pages_per_document = 1)" in report.notices
        assert index.search("Quillfeather", mode="bm25").results[0].path == "minutes.pdf"
        assert index.search("ochre", mode="bm25").results == ()
        status = index.status()
        assert (status.ocr_pages, status.ocr_over_limit, status.ocr_max_pages) == (1, 2, 1)
        assert index.sync().unchanged == 1  # the same limit: nothing is read again
    shown = run_cli("status", "--vault", str(vault))
    assert "OCR:          1 pages OCRed, 2 not OCRed (limit: ocr_max_pages_per_document = 1)" in shown.stdout

    (vault / ".vaultseek.toml").write_text("ocr_max_pages_per_document = 5\n")
    with open_index(vault) as index:
        report = index.sync()  # the file did not change, but the limit now covers its pages
        assert report.pages_ocred == 3 and not report.notices
        assert index.search("ochre", mode="bm25").results[0].path == "minutes.pdf"
        status = index.status()
        assert (status.ocr_pages, status.ocr_over_limit) == (3, 0)
        assert index.sync().unchanged == 1


def test_the_limit_counts_pages_a_missing_ocr_left_waiting(vault: Path, tmp_path: Path) -> None:
    """Without Tesseract's language, pages wait for OCR; still at most the limit of them."""
    needs_tesseract()
    shutil.copy(docgen.scanned_pdf(tmp_path / "m.pdf", PAGES), vault / "minutes.pdf")
    (vault / ".vaultseek.toml").write_text('ocr_max_pages_per_document = 2\nocr_languages = "klingon"\n')
    with open_index(vault, create=True) as index:
        index.sync()
        status = index.status()
        assert (status.ocr_pages, status.ocr_pending, status.ocr_over_limit) == (0, 2, 1)
