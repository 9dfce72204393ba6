"""What every document reader returns, and what it is given: value types only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..records import Link, Location, ProgressPhase

MB = 1024 * 1024


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
    """Pages that needed OCR and could not get it (no OCR engine for the configured languages)."""
    pages_ocred: int = 0
    """Pages OCRed in this run."""
    pages_resumed: int = 0
    """Pages taken from checkpoints of an interrupted run."""
    ocr_over_limit: int = 0
    """Pages that needed OCR past :attr:`OcrSettings.max_pages` (left with their text layer)."""
    notices: list[str] = field(default_factory=list)
    truncated: bool = False
    """The reader stopped at the text cap (``max_document_text_mb``): the rest was dropped."""
    links: list[Link] = field(default_factory=list)
    """Links to other files the document makes (a canvas's file cards and card links)."""


@dataclass(frozen=True, slots=True)
class OcrSettings:
    enabled: bool = True
    languages: str = "eng+deu"
    max_pages: int = 100
    """OCR at most this many pages of one document (``ocr_max_pages_per_document``)."""
    engine: str = "auto"
    """``ocr_engine``: 'auto', 'rapidocr' or 'tesseract' (:func:`.ocr.open_engine`)."""

    def can_run(self) -> bool:
        """Whether OCR can read pages now (enabled, an engine installed that reads a
        configured language). Checked once per process, and only when some page is waiting."""
        return self.enabled and self.blocker() is None

    def blocker(self) -> str | None:
        """Why OCR, switched on, cannot read pages now, with the fix; None when it can or is
        switched off (pages then wait on purpose)."""
        if not self.enabled:
            return None
        try:
            from .ocr import open_engine  # the OCR libraries: only when a page waits for them
        except ImportError:  # the documents extra is not installed: nothing can OCR
            return (
                "OCR cannot run, so pages without a text layer wait for it: the optional "
                "'documents' extra is not installed. Fix: pip install 'vaultseek[documents]'"
            )
        engine = open_engine(self.engine, self.languages)
        return None if engine.available else engine.notice or "OCR cannot run"


@dataclass(frozen=True, slots=True)
class Limits:
    """What one document may cost (from the configuration; enforced by :mod:`.limits`)."""

    max_inflated_bytes: int = 200 * MB
    """``max_inflated_mb``: the most a zipped Office file (DOCX, PPTX, XLSX) may take once
    inflated and parsed."""
    max_text_chars: int = 20 * MB
    """``max_document_text_mb``: the most characters of text taken from one document."""
    max_reader_bytes: int = 1024 * MB
    """The memory (address space) the child process reading a document may take past its
    start-up (:mod:`.sandbox`); a reader that needs more is stopped and the file skipped."""


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
    limits: Limits = Limits()
    """Caps on what reading the document may cost; readers take their text through a
    :class:`~.limits.TextBudget` of ``limits.max_text_chars``."""
