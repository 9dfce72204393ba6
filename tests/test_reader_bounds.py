"""Reading a hostile file costs a bounded amount of memory, wherever it is read — the index,
a chat attachment, the intake inbox — and a file that stopped the reader once is not read
again until it changes, so the rest of the vault is always indexed.

The hostile PDF is real: a 20 KB file whose one page holds a million text operators, which
PDFium needs about 1.1 GB to load and read (``tests/support/hostile_pdf.py``)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest
from tests.support.hostile_pdf import inflating_pdf

from vaultseek import open_index
from vaultseek.config import Config
from vaultseek.documents import ExtractContext, Extracted
from vaultseek.documents.sandbox import extract_once
from vaultseek.errors import IntakeError
from vaultseek.index.sync import READING_META, STOPPED_LAST_TIME
from vaultseek.intake.items import read_item
from vaultseek.study.attachments import AttachmentRefusedError, read_document

NOTE = "# Harbour\n\nThe harbour cranes were inspected on Tuesday by the night crew."
GROWTH_MB = 300
"""What this test process may grow by while a hostile file is read elsewhere (reading it here
takes over 1,000 MB)."""


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def hostile_vault(vault: Path) -> Path:
    inflating_pdf(vault / "bomb.pdf", 1_000_000)
    (vault / "zz-harbour.md").write_text(NOTE, "utf-8")
    return vault


def test_a_pdf_that_inflates_past_the_reader_cap_is_skipped_and_the_rest_indexed(vault: Path) -> None:
    hostile_vault(vault)
    before = peak_mb()
    with open_index(vault, create=True) as index:
        report = index.sync()
        reasons = {s.path: s.reason for s in report.skipped}
        assert reasons["bomb.pdf"].startswith("stopped the reader: it needed more than 1,024 MB"), reasons
        assert index.search("cranes", mode="bm25").results[0].path == "zz-harbour.md"
        assert peak_mb() - before < GROWTH_MB  # the reader child held it, not this process

        # Not read again while it is unchanged: skipped at once, with the same reason.
        again = index.sync()
        assert [(s.path, s.reason) for s in again.skipped] == [("bomb.pdf", reasons["bomb.pdf"])]
        assert again.documents_extracted == 0
        assert [(s.path, s.reason) for s in index.status().skipped] == [("bomb.pdf", reasons["bomb.pdf"])]


def index_db_meta(db: Path, key: str) -> str | None:
    try:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        conn.setbusytimeout(2000)
        rows = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        return str(rows[0][0]) if rows else None
    except apsw.Error:  # not created yet
        return None


def test_a_run_that_dies_while_reading_a_file_skips_it_next_time_until_it_changes(
    vault: Path, tmp_path: Path
) -> None:
    """The index process itself ends mid-read (here SIGKILL, as the out-of-memory killer
    sends): the next run indexes the notes and reports the file; once it changes, it is read."""
    hostile_vault(vault)
    db = tmp_path / "index.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultseek.cli", "index", str(vault), "--db", str(db), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while index_db_meta(db, READING_META) is None:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "the PDF was never read"
        time.sleep(0.01)
    assert json.loads(index_db_meta(db, READING_META) or "{}")["path"] == "bomb.pdf"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    with open_index(vault, db=db, create=True) as index:
        report = index.sync()
        assert [(s.path, s.reason) for s in report.skipped] == [("bomb.pdf", STOPPED_LAST_TIME)]
        assert report.documents_extracted == 0
        assert index.search("cranes", mode="bm25").results[0].path == "zz-harbour.md"
        assert index.sync().skipped[0].reason == STOPPED_LAST_TIME  # still, while unchanged

        inflating_pdf(vault / "bomb.pdf", 1_000_000, varied=True)  # the file changed: read again
        changed = index.sync()
        assert changed.skipped[0].reason.startswith("stopped the reader: it needed more than")


def test_a_hostile_chat_attachment_is_refused_without_the_app_holding_its_memory(tmp_path: Path) -> None:
    data = inflating_pdf(tmp_path / "bomb.pdf", 1_000_000).read_bytes()
    before = peak_mb()
    with pytest.raises(AttachmentRefusedError, match=r"bomb\.pdf cannot be read: stopped the reader"):
        read_document("bomb.pdf", data, Config())
    assert peak_mb() - before < GROWTH_MB


def test_an_inbox_item_over_its_size_limit_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "inbox" / "dump.md"
    big.parent.mkdir()
    with big.open("wb") as handle:  # 2 GB, sparse: the test costs no disk, reading it would
        handle.truncate(2 * 1024**3)
    before = peak_mb()
    with pytest.raises(IntakeError, match=r"dump\.md is 2,048 MB, over max_file_mb \(10 MB\)"):
        read_item(big)
    assert peak_mb() - before < 50
    pdf = inflating_pdf(tmp_path / "inbox" / "bomb.pdf", 1_000_000)
    with pytest.raises(IntakeError, match=r"cannot read bomb\.pdf: stopped the reader"):
        read_item(pdf)
    assert peak_mb() - before < GROWTH_MB


def test_a_pdf_is_read_no_further_than_its_text_cap(tmp_path: Path) -> None:
    from tests.support import docgen

    from vaultseek.documents import ExtractContext, Limits, extract

    page = "The cranes on the north quay were inspected and oiled. " * 18  # ~1,000 characters
    data = docgen.text_pdf(tmp_path / "long.pdf", [page] * 40).read_bytes()
    seen: list[int] = []
    context = ExtractContext(
        path="long.pdf", limits=Limits(max_text_chars=5_000),
        progress=lambda phase, number, _total: seen.append(number) if phase == "extract" else None,
    )  # fmt: skip
    extracted = extract("long.pdf", data, context)
    assert extracted.truncated and sum(len(s.text) for s in extracted.segments) == 5_000
    assert max(seen) <= 6, f"read {max(seen)} of 40 pages for 5,000 characters"


def test_a_stop_mid_pdf_stops_the_reader_between_pages_and_the_next_run_reads_it(vault: Path) -> None:
    """Ctrl-C reaches the reader child as the stop request it asks about each page: the run
    stops, the file is not marked as having stopped the reader, and the next run indexes it."""
    from tests.support import docgen

    docgen.text_pdf(vault / "log.pdf", [f"Page {n}: the cranes on the north quay were oiled." * 3 for n in range(1, 31)])
    (vault / "zz-harbour.md").write_text(NOTE, "utf-8")
    pages_seen: list[int] = []

    def progress(p: object) -> None:
        if getattr(p, "phase", "") == "extract":
            pages_seen.append(int(getattr(p, "done", 0)))

    with open_index(vault, create=True) as index:
        stopped = index.sync(progress=progress, should_stop=lambda: len(pages_seen) >= 3)
        assert stopped.interrupted and stopped.skipped == () and max(pages_seen) < 30
        again = index.sync()
        assert not again.interrupted and again.skipped == () and again.pages_extracted == 30
        assert "log.pdf" in {r.path for r in index.search("cranes", mode="bm25").results}


def test_an_inbox_item_that_stopped_the_reader_is_not_read_again_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon takes the inbox after every change in the vault: the hostile item is refused
    at once the next times, and read again once it changes."""
    from vaultseek.intake import items

    reads: list[str] = []

    def counted(name: str, data: bytes, context: ExtractContext) -> Extracted:
        reads.append(name)
        return extract_once(name, data, context)

    monkeypatch.setattr(items, "extract_once", counted)
    pdf = inflating_pdf(tmp_path / "inbox" / "bomb.pdf", 1_000_000)
    with pytest.raises(IntakeError, match="stopped the reader") as first:
        read_item(pdf)
    assert reads == ["bomb.pdf"]
    with pytest.raises(IntakeError) as again:
        read_item(pdf)
    assert str(again.value) == str(first.value) and reads == ["bomb.pdf"]  # refused unread
    inflating_pdf(pdf, 1_000_000, varied=True)  # changed: read (and refused) again
    with pytest.raises(IntakeError, match="stopped the reader"):
        read_item(pdf)
    assert reads == ["bomb.pdf", "bomb.pdf"]
