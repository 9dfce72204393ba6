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
from typing import Any

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
