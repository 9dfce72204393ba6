"""Images attached to a chat message, made safe to keep and to send (the one module of the
study app that imports Pillow, which the ``documents`` extra installs).

Every image is decoded and written out again, which is what strips its metadata: EXIF
(camera, time, GPS position), XMP, IPTC, ICC profiles and comments are not copied, and
neither is anything hidden after the image data. The EXIF orientation is applied to the
pixels first, so a phone photo stays upright. Large images are scaled down to
:data:`MAX_SIDE` pixels on their long side — vision models look at far fewer — and saved as
PNG (images with transparency, drawings, screenshots) or JPEG (photos): the two formats
every vision server reads (llama.cpp's reader has no WebP).

Decoding is bounded before it starts: an image whose header gives more than
:data:`MAX_PIXELS` pixels is refused unread (Pillow holds each in at most four bytes, 16-bit
samples included); a JPEG is decoded straight at the reduced size; the image is scaled down
before anything else copies it; and at most :data:`DECODE_SLOTS` images are decoded at once
(the others wait their turn), so eight large 16-bit PNGs at once cost two decodes' memory.
"""

from __future__ import annotations

import io
import threading
import warnings
from dataclasses import dataclass

from ..errors import MissingExtraError
from .uploads import UploadError

MAX_SIDE = 2048
"""Longest side kept, in pixels."""
MAX_PIXELS = 40_000_000
"""Images with more pixels are refused before decoding (a decompression bomb guard)."""
DECODE_SLOTS = 2
"""Images decoded at once; more wait."""
_decoding = threading.BoundedSemaphore(DECODE_SLOTS)
FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp", "BMP": "image/bmp"}
"""What is accepted, by the format Pillow recognises in the bytes (never by the file name)."""


class ImageRefusedError(UploadError):
    """Not an image the app takes (unknown format, damaged, too many pixels): HTTP 415."""

    status = 415


@dataclass(frozen=True, slots=True)
class CleanImage:
    data: bytes
    media_type: str
    width: int
    height: int


def clean_image(data: bytes, *, name: str = "image") -> CleanImage:
    """``data`` decoded and re-encoded without metadata (see the module docstring); raises
    :class:`ImageRefusedError` for anything that is not a whole PNG, JPEG, GIF, WebP or BMP
    image, and :class:`MissingExtraError` when Pillow is not installed."""
    try:
        from PIL import Image, ImageOps
    except ImportError as exc:
        raise MissingExtraError.from_import(exc, "documents", feature="images in the chat") from exc
    with warnings.catch_warnings(), _decoding:
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data)) as opened:
                kind = opened.format or ""
                if kind not in FORMATS:
                    raise ImageRefusedError(f"{name} is a {kind or 'an unknown'} image; PNG, JPEG, GIF, WebP and BMP are taken")
                if opened.width * opened.height > MAX_PIXELS:  # from the header: nothing decoded yet
                    raise ImageRefusedError(f"{name} has {opened.width}×{opened.height} pixels, more than the app takes",
                                            hint="scale it down first")  # fmt: skip
                opened.seek(0)  # an animation: its first frame
                if kind == "JPEG":  # decoded at 1/2, 1/4 or 1/8 of its size when that is still large enough
                    opened.draft(opened.mode, (MAX_SIDE, MAX_SIDE))
                opened.load()
                opened.thumbnail((MAX_SIDE, MAX_SIDE))  # in place: the full-size pixels go now
                image = ImageOps.exif_transpose(opened)
        except (ImageRefusedError, MissingExtraError):
            raise
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ImageRefusedError(f"{name} is not an image the app can read ({exc.__class__.__name__}: {exc})",
                                    hint="attach a PNG, JPEG, GIF, WebP or BMP image") from None  # fmt: skip
    transparent = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    out = io.BytesIO()
    lossless = transparent or kind in ("PNG", "GIF", "BMP")
    image = image.convert("RGBA" if transparent else "RGB")
    image.info = {}  # what the writers would otherwise carry over: EXIF, ICC profile, text chunks
    if lossless:
        image.save(out, "PNG")
        media_type = "image/png"
    else:
        image.save(out, "JPEG", quality=90)
        media_type = "image/jpeg"
    return CleanImage(out.getvalue(), media_type, image.width, image.height)

