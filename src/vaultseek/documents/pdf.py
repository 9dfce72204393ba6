"""PDF: text per page from pypdfium2 (the one owner of that library), OCR for pages without.

pypdfium2 (Apache-2.0/BSD) both extracts the text layer and renders pages for OCR, without
PyMuPDF's AGPL. A page whose text layer has under :data:`OCR_BELOW_CHARS` characters is
rendered at 300 dpi in grayscale and read by the OCR engine :func:`.ocr.open_engine` picks
(RapidOCR or Tesseract). Each OCRed page is
checkpointed at once through the context's page log, so an interrupted run resumes at the next
page; pages with a text layer are simply read again (milliseconds each).

A page that renders as one flat tone is blank: it is seen in a ~1 ms thumbnail and never
OCRed (Tesseract spends ~0.6 s finding nothing on one). At most ``OcrSettings.max_pages``
pages of a document are OCRed (``ocr_max_pages_per_document``); the pages past it keep their
text layer and are counted in ``Extracted.ocr_over_limit``, with a notice.

Up to :data:`OCR_WORKERS` pages are OCRed at once: each Tesseract runs single-threaded
(``OMP_THREAD_LIMIT=1``), so two pages in flight use both cores of a small machine. Pages are
rendered on the calling thread (PDFium is not thread-safe); only Tesseract runs in workers,
and every checkpoint is written from the calling thread.

Pages are read until their text fills ``max_document_text_mb``; the pages after it are not
read at all. What one page costs PDFium to load is bounded by the reader child it runs in
(:mod:`.sandbox`), since nothing tells that cost before the page is loaded.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pypdfium2 as pdfium

from ..records import Location
from .extraction import (
    DocumentError,
    ExtractContext,
    Extracted,
    ExtractionStopped,
    Segment,
)
from .limits import TextBudget

if TYPE_CHECKING:  # imported with pytesseract, on the first scanned page only
    from .ocr import PageReader

OCR_BELOW_CHARS = 50
OCR_DPI = 300
MAX_RENDER_PIXELS = 40_000_000
"""A poster-sized page is rendered at a lower resolution rather than at 300 dpi (~160 MB)."""
OCR_WORKERS = max(1, min(2, os.cpu_count() or 1))
BLANK_SCALE = 0.5
"""Blank pages are recognised in a 36 dpi thumbnail (~1 ms a page)."""
BLANK_PIXELS = 1_000_000
"""A larger page's thumbnail is rendered smaller still."""
BLANK_RANGE = 10
"""A thumbnail whose grey levels all lie within this many of each other is blank. Text, even
small and light, spans far more; a scan of a blank sheet, with its specks, usually does too,
and is OCRed as before."""


def read(data: bytes, context: ExtractContext) -> Extracted:
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise DocumentError("encrypted PDF (needs a password)") from exc
        reason = str(exc).split("(PDFium:", 1)[-1].strip(" ).") or str(exc)
        raise DocumentError(f"corrupt PDF ({reason})") from exc
    result = Extracted(segments=[])
    try:
        texts = _read_pages(document, context, result)
    finally:
        document.close()
    result.segments = [Segment(text, Location(page=n)) for n, text in enumerate(texts, start=1)]
    return result


def _read_pages(document: pdfium.PdfDocument, context: ExtractContext, result: Extracted) -> list[str]:
    total = result.pages = len(document)
    resumed = context.pages.done()
    texts: list[str] = []
    engine: Any = None
    in_flight: dict[int, Future[str]] = {}
    taken = 0  # pages OCRed (or resumed from a checkpoint) against the document's budget
    budget = TextBudget(context.limits.max_text_chars)
    with ThreadPoolExecutor(max_workers=OCR_WORKERS, thread_name_prefix="ocr") as pool:
        try:
            for index in range(total):
                if context.should_stop():
                    raise ExtractionStopped
                number = index + 1
                context.progress("extract", number, total)
                page = document[index]
                try:
                    text = _text_layer(page)
                    if len(text.strip()) < OCR_BELOW_CHARS:
                        if number in resumed:
                            text = resumed[number]
                            result.pages_resumed += 1
                            result.ocr_pages += 1
                            taken += 1
                        elif context.ocr.enabled and not _blank(page):
                            if engine is None:
                                engine = _open_engine(context, result) or False
                            if taken >= context.ocr.max_pages:
                                result.ocr_over_limit += 1
                            elif not engine:
                                result.ocr_pending += 1
                                taken += 1
                            else:
                                taken += 1
                                while len(in_flight) >= OCR_WORKERS:
                                    _collect(in_flight, min(in_flight), texts, context, result)
                                context.progress("ocr", number, total)
                                in_flight[number] = pool.submit(engine.read, _render(page))
                finally:
                    page.close()
                texts.append(text)
                budget.take(text)
                if budget.spent and number < total:  # the rest would be dropped: not read
                    result.truncated = True
                    break
        finally:
            # Finished pages are checkpointed even when stopping, so no OCR is wasted.
            for number in sorted(in_flight):
                _collect(in_flight, number, texts, context, result)
    if result.ocr_over_limit:
        result.notices.append(
            f"{context.path}: {result.ocr_over_limit} of {total} pages not OCRed "
            f"(limit: ocr_max_pages_per_document = {context.ocr.max_pages})"
        )
    return texts


def _collect(in_flight: dict[int, Future[str]], number: int, texts: list[str],
             context: ExtractContext, result: Extracted) -> None:
    """Wait for one page's OCR and checkpoint it; a failed page keeps its text layer."""
    from .ocr import ocr_error_types

    future = in_flight.pop(number)
    try:
        text = future.result()
    except ocr_error_types() as exc:
        result.notices.append(f"OCR failed on page {number} of {context.path}: {exc}")
        return
    result.pages_ocred += 1
    result.ocr_pages += 1
    texts[number - 1] = context.pages.save(number, text)


def _render(page: pdfium.PdfPage) -> Any:
    """The page as a grayscale PIL image at 300 dpi (less for a poster-sized page)."""
    width, height = page.get_size()  # points
    scale = OCR_DPI / 72
    if width * height * scale * scale > MAX_RENDER_PIXELS:
        scale = math.sqrt(MAX_RENDER_PIXELS / (width * height))
    bitmap = page.render(scale=scale, grayscale=True)
    try:
        return bitmap.to_pil().copy()  # detached from the bitmap's buffer
    finally:
        bitmap.close()


def _blank(page: pdfium.PdfPage) -> bool:
    """Whether the page renders as one flat tone: nothing on it for OCR to read."""
    width, height = page.get_size()  # points
    scale = min(BLANK_SCALE, math.sqrt(BLANK_PIXELS / max(width * height, 1.0)))
    bitmap = page.render(scale=scale, grayscale=True)
    try:
        low, high = bitmap.to_pil().getextrema()
    finally:
        bitmap.close()
    return bool(high - low <= BLANK_RANGE)


def _text_layer(page: pdfium.PdfPage) -> str:
    textpage = page.get_textpage()
    try:
        return str(textpage.get_text_bounded())
    finally:
        textpage.close()


def _open_engine(context: ExtractContext, result: Extracted) -> PageReader | None:
    from .ocr import open_engine

    engine = open_engine(context.ocr.engine, context.ocr.languages)
    if engine.notice:
        result.notices.append(engine.notice)
    return engine if engine.available else None
