"""OCR after ``pip install`` alone: a scanned PDF is read by RapidOCR (the real engine and its
bundled models) with no Tesseract on the machine, and while no engine can run, ``index`` says
so once a run with the fix.

"No Tesseract" is a child process whose PATH leaves out every folder holding a ``tesseract``
program; "no RapidOCR" is one whose import system refuses ``rapidocr`` (tests/test_extras.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import docgen

from test_extras import run_without

SCAN_LINES = [
    "Quarterly maintenance log for the airship hangar",
    "The flamingo turbine was serviced on Tuesday morning.",
    "Inspector Ramsbottom signed the checklist afterwards.",
]
COVER = "Cover page. This maintenance binder belongs to the hangar crew. " * 3
FIX = "pip install 'vaultseek[documents]'"


def without_tesseract() -> dict[str, str]:
    """This process's environment with a PATH on which no ``tesseract`` is found."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    path = os.pathsep.join(f for f in folders if f and not (Path(f) / "tesseract").exists())
    assert shutil.which("tesseract", path=path) is None
    return {**os.environ, "PATH": path}


def vaultseek(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real command in a child process (OCR on a busy two-core machine: a long timeout)."""
    return subprocess.run(
        [sys.executable, "-m", "vaultseek.cli.launcher", *args],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


def ocr_notices(report: dict[str, object]) -> list[str]:
    notices = report.get("notices", [])
    assert isinstance(notices, list)
    return [n for n in notices if "OCR cannot run" in n]


@pytest.fixture
def scans(vault: Path) -> Path:
    """Two PDFs with an image-only page each (no text layer), and a note."""
    docgen.scanned_pdf(vault / "hangar-log.pdf", [COVER, SCAN_LINES])
    docgen.scanned_pdf(vault / "crew.pdf", [["Crew roster: navigator Ada, rigger Lin."]])
    (vault / "note.md").write_text("# Hangar\n\nA note about the hangar doors.\n", encoding="utf-8")
    return vault


def test_a_scan_is_found_by_a_word_on_it_with_rapidocr_and_no_tesseract(scans: Path) -> None:
    env = without_tesseract()
    done = vaultseek("index", str(scans), "--json", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["pages_ocred"] == 2, report
    assert not [n for n in report.get("notices", []) if "OCR" in n], report["notices"]

    found = vaultseek("search", "Ramsbottom", "--mode", "bm25", "--json", "--vault", str(scans), env=env)
    hit = json.loads(found.stdout)["results"][0]["sections"][0]  # a scanned page keeps its place in its note
    assert hit["path"] == "hangar-log.pdf" and hit["location"] == {"page": 2}
    found = vaultseek("search", "navigator", "--mode", "bm25", "--json", "--vault", str(scans), env=env)
    assert json.loads(found.stdout)["results"][0]["path"] == "crew.pdf"
    status = json.loads(vaultseek("status", "--json", "--vault", str(scans), env=env).stdout)
    assert status["ocr_pages"] == 2 and status["ocr_pending"] == 0


def test_until_ocr_can_run_index_says_so_once_with_the_fix(scans: Path) -> None:
    env = without_tesseract()
    first = run_without(("rapidocr",), "index", str(scans), env=env)
    assert first.returncode == 0, first.stderr
    assert "Traceback" not in first.stdout + first.stderr
    # Two PDFs wait for OCR: one line for the run, naming the fix.
    lines = [line for line in first.stdout.splitlines() if "OCR cannot run" in line]
    assert len(lines) == 1, first.stdout
    assert FIX in lines[0] and "RapidOCR is not installed" in lines[0], lines[0]
    assert "tesseract" in lines[0].lower()

    # The next run reads nothing again (the files did not change) and still says it, once.
    again = json.loads(run_without(("rapidocr",), "index", str(scans), "--json", env=env).stdout)
    assert again["documents_extracted"] == 0
    assert len(ocr_notices(again)) == 1 and FIX in ocr_notices(again)[0]
    status = json.loads(run_without(("rapidocr",), "status", "--json", "--vault", str(scans), env=env).stdout)
    assert status["ocr_pending"] == 2 and status["ocr_pages"] == 0

    # With an engine installed, the waiting pages are read and the notice is gone.
    fixed = vaultseek("index", str(scans), "--json", env=env)
    report = json.loads(fixed.stdout)
    assert report["pages_ocred"] == 2 and ocr_notices(report) == [], report
    found = vaultseek("search", "Ramsbottom", "--mode", "bm25", "--json", "--vault", str(scans), env=env)
    assert json.loads(found.stdout)["results"][0]["path"] == "hangar-log.pdf"


def test_no_notice_when_ocr_is_switched_off(scans: Path) -> None:
    (scans / ".vaultseek.toml").write_text("ocr = false\n", encoding="utf-8")
    done = run_without(("rapidocr",), "index", str(scans), "--json", env=without_tesseract())
    report = json.loads(done.stdout)
    assert ocr_notices(report) == [] and report["pages_ocred"] == 0
