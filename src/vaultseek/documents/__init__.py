"""Documents beside the notes: PDF, Word, PowerPoint, Excel, OpenDocument text, EPUB, CSV, HTML,
plain text, JSON/YAML, canvases and (with ``ocr_images``) images.

Each format has one reader module, and each third-party library one owner among them, imported
only when a document of that kind is met (``registry.py`` maps suffixes to readers). A reader
turns a file's bytes into :class:`Segment` s — text plus where it came from — and
:func:`document_chunks` turns those into the same chunk drafts notes become.
"""

from __future__ import annotations

from .chunks import document_chunks, short_heading
from .extraction import (
    DocumentError,
    ExtractContext,
    Extracted,
    ExtractionStopped,
    Limits,
    OcrSettings,
    PageLog,
    Segment,
)
from .registry import DOCUMENT_SUFFIXES, extract, kind_of

__all__ = [
    "DOCUMENT_SUFFIXES",
    "DocumentError",
    "ExtractContext",
    "Extracted",
    "ExtractionStopped",
    "Limits",
    "OcrSettings",
    "PageLog",
    "Segment",
    "document_chunks",
    "extract",
    "kind_of",
    "short_heading",
]
