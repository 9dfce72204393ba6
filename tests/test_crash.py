"""A real indexing process killed with SIGKILL mid-run, then run again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from vaultseek import open_index


def make_vault(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"area{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        sections = "\n\n".join(
            f"## Topic {j} of note {i}\n\nNote {i} discusses item {j}: "
            + " ".join(f"word{(i * 31 + j * 7 + k) % 997}" for k in range(60))
            for j in range(4)
        )
        (folder / f"note-{i:05d}.md").write_text(f"# Note {i}\n\n{sections}\n", encoding="utf-8")


def indexed_files(db: Path) -> int:
    try:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        conn.setbusytimeout(2000)
        return int(conn.execute("SELECT count(*) FROM files").fetchall()[0][0])
    except apsw.Error:
        return 0


def test_kill_9_mid_index_then_rerun_is_consistent(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    db = tmp_path / "index.db"
    make_vault(vault, 3000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultseek.cli", "index", str(vault), "--db", str(db), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while indexed_files(db) < 200:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "indexing never got going"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = indexed_files(db)
    assert 200 <= partial < 3000, f"kill landed too late to test anything ({partial} files)"

    with open_index(vault, db=db, create=True) as index:
        assert index.store.integrity_problems() == []  # even the half-done index agrees with itself
        report = index.sync()
        assert report.added == 3000 - partial  # continued, did not start over
        status = index.status()
        assert status.files == 3000
        assert status.chunks == status.vectors == 3000 * 4
        assert index.store.integrity_problems() == []
        # No duplicates: each (file, position) appears once.
        dupes = index.conn.execute(
            "SELECT count(*) FROM (SELECT file_id, position FROM chunks GROUP BY 1, 2 HAVING count(*) > 1)"
        ).fetchall()[0][0]
        assert dupes == 0
        assert index.search("note 2999 discusses item 3", mode="bm25").results[0].path == "area3/note-02999.md"


def test_ctrl_c_finishes_the_current_file_and_stops(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    db = tmp_path / "index.db"
    make_vault(vault, 3000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultseek.cli", "index", str(vault), "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while indexed_files(db) < 200:
        assert proc.poll() is None
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out.startswith("Stopped after ") and "run the same command again to continue" in out
    assert "Traceback" not in err
    with open_index(vault, db=db) as index:
        assert index.store.integrity_problems() == []
        partial = index.status().files
        assert partial < 3000
        # The next run carries on where this one stopped: nothing already written is redone.
        report = index.sync()
        assert (report.added, report.updated, report.unchanged) == (3000 - partial, 0, partial)
        assert report.chunks_written == (3000 - partial) * 4


def test_a_failure_mid_batch_rolls_the_whole_batch_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are committed a batch at a time (``Store.batch``): when writing one file fails,
    none of its batch is kept half-done, earlier batches stay, and the next run indexes the
    rest. (The failure is injected into the real store; everything else is real.)"""
    from vaultseek.index.sync import _BATCH_FILES
    from vaultseek.storage.store import Store

    vault, db = tmp_path / "vault", tmp_path / "index.db"
    make_vault(vault, _BATCH_FILES + 20)
    real = Store.replace_file
    calls = {"n": 0}

    def failing(self: Store, path: str, **kwargs: object) -> None:
        calls["n"] += 1
        if calls["n"] == _BATCH_FILES + 5:  # the fifth file of the second batch
            raise OSError("disk went away")
        real(self, path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "replace_file", failing)
    with open_index(vault, db=db, create=True) as index, pytest.raises(OSError):
        index.sync()
    assert indexed_files(db) == _BATCH_FILES  # the first batch, and nothing of the second
    with apsw.Connection(str(db)) as conn:
        orphans = conn.execute("SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)").fetchall()
        assert orphans[0][0] == 0
    monkeypatch.setattr(Store, "replace_file", real)
    with open_index(vault, db=db) as index:
        report = index.sync()
        assert report.added == 20
        assert index.status().files == _BATCH_FILES + 20
        assert [r.path for r in index.search("Note 70 discusses item 2", mode="bm25", k=1).results] == ["area0/note-00070.md"]


def test_a_stop_just_after_the_schema_commits_stays_a_stop(tmp_path: Path) -> None:
    """SIGTERM's handler raises ``SystemExit`` at the next bytecode, which may be just after
    the schema's COMMIT returned: the stop propagates (``serve --demo`` exits 143), not a
    failed ROLLBACK of a transaction that is no longer open."""
    from vaultseek.storage.migrations import SCHEMA_VERSION, migrate

    class StoppedAfterCommit:
        def __init__(self, conn: apsw.Connection) -> None:
            self.conn = conn

        def __getattr__(self, name: str) -> object:
            return getattr(self.conn, name)

        def execute(self, sql: str, *args: object) -> object:
            cursor = self.conn.execute(sql, *args)
            if sql == "COMMIT":
                raise SystemExit(128 + signal.SIGTERM)
            return cursor

    conn = apsw.Connection(str(tmp_path / "index.db"))
    with pytest.raises(SystemExit):
        migrate(StoppedAfterCommit(conn))  # type: ignore[arg-type]
    assert conn.execute("PRAGMA user_version").fetchall() == [(SCHEMA_VERSION,)]
