"""Optical character recognition with Tesseract: the one module that imports pytesseract.

Tesseract runs as a child process per page. ``OMP_THREAD_LIMIT=1`` is set for it (unless the
user set it): with OpenMP's default threads a page took ~2.5 s here instead of ~0.6 s, and
pages are better spread over cores by running documents, not threads, in parallel.

When the program or a configured language pack is missing, OCR degrades instead of failing:
the missing languages are left out with a notice, and with no usable language at all the page
is recorded as waiting for OCR (``vaultseek status`` says so; a later run retries it).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import pytesseract


@dataclass(frozen=True, slots=True)
class OcrEngine:
    languages: str
    """The usable subset of the configured languages, ``+``-joined; "" when OCR cannot run."""
    notice: str | None = None

    @property
    def available(self) -> bool:
        return bool(self.languages)

    def read(self, image: Any) -> str:
        """The text on a page image (a PIL image). Handed over as an uncompressed PGM file:
        pytesseract's own PNG encoding cost ~0.2 s of a ~1 s page. Safe to call from
        several threads (each call is its own Tesseract process)."""
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        with tempfile.TemporaryDirectory(prefix="vaultseek-ocr-") as folder:
            path = os.path.join(folder, "page.pgm")
            image.convert("L").save(path)
            return str(pytesseract.image_to_string(path, lang=self.languages))


@lru_cache(maxsize=8)
def open_ocr(languages: str) -> OcrEngine:
    """Check Tesseract and its language packs once per process and configuration."""
    wanted = [part for part in languages.split("+") if part]
    try:
        installed = set(pytesseract.get_languages(config=""))
    except (pytesseract.TesseractNotFoundError, OSError):
        return OcrEngine(
            "",
            "OCR unavailable: the tesseract program is not installed (Debian/Ubuntu: "
            "apt-get install tesseract-ocr tesseract-ocr-deu); pages without text wait for it",
        )
    except Exception as exc:  # noqa: BLE001 - a broken installation: same degradation, with its reason
        return OcrEngine("", f"OCR unavailable: tesseract failed ({exc})")
    usable = [lang for lang in wanted if lang in installed]
    missing = [lang for lang in wanted if lang not in installed]
    if not usable:
        return OcrEngine(
            "",
            f"OCR unavailable: no Tesseract language pack for {languages} is installed "
            f"(installed: {', '.join(sorted(installed)) or 'none'})",
        )
    notice = (
        f"OCR language pack(s) {', '.join(missing)} not installed; OCR uses {'+'.join(usable)}"
        if missing
        else None
    )
    return OcrEngine("+".join(usable), notice)


def ocr_error_types() -> tuple[type[BaseException], ...]:
    """Errors one page's OCR may raise without the document being at fault."""
    return (pytesseract.TesseractError, RuntimeError, OSError)


# -- which engine reads scanned pages (``ocr_engine``) ----------------------------------------
# RapidOCR (.ocr_rapid) comes with the documents extra; Tesseract is a system program. Measured
# by ``python -m benchmarks.ocr`` (docs/documents.md) on English, German and Chinese scans,
# RapidOCR got at most 0.02 % of the characters wrong, Tesseract with the page's own pack
# 0.02–0.9 % on good scans and 8–15 % on worn copies, in 1.6–2.7 times less CPU time. A
# misread word cannot be found, so "auto" takes RapidOCR for every language it reads, and
# Tesseract for languages only Tesseract has a pack for.


class PageReader(Protocol):
    """What :func:`open_engine` returns: :class:`OcrEngine` or ``ocr_rapid.RapidEngine``."""

    @property
    def available(self) -> bool: ...

    @property
    def notice(self) -> str | None: ...

    def read(self, image: Any) -> str: ...


@lru_cache(maxsize=8)
def open_engine(engine: str, languages: str) -> PageReader:
    """The engine that reads pages without a text layer, for ``ocr_engine`` ('auto',
    'rapidocr' or 'tesseract') and ``ocr_languages``. With 'auto': RapidOCR when it reads
    every configured language, else Tesseract when it has a pack for each, else whichever
    reads more of them (RapidOCR on a tie). When none can run, the result is unavailable and
    its notice says why and how to fix it."""
    from .ocr_rapid import open_rapid

    rapid = open_rapid(languages) if engine != "tesseract" else None
    if rapid is not None and rapid.available and (engine == "rapidocr" or rapid.notice is None):
        return rapid  # asked for, or it reads every configured language
    tesseract = open_ocr(languages) if engine != "rapidocr" else None
    if tesseract is not None and tesseract.available:
        if rapid is None or not rapid.available or tesseract.notice is None:
            return tesseract
        if len(tesseract.languages.split("+")) > len(rapid.languages.split("+")):
            return tesseract
    if rapid is not None and rapid.available:
        return rapid
    return OcrEngine("", _cannot_run(engine, languages, rapid, tesseract))


def _cannot_run(engine: str, languages: str, rapid: PageReader | None, tesseract: PageReader | None) -> str:
    """Why no engine can read scanned pages, and what to do about it, in one line."""
    from .ocr_rapid import reads

    wanted = [part for part in languages.split("+") if part]
    reasons, fixes = [], []
    if rapid is not None:
        reasons.append(rapid.notice or "RapidOCR cannot run")
        if "not installed" in (rapid.notice or ""):
            fixes.append("pip install 'vaultseek[documents]' (RapidOCR, no system program needed)")
        else:
            fixes.append("set ocr_languages to languages RapidOCR reads (eng, deu, chi_sim, fra, …)")
    elif any(reads(lang) for lang in wanted):
        fixes.append('set ocr_engine = "auto" to use RapidOCR')
    if tesseract is not None:
        reason = (tesseract.notice or "Tesseract cannot run").removeprefix("OCR unavailable: ")
        reasons.append(reason.removesuffix("; pages without text wait for it"))
        if "apt-get" in reason:  # the reason names the command already
            fixes.append(f"install Tesseract with packs for {languages}")
        else:
            packs = " ".join(f"tesseract-ocr-{lang.replace('_', '-').lower()}" for lang in wanted)
            fixes.append(f"install Tesseract's packs for {languages} (Debian/Ubuntu: apt-get install {packs})")
    else:
        fixes.append('set ocr_engine = "auto" to let Tesseract read them where it is installed')
    return (
        f"OCR cannot run, so pages without a text layer wait for it: {'; '.join(reasons)}. "
        f"Fix: {', or '.join(fixes)}; then run vaultseek index again"
    )
