"""One writer per index: real `vaultseek index` processes on one vault and one index file.

The first process is paused with SIGSTOP once it holds the lock, so the second is sure to
meet it (no race on how long indexing takes); SIGCONT or SIGKILL then lets the second go on.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultseek import IndexBusyError, open_index
from vaultseek.storage.writer_lock import find_holder, is_locked, writer_lock, writer_lock_path

NOTES = 600
SECTIONS = 4


def make_vault(root: Path, files: int = NOTES) -> None:
    for i in range(files):
        folder = root / f"area{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        sections = "\n\n".join(
            f"## Topic {j} of note {i}\n\nNote {i} discusses item {j}: "
            + " ".join(f"word{(i * 31 + j * 7 + k) % 997}" for k in range(60))
            for j in range(SECTIONS)
        )
        (folder / f"note-{i:05d}.md").write_text(f"# Note {i}\n\n{sections}\n", encoding="utf-8")


def start_index(vault: Path, db: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "vaultseek", "index", str(vault), "--db", str(db), "--no-deep", "--json", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[Path, Path, subprocess.Popen[str]]]:
    """A `vaultseek index` paused while it holds the writer lock of a fresh index."""
    vault, db = tmp_path / "vault", tmp_path / "index.db"
    make_vault(vault)
    first = start_index(vault, db)
    deadline = time.monotonic() + 60
    while find_holder(writer_lock_path(db)).pid != first.pid:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first run never took the lock"
        time.sleep(0.002)
    os.kill(first.pid, signal.SIGSTOP)
    assert is_locked(writer_lock_path(db)), "the first run let go before it was paused"
    try:
        yield vault, db, first
    finally:
        if first.poll() is None:
            os.kill(first.pid, signal.SIGKILL)
        first.communicate()


class StderrLines:
    """A process's stderr, read on a thread, so a test can wait for a line while it runs."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        assert proc.stderr is not None
        stream = proc.stderr
        self.thread = threading.Thread(target=lambda: self.lines.extend(stream), daemon=True)
        self.thread.start()

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in list(self.lines) if text in line]
            if found:
                return found[0]
            time.sleep(0.01)
        raise AssertionError(f"{text!r} never appeared on stderr: {self.lines}")


def check_index(vault: Path, db: Path) -> None:
    """Every note of the vault indexed exactly once, each chunk once, all vectors there."""
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    with open_index(vault, db=db) as index:
        paths = [row[0] for row in index.conn.execute("SELECT path FROM files ORDER BY path")]
        assert paths == notes  # none lost, none twice
        dupes = index.conn.execute(
            "SELECT count(*) FROM (SELECT file_id, position FROM chunks GROUP BY 1, 2 HAVING count(*) > 1)"
        ).fetchall()[0][0]
        assert dupes == 0
        status = index.status()
        assert status.chunks == status.vectors == len(notes) * SECTIONS
        assert index.store.integrity_problems() == []
        assert index.search("note 599 discusses item 3", mode="bm25").results[0].path == "area4/note-00599.md"


def test_a_second_index_run_waits_for_the_first_names_it_and_then_completes(holder: tuple[Path, Path, subprocess.Popen[str]]) -> None:
    vault, db, first = holder
    second = start_index(vault, db)
    err = StderrLines(second)
    line = err.wait_for("waiting:")
    assert f"pid {first.pid}" in line and "(vaultseek index " in line and str(db) in line
    assert "until it is done" in line
    time.sleep(0.5)
    assert second.poll() is None  # still waiting, not writing beside the paused run
    os.kill(first.pid, signal.SIGCONT)
    first_out, _ = first.communicate(timeout=120)
    second_out, _ = second.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, err.lines
    first_report, second_report = json.loads(first_out), json.loads(second_out)
    assert first_report["added"] == NOTES
    # The second ran after the first had finished: it found everything done.
    assert (second_report["added"], second_report["updated"], second_report["unchanged"]) == (0, 0, NOTES)
    check_index(vault, db)
    assert not is_locked(writer_lock_path(db))


