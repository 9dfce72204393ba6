"""PDF: text per page from pypdfium2 (the one owner of that library), OCR for pages without.

pypdfium2 (Apache-2.0/BSD) both extracts the text layer and renders pages for OCR, without
PyMuPDF's AGPL. A page whose text layer has under :data:`OCR_BELOW_CHARS` characters is
rendered at 300 dpi in grayscale and read by Tesseract (:mod:`.ocr`). Each OCRed page is
checkpointed at once through the context's page log, so an interrupted run resumes at the next
page; pages with a text layer are simply read again (milliseconds each).
"""

from __future__ import annotations

import math

import pypdfium2 as pdfium

from ..records import Location
from .extraction import DocumentError, ExtractContext, Extracted, ExtractionStopped, Segment

OCR_BELOW_CHARS = 50
OCR_DPI = 300
MAX_RENDER_PIXELS = 40_000_000
"""A poster-sized page is rendered at a lower resolution rather than at 300 dpi (~160 MB)."""


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
        total = result.pages = len(document)
        resumed = context.pages.done()
        engine = None
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
                    elif context.ocr.enabled:
                        if engine is None:
                            engine = _open_engine(context, result)
                        if engine is None:
                            result.ocr_pending += 1
                        else:
                            context.progress("ocr", number, total)
                            text = _ocr_page(page, engine, context, number, result, fallback=text)
            finally:
                page.close()
            result.segments.append(Segment(text, Location(page=number)))
    finally:
        document.close()
    return result


def _text_layer(page: pdfium.PdfPage) -> str:
    textpage = page.get_textpage()
    try:
        return str(textpage.get_text_bounded())
    finally:
        textpage.close()


def _open_engine(context: ExtractContext, result: Extracted):  # type: ignore[no-untyped-def]
    from .ocr import open_ocr

    engine = open_ocr(context.ocr.languages)
    if engine.notice:
        result.notices.append(engine.notice)
    return engine if engine.available else None


def _ocr_page(page: pdfium.PdfPage, engine, context: ExtractContext, number: int,  # type: ignore[no-untyped-def]
              result: Extracted, *, fallback: str) -> str:
    from .ocr import ocr_error_types

    width, height = page.get_size()  # points
    scale = OCR_DPI / 72
    if width * height * scale * scale > MAX_RENDER_PIXELS:
        scale = math.sqrt(MAX_RENDER_PIXELS / (width * height))
    bitmap = page.render(scale=scale, grayscale=True)
    try:
        image = bitmap.to_pil()
        try:
            text = engine.read(image)
        except ocr_error_types() as exc:
            result.notices.append(f"OCR failed on page {number} of {context.path}: {exc}")
            return fallback
    finally:
        bitmap.close()
    result.pages_ocred += 1
    result.ocr_pages += 1
    return context.pages.save(number, text)
