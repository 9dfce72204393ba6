"""A real `vaultseek index` killed with SIGKILL in the middle of OCR, then run again: OCR
resumes at the page it stopped at, and no chunk is written twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
from tests.support import docgen

from test_documents import needs_tesseract
from vaultseek import open_index

PAGES = 6
CODES = ("albatross", "buzzard", "cormorant", "dunlin", "egret", "flamingo")  # OCR-safe words


def checkpoints(db: Path) -> int:
    try:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        conn.setbusytimeout(2000)
        return int(conn.execute("SELECT count(*) FROM ocr_checkpoints").fetchall()[0][0])
    except apsw.Error:  # not created yet
        return 0


def test_kill_9_mid_ocr_resumes_without_redoing_pages(tmp_path: Path) -> None:
    needs_tesseract()
    vault, db = tmp_path / "vault", tmp_path / "index.db"
    pages = [
        [f"Scanned page {n} of the harbour ledger", f"Cargo code word {CODES[n - 1]} unloaded at dawn.",
         "The harbour master counted every crate twice."]
        for n in range(1, PAGES + 1)
    ]  # fmt: skip
    docgen.scanned_pdf(vault / "ledger.pdf", pages)
    (vault / "note.md").write_text("# Harbour\n\nA note about the harbour cranes and their schedule.")

    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultseek.cli", "index", str(vault), "--db", str(db), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while checkpoints(db) < 1:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "OCR never got going"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = checkpoints(db)
    assert 1 <= done_before < PAGES, f"kill landed too late to test anything ({done_before} pages)"

    with open_index(vault, db=db, create=True) as index:
        assert index.store.integrity_problems() == []
        report = index.sync()
        assert report.pages_resumed == done_before  # taken from the checkpoints …
        assert report.pages_ocred == PAGES - done_before  # … and only the rest OCRed
        assert index.conn.execute("SELECT count(*) FROM ocr_checkpoints").fetchall()[0][0] == 0
        rows = index.get_note("ledger.pdf")
        assert [r.location.page for r in rows] == list(range(1, PAGES + 1))  # once each
        dupes = index.conn.execute(
            "SELECT count(*) FROM (SELECT file_id, position FROM chunks GROUP BY 1, 2 HAVING count(*) > 1)"
        ).fetchall()[0][0]
        assert dupes == 0 and index.store.integrity_problems() == []
        for n in (1, PAGES):
            hit = index.search(CODES[n - 1], mode="bm25").results[0]
            assert hit.path == "ledger.pdf" and hit.location.page == n
        assert index.status().ocr_pages == PAGES