def test_kill_9_of_the_holder_frees_the_lock_and_the_waiting_run_finishes(holder: tuple[Path, Path, subprocess.Popen[str]]) -> None:
    vault, db, first = holder
    second = start_index(vault, db)
    err = StderrLines(second)
    assert f"pid {first.pid}" in err.wait_for("waiting:")
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0, err.lines
    report = json.loads(out)
    assert report["added"] + report["unchanged"] == NOTES and not report["interrupted"]
    check_index(vault, db)
    rerun = subprocess.run(
        [sys.executable, "-m", "vaultseek", "index", str(vault), "--db", str(db), "--no-deep", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(rerun.stdout)["unchanged"] == NOTES


def test_wait_gives_up_with_exit_4_naming_the_holder(holder: tuple[Path, Path, subprocess.Popen[str]]) -> None:
    vault, db, first = holder
    started = time.monotonic()
    second = start_index(vault, db, "--wait", "0.5")
    _out, err = second.communicate(timeout=60)
    assert second.returncode == 4, err
    assert time.monotonic() - started >= 0.5
    assert f"error: the index {db} is being written by pid {first.pid} (vaultseek index " in err
    assert "gave up after 0.5 s" in err and "hint:" in err
    assert "waiting:" in err and "up to 0.5 s" in err


def test_the_lock_file_is_private_and_a_stop_ends_the_wait(tmp_path: Path) -> None:
    """In one process: the lock held on one open file blocks another open of it, as between
    processes. A sync asked to stop while it waits writes nothing and says why."""
    vault, db = tmp_path / "vault", tmp_path / "index.db"
    make_vault(vault, 3)
    heard = []
    with open_index(vault, db=db, create=True) as index, writer_lock(db) as held:
        assert held
        assert stat.S_IMODE(writer_lock_path(db).stat().st_mode) == 0o600
        assert find_holder(writer_lock_path(db)).pid == os.getpid()
        report = index.sync(on_wait=heard.append, should_stop=lambda: True)
        assert report.interrupted and report.added == 0
        assert "nothing was written" in report.notices[0]
        assert [h.pid for h in heard] == [os.getpid()]
        assert index.status().files == 0
        with pytest.raises(IndexBusyError, match=f"pid {os.getpid()}"):
            index.sync(wait=0)
    assert not is_locked(writer_lock_path(db))
    assert find_holder(writer_lock_path(db)).pid is None  # released: the name is cleared
    with open_index(vault, db=db) as index:
        assert index.sync().added == 3


def indexed_files(vault: Path, db: Path) -> int:
    with open_index(vault, db=db, read_only=True) as index:
        return index.status().files


def test_a_watcher_waits_for_an_index_run_then_syncs_after_it(holder: tuple[Path, Path, subprocess.Popen[str]]) -> None:
    """`vaultseek watch` beside a running `vaultseek index`: its first sync waits for the
    writer lock, writing nothing meanwhile, and the watcher syncs once the index run is done;
    Ctrl-C ends it."""
    vault, db, first = holder
    paused_at = indexed_files(vault, db)
    assert paused_at < NOTES
    watch = subprocess.Popen(
        [sys.executable, "-m", "vaultseek", "watch", "--vault", str(vault), "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert watch.stdout is not None
        assert watch.stdout.readline().startswith("watching ")
        time.sleep(3)  # its first sync, a full one, is due within a second: it waits
        assert watch.poll() is None
        assert indexed_files(vault, db) == paused_at  # the watcher wrote nothing beside it
        assert find_holder(writer_lock_path(db)).pid == first.pid
        os.kill(first.pid, signal.SIGCONT)
        first_out, _ = first.communicate(timeout=120)
        assert json.loads(first_out)["added"] == NOTES
        check_index(vault, db)
        (vault / "area0" / "late.md").write_text("# Late\n\nA note saved after the index run.\n", "utf-8")
        line = watch.stdout.readline()  # a line per sync that changed something
        assert " 1 added, 0 updated, 0 deleted" in line, line
    finally:
        watch.send_signal(signal.SIGINT)
        _out, err = watch.communicate(timeout=30)
    assert watch.returncode == 0, err
    assert indexed_files(vault, db) == NOTES + 1
