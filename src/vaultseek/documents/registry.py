"""File suffix → document kind → reader module, imported on first use.

A markdown-only vault never imports any reader, so it never pays for pypdfium2, openpyxl,
trafilatura and the rest (a test checks ``sys.modules``).

The PDF, Office, HTML and image readers' libraries come with the optional ``documents`` extra;
plain text, CSV, JSON, YAML, canvases, EPUB and ODT are read by the core install. A reader whose
library is not installed raises :class:`~vaultseek.errors.MissingExtraError` naming the extra,
which indexing reports as one skipped file and one notice per run, not as a damaged document.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from ..errors import MissingExtraError
from .extraction import DocumentError, ExtractContext, Extracted, ExtractionStopped
from .limits import cap_text, check_package

DOCUMENTS_EXTRA = "documents"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".tif", ".tiff", ".bmp")
"""Screenshots, scans and photos: their text is read by OCR (``ocr_images``; a GIF's first
frame). Obsidian's other image types are not: SVG is drawn, not written, and HEIC/AVIF need
codecs Pillow lacks."""

_KINDS: dict[str, tuple[str, str]] = {
    ".pdf": ("pdf", "pdf:read"),
    ".docx": ("docx", "word:read"),
    ".pptx": ("pptx", "slides:read"),
    ".xlsx": ("xlsx", "spreadsheet:read_xlsx"),
    ".xlsm": ("xlsx", "spreadsheet:read_xlsx"),
    ".csv": ("csv", "spreadsheet:read_csv"),
    ".tsv": ("csv", "spreadsheet:read_csv"),
    ".html": ("html", "webpage:read"),
    ".htm": ("html", "webpage:read"),
    ".txt": ("txt", "plaintext:read"),
    ".json": ("json", "data:read_json"),
    ".yaml": ("yaml", "data:read_yaml"),
    ".yml": ("yaml", "data:read_yaml"),
    ".canvas": ("canvas", "canvas:read"),
    ".epub": ("epub", "epub:read"),
    ".odt": ("odt", "opendocument:read"),
    **dict.fromkeys(IMAGE_SUFFIXES, ("image", "picture:read")),
}
DOCUMENT_SUFFIXES = tuple(_KINDS)

_NEEDS_EXTRA = {"pdf": "PDF", "docx": "Word", "pptx": "PowerPoint", "xlsx": "Excel", "html": "HTML",
                "image": "image"}
"""The kinds whose readers' libraries come with the ``documents`` extra, with the name the
error gives them."""

_ZIPPED = {"docx", "pptx", "xlsx"}
"""Office files: zip archives whose directory is checked before their library opens them."""

_UNSUPPORTED = {
    ".doc": "save it as .docx",
    ".ppt": "save it as .pptx",
    ".xls": "save it as .xlsx",
    ".ods": "save it as .xlsx",
    ".odp": "save it as .pptx",
    ".rtf": "save it as .docx",
    ".pages": "export it as .docx or PDF",
    ".key": "export it as .pptx or PDF",
    ".numbers": "export it as .xlsx or CSV",
}
"""Document types people include by mistake: reported as unsupported, with what to do."""


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def kind_of(path: str) -> str | None:
    """The document kind of a vault-relative path (``pdf``, ``docx``, …), or None for a note
    (``.md``, or any other included file, which is read as markdown as before)."""
    suffix = _suffix(path)
    if suffix in _KINDS:
        return _KINDS[suffix][0]
    if suffix in _UNSUPPORTED:
        return suffix[1:]
    return None


def extract(path: str, data: bytes, context: ExtractContext) -> Extracted:
    """Read one document's bytes, its text cut to ``context.limits.max_text_chars``. Raises
    :class:`DocumentError` for anything wrong with the file (never a library's own exception),
    an Office file that would inflate past the limits included; :class:`ExtractionStopped` on
    request; and :class:`MissingExtraError` when the reader's library (the ``documents`` extra)
    is not installed."""
    kind, target = _reader_of(path)
    module_name, function = target.split(":")
    if kind in _ZIPPED:
        check_package(data, kind, context.limits)
    try:
        reader: Callable[[bytes, ExtractContext], Extracted] = getattr(
            import_module(f".{module_name}", __package__), function
        )
        result = reader(data, context)
    except (DocumentError, ExtractionStopped, MissingExtraError):
        raise
    except ImportError as exc:  # the reader's library (or OCR's, met mid-PDF) is not installed
        if kind not in _NEEDS_EXTRA:
            raise
        raise MissingExtraError.from_import(
            exc, DOCUMENTS_EXTRA, feature=f"reading {_NEEDS_EXTRA[kind]} files"
        ) from exc
    except (MemoryError, RecursionError) as exc:
        raise DocumentError(f"too complex to read ({exc.__class__.__name__})") from exc
    except Exception as exc:  # a parser's own error on a damaged file: report, never crash
        detail = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else ""
        raise DocumentError(
            f"corrupt or unreadable {kind.upper()} file ({exc.__class__.__name__}"
            + (f": {detail})" if detail else ")")
        ) from exc
    return cap_text(result, path, context.limits.max_text_chars)


def _reader_of(path: str) -> tuple[str, str]:
    """The kind of ``path`` and its reader (``module:function``); :class:`DocumentError` for a
    type no reader takes."""
    suffix = _suffix(path)
    if suffix in _UNSUPPORTED:
        raise DocumentError(f"unsupported document type {suffix}; {_UNSUPPORTED[suffix]}")
    if suffix not in _KINDS:
        raise DocumentError(f"unsupported document type {suffix or '(no suffix)'}")
    return _KINDS[suffix]


def require_reader(path: str) -> None:
    """Raise what :func:`extract` would for ``path`` before reading anything: a
    :class:`DocumentError` for a type no reader takes, :class:`MissingExtraError` when its
    reader's library is not installed (checked in the calling process, which a reader child
    of :mod:`.sandbox` may not mirror)."""
    kind, target = _reader_of(path)
    try:
        import_module(f".{target.split(':')[0]}", __package__)
    except ImportError as exc:
        if kind not in _NEEDS_EXTRA:
            raise
        raise MissingExtraError.from_import(
            exc, DOCUMENTS_EXTRA, feature=f"reading {_NEEDS_EXTRA[kind]} files"
        ) from exc
