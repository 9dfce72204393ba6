"""Images (screenshots, scans, photos of pages): the text on them, read by OCR.

Indexed only with ``ocr_images`` on (the configuration leaves images out of the walk
otherwise). The image is opened with Pillow, which reads only its header first, so one that
claims more than :data:`MAX_PIXELS` pixels is refused before anything is decoded (a
"decompression bomb": a 40 KB PNG can claim 30,000 × 30,000). It is then flattened onto white
(a screenshot's transparent background would otherwise turn black, under black text), made
grey (16-bit grey scaled, not clipped), turned the way up the camera recorded, and shrunk to
at most :data:`OCR_PIXELS` pixels — a 300-dpi letter page, what PDF pages are OCRed at — which
bounds the time one image can take. A tall image (a full-page screenshot) is read in strips
about as tall as a page (:func:`strips`). The OCR engine is the one scanned PDF pages use
(:func:`.ocr.open_engine`).

An image that is too small to hold text (under :data:`MIN_SIDE` pixels on a side) or is one
flat tone is not OCRed, and an image on which OCR finds no text yields no chunk: the file is
indexed (so ``![[diagram.png]]`` links resolve) with nothing to find in it. When no OCR engine
can run, the image is counted as waiting for OCR, as a scanned page is, and read once one can.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from typing import Any

from PIL import Image, UnidentifiedImageError

from .extraction import MB, DocumentError, ExtractContext, Extracted, Segment
from .limits import megabytes

MAX_PIXELS = 50_000_000
"""A 48-megapixel phone photo is read; larger images are refused before they are decoded
(decoded, 50 million pixels take 200 MB as RGBA; the image is shrunk before anything else)."""
MAX_IMAGE_BYTES = 50 * MB
OCR_PIXELS = 8_500_000
"""Larger images are shrunk to this many pixels before OCR (the size of a 300-dpi letter page)."""
STRIP_ASPECT = 1.5
"""A taller image is OCRed in strips of at most this height-to-width ratio (:func:`strips`)."""
MIN_SIDE = 16
BLANK_RANGE = 10
"""An image whose grey levels all lie within this many of each other is blank (as for PDF
pages, :data:`.pdf.BLANK_RANGE`)."""


_ORIENTATION = 0x0112
"""The EXIF tag a camera records which way up it was held in."""
_TURNS = {
    2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}  # fmt: skip


def read(data: bytes, context: ExtractContext) -> Extracted:
    if len(data) > MAX_IMAGE_BYTES:
        raise DocumentError(f"image too large to read ({megabytes(len(data))}, over {megabytes(MAX_IMAGE_BYTES)})")
    if not context.ocr.enabled:
        return Extracted(segments=[], pages=1)
    try:
        with warnings.catch_warnings():  # Pillow warns of a large image; it is refused below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(data))
        with opened:
            width, height = opened.size
            if width * height > MAX_PIXELS:
                raise DocumentError(
                    f"image too large to read ({width:,} × {height:,} pixels, over "
                    f"{MAX_PIXELS // 1_000_000} million)"
                )
            page = _prepared(opened)
    except Image.DecompressionBombError as exc:  # Pillow's own limit, far above ours
        raise DocumentError(
            f"image too large to read (over {MAX_PIXELS // 1_000_000} million pixels: a decompression bomb)"
        ) from exc
    except (UnidentifiedImageError, SyntaxError) as exc:
        raise DocumentError("not a readable image (unknown format or damaged header)") from exc
    except (OSError, ValueError, EOFError) as exc:
        raise DocumentError(f"corrupt image ({exc})") from exc
    result = Extracted(segments=[], pages=1)
    if page is None:
        return result
    from .ocr import ocr_error_types, open_engine  # the OCR libraries: only for an image with text

    engine = open_engine(context.ocr.engine, context.ocr.languages)
    if engine.notice:
        result.notices.append(engine.notice)
    if not engine.available:
        result.ocr_pending = 1
        return result
    context.progress("ocr", 1, 1)
    try:
        texts = [engine.read(strip) for strip in strips(page)]
    except ocr_error_types() as exc:
        raise DocumentError(f"OCR failed ({exc})") from exc
    result.pages_ocred = result.ocr_pages = 1
    text = "\n".join(t for t in texts if t.strip())
    if text:
        result.segments.append(Segment(text))
    return result


def strips(page: Any) -> Iterator[Any]:
    """``page`` in strips :data:`STRIP_ASPECT` times as tall as wide (:func:`strip_bounds`),
    each padded to that height, blank strips left out; a page no taller than that is one strip.
    OCR finds text lines on an image scaled to a fixed longest side (RapidOCR: 960 pixels),
    which would shrink the lines of a full-page screenshot below a pixel."""
    width, height = page.size
    tall = max(MIN_SIDE, int(width * STRIP_ASPECT))
    if height <= tall:
        yield page
        return
    for top, bottom in strip_bounds(page):
        strip = page.crop((0, top, width, bottom))
        low, high = strip.getextrema()
        if high - low > BLANK_RANGE:
            # Every strip the same size, padded with the quiet row's tone: the OCR engine's
            # buffers are sized by the image and reused only for one size.
            padded = Image.new("L", (width, tall), page.getpixel((0, min(bottom, height - 1))))
            padded.paste(strip, (0, 0))
            yield padded


def strip_bounds(page: Any) -> list[tuple[int, int]]:
    """The rows ``(top, bottom)`` of each strip of ``page``: at most :data:`STRIP_ASPECT` times
    its width tall, each cut at the quietest row of its last quarter (a gap between lines of
    text)."""
    width, height = page.size
    tall = max(MIN_SIDE, int(width * STRIP_ASPECT))
    bounds: list[tuple[int, int]] = []
    top = 0
    while top < height:
        bottom = height if height - top <= tall else _quietest_row(page, top + tall * 3 // 4, top + tall)
        bounds.append((top, bottom))
        top = bottom
    return bounds


def _quietest_row(page: Any, start: int, end: int) -> int:
    """The row in ``[start, end)`` whose grey levels vary least (by each row's mean and mean
    square, from Pillow's box averaging)."""
    band = page.crop((0, start, page.width, end))
    means = band.resize((1, band.height), Image.Resampling.BOX).tobytes()  # one byte a row
    squares = band.point(lambda v: v * v // 255).resize((1, band.height), Image.Resampling.BOX).tobytes()
    spread = [square * 255 - mean * mean for mean, square in zip(means, squares, strict=True)]
    return start + min(range(len(spread)), key=spread.__getitem__)


def _prepared(image: Any) -> Any:
    """The image as OCR reads it — grey, on white, at most :data:`OCR_PIXELS` — or None when
    nothing on it can be text (too small, or one flat tone)."""
    width, height = image.size
    if min(width, height) < MIN_SIDE:
        return None
    scale = min(1.0, (OCR_PIXELS / (width * height)) ** 0.5)
    if image.format == "JPEG" and scale < 1:
        image.draft("L", (int(width * scale), int(height * scale)))  # decoded smaller, cheaper
    image.seek(0)  # an animation's first frame
    image.load()
    original = image
    turn = _TURNS.get(image.getexif().get(_ORIENTATION, 1))  # a phone photo the right way up
    alpha = None
    if image.mode.startswith("I"):  # 16- or 32-bit grey: to 8 bits, not clipped to white
        grey = image.convert("I").point(lambda value: value * (1 / 256)).convert("L")
    else:
        if "A" in image.getbands():
            alpha = image.getchannel("A")
        elif image.mode == "P" and "transparency" in image.info:
            alpha = image.convert("RGBA").getchannel("A")
        grey = image.convert("L")  # one byte a pixel; LA and RGBA take four
    if grey is not original:
        original.close()  # the decoded image is freed at once
    if alpha is not None:  # onto white: a transparent background would turn black, like the text
        flat = Image.new("L", grey.size, 255)
        flat.paste(grey, mask=alpha)
        grey = flat
    if grey.width * grey.height > OCR_PIXELS:
        grey.thumbnail((max(1, int(width * scale)), max(1, int(height * scale))))
    if turn is not None:
        grey = grey.transpose(turn)
    low, high = grey.getextrema()
    return None if high - low <= BLANK_RANGE else grey
