"""Optical character recognition with RapidOCR: the one module that imports ``rapidocr``.

RapidOCR runs PaddleOCR's PP-OCR models on onnxruntime inside this process. Its wheel ships
the two models used here (text detection, and a multilingual recogniser for Chinese,
Japanese, English and Latin-script languages), so OCR works after ``pip install`` alone, with
no system program and nothing fetched at run time: the model files are handed to it by path,
and a missing one is reported instead of downloaded.

Settings, measured with ``python -m benchmarks.ocr`` and a page of 7–8 pt text:

* Text is found on the page scaled to 960 pixels on its longer side, and each line is then
  read from the full 300-dpi render: as accurate as finding it at 1,280 or at the library's
  default (the page shrunk to 2,000 pixels for both steps), at ~60 % of the CPU time.
* The 0°/180° line classifier is off: on upright scans it turned whole correct lines upside
  down (a garbled line, ~3 % of an English page's characters), and scans come upright.

One recogniser is loaded per process (about a second) on the first scanned page. Calls take
turns behind a lock, each using up to two onnxruntime threads: the library keeps per-call
state on its detector, and one page on two threads keeps a small machine's cores busy.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

TESSERACT_TO_RAPID = {
    "eng": "en", "deu": "de", "chi_sim": "ch", "chi_tra": "chinese_cht", "jpn": "japan",
    "fra": "fr", "spa": "es", "ita": "it", "por": "pt", "nld": "nl", "pol": "pl", "ces": "cs",
    "slk": "sk", "slv": "sl", "hrv": "hr", "bos": "bs", "srp_latn": "rs_latin", "ron": "ro",
    "hun": "hu", "dan": "da", "swe": "sv", "nor": "no", "fin": "fi", "est": "et", "lav": "lv",
    "lit": "lt", "isl": "is", "gle": "ga", "cym": "cy", "cat": "ca", "glg": "gl", "eus": "eu",
    "oci": "oc", "lat": "la", "ltz": "lb", "mlt": "mt", "sqi": "sq", "tur": "tr", "aze": "az",
    "uzb": "uz", "vie": "vi", "ind": "id", "msa": "ms", "tgl": "tl", "swa": "sw", "afr": "af",
    "mri": "mi", "que": "qu", "kur": "ku",
}  # fmt: skip
"""Tesseract's code of each language the bundled multilingual recogniser reads (PP-OCRv6's
list), so ``ocr_languages`` names languages one way for both engines."""

MODEL_PARTS = ("Det", "Rec")
"""RapidOCR's stages used here, each with one model file in the wheel's ``models`` folder."""
DETECT_SIDE = 960
"""Pixels on the longer side of the page image text lines are found on."""

_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class RapidEngine:
    languages: str
    """The configured languages the recogniser reads, ``+``-joined; "" when it cannot run."""
    notice: str | None = None

    @property
    def available(self) -> bool:
        return bool(self.languages)

    def read(self, image: Any) -> str:
        """The text on a page image (a PIL image), one recognised line of text a line. Safe to
        call from several threads (calls take turns)."""
        page = image.convert("L")
        recogniser = _recogniser()
        with _LOCK:
            try:
                output = recogniser(page)
            except Exception as exc:  # the library raises its own types: one error for the page
                raise RuntimeError(f"RapidOCR failed ({exc.__class__.__name__}: {exc})") from exc
            finally:
                _give_back_memory()
        return "\n".join(output.txts or ())  # the library's reading order: top to bottom


@lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None on another C library."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def _give_back_memory() -> None:
    """Return the heap's free memory to the system after a page. The recogniser's buffers are
    freed after each page but glibc keeps them, so a reader grew by 30-190 MB a page of a
    full-page screenshot (to 850 MB); trimmed, it stays at ~160 MB between pages."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def reads(language: str) -> bool:
    """Whether the bundled recogniser reads this Tesseract language code."""
    return language in TESSERACT_TO_RAPID


@lru_cache(maxsize=8)
def open_rapid(languages: str) -> RapidEngine:
    """Check once per process and configuration that RapidOCR can run: the library and its
    model files are there, and it reads at least one configured language."""
    wanted = [part for part in languages.split("+") if part]
    usable = [lang for lang in wanted if reads(lang)]
    if not usable:
        return RapidEngine("", f"RapidOCR reads none of the OCR languages {languages}")
    try:
        model_files()
    except ImportError as exc:
        return RapidEngine("", f"RapidOCR is not installed ({exc.name or exc} is missing)")
    except FileNotFoundError as exc:
        return RapidEngine("", f"RapidOCR cannot run: {exc}")
    missing = [lang for lang in wanted if lang not in usable]
    notice = (
        f"OCR language(s) {', '.join(missing)} not read by RapidOCR; OCR reads {'+'.join(usable)}"
        if missing
        else None
    )
    return RapidEngine("+".join(usable), notice)


def model_files() -> dict[str, Path]:
    """The wheel's model file for each stage. Raises ImportError when rapidocr or onnxruntime
    is not installed, FileNotFoundError naming a missing model."""
    import rapidocr

    if importlib.util.find_spec("onnxruntime") is None:
        raise ImportError("No module named 'onnxruntime'", name="onnxruntime")

    folder = Path(rapidocr.__file__).parent / "models"
    found: dict[str, Path] = {}
    for part in MODEL_PARTS:
        matches = sorted(folder.glob(f"*_{part.lower()}_*.onnx"))
        if len(matches) != 1:
            raise FileNotFoundError(f"no single {part.lower()} model in {folder}")
        found[part] = matches[0]
    return found


@lru_cache(maxsize=1)
def _recogniser() -> Any:
    from rapidocr import RapidOCR

    threads = max(1, min(2, os.cpu_count() or 1))
    params: dict[str, Any] = {
        "Global.log_level": "error",
        "Global.use_cls": False,
        "Global.max_side_len": 10_000,  # lines are read from the render as it is
        "Det.limit_type": "max",
        "Det.limit_side_len": DETECT_SIDE,
        # One text line at a time: the same text, in 10-25 % less CPU on two cores, and half
        # the memory (a page's peak ~700 MB → ~350 MB; batches pad every line to the widest).
        "Rec.rec_batch_num": 1,
        "EngineConfig.onnxruntime.intra_op_num_threads": threads,
        "EngineConfig.onnxruntime.inter_op_num_threads": 1,
    }
    for part, path in model_files().items():
        params[f"{part}.model_path"] = str(path)
    return RapidOCR(params=params)

