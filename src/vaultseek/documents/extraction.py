"""What every document reader returns, and what it is given: value types only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..records import Location, ProgressPhase


class DocumentError(Exception):
    """A document that cannot be read; ``str()`` is the reason ``status`` shows
    (encrypted, corrupt, unsupported, …)."""


class ExtractionStopped(Exception):
    """The user asked to stop (Ctrl-C) between two pages; checkpoints are kept."""


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of a document's text and where it came from."""

    text: str
    location: Location | None = None
    heading: tuple[str, ...] = ()
    """Headings above the text, outermost first (a DOCX heading path, a slide title)."""
    structured: bool = False
    """Rows, slides, flattened data: the short-chunk limit is 20 characters, not 100."""
    whole: bool = False
    """Never split (a slide, a batch of rows): one segment, one chunk."""


@dataclass(slots=True)
class Extracted:
    """A document's segments plus what it took to get them."""

    segments: list[Segment]
    title: str | None = None
    """A title the document states (an HTML ``<title>``); None: the file name is used."""
    pages: int = 0
    ocr_pages: int = 0
    """Pages whose text came from OCR (this run or a resumed checkpoint)."""
    ocr_pending: int = 0
    """Pages that needed OCR and could not get it (no Tesseract, no language pack)."""
    pages_ocred: int = 0
    """Pages OCRed in this run."""
    pages_resumed: int = 0
    """Pages taken from checkpoints of an interrupted run."""
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class OcrSettings:
    enabled: bool = True
    languages: str = "eng+deu"

    def can_run(self) -> bool:
        """Whether OCR can read pages now (enabled, Tesseract and a configured language
        installed). Checked once per process, and only when some page is waiting for OCR."""
        if not self.enabled:
            return False
        try:
            from .ocr import open_ocr  # pytesseract: only when a page waits for it
        except ImportError:  # the documents extra is not installed: nothing can OCR
            return False

        return open_ocr(self.languages).available


class PageLog(Protocol):
    """Durable per-page results for one version of one document (the index's checkpoints)."""

    def done(self) -> dict[int, str]:
        """Page number → text of pages finished by an earlier, interrupted run."""
        ...

    def save(self, page: int, text: str) -> str:
        """Commit one finished page now; returns the text as it will be indexed."""
        ...


class NoPageLog:
    """A page log that remembers nothing (readers used outside the indexer)."""

    def done(self) -> dict[int, str]:
        return {}

    def save(self, page: int, text: str) -> str:
        return text


@dataclass(frozen=True)
class ExtractContext:
    """What a reader may use besides the bytes: the slow ones (PDF) report per page, honour
    a stop request between pages and checkpoint what they OCR."""

    path: str = ""
    ocr: OcrSettings = OcrSettings()
    pages: PageLog = field(default_factory=NoPageLog)
    progress: Callable[[ProgressPhase, int, int], None] = lambda _phase, _done, _total: None
    """(phase "extract" or "ocr", page number, pages)"""
    should_stop: Callable[[], bool] = lambda: False
