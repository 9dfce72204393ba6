"""An index this user cannot write: searched, shown and explored read-only; indexing it, or an
upgrade of its schema, exits 7 with a clear line.

The commands run as a user would, in a child process. Root writes through any chmod, so as
root the child drops to the unprivileged user ``nobody`` (``setpriv``), and the files live in a
temporary folder outside pytest's private one, where that user can reach them.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from vaultseek import open_index
from vaultseek.errors import IndexAccessError
from vaultseek.storage.migrations import SCHEMA_VERSION

NOBODY = 65534
NOTES = {
    "tokens.md": "# Token rotation\n\nRotate oauth refresh tokens on every use; see [[bread]].\n",
    "bread.md": "# Sourdough\n\nFeed the starter twice a day and keep it warm.\n",
}


@dataclass
class ReadOnlyIndex:
    root: Path
    vault: Path
    db: Path
    env: dict[str, str]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``vaultseek ARGS --vault … --db …`` as a user who cannot write the index."""
        prefix = []
        if os.geteuid() == 0:
            prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        return subprocess.run(
            [*prefix, sys.executable, "-m", "vaultseek.cli.launcher", *args,
             "--vault", str(self.vault), "--db", str(self.db)],
            capture_output=True, text=True, env=self.env, cwd=self.root, timeout=120, check=False,
        )  # fmt: skip


@pytest.fixture
def built() -> Iterator[ReadOnlyIndex]:
    """A vault and its index, built by this process in a folder anyone can reach, with a home
    (XDG folders) the reader can write to."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: no way to be a user a chmod stops")
    with tempfile.TemporaryDirectory(prefix="vaultseek-ro-") as scratch:
        root = Path(scratch)
        root.chmod(0o755)
        vault, folder, home = root / "vault", root / "index", root / "home"
        for path in (vault, folder, home):
            path.mkdir()
        for name, text in NOTES.items():
            (vault / name).write_text(text, "utf-8")
        db = folder / "vault.db"
        with open_index(vault, db=db, create=True) as index:
            index.sync(remember=False)
        home.chmod(0o777)
        env = {**os.environ, "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config"),
               "XDG_STATE_HOME": str(home / "state"), "XDG_RUNTIME_DIR": str(home), "HOME": str(home)}  # fmt: skip
        try:
            yield ReadOnlyIndex(root, vault, db, env)
        finally:
            for path in root.rglob("*"):  # the reader's files, and what the test locked
                if not path.is_symlink():
                    path.chmod(0o777 if path.is_dir() else 0o666)


def lock(built: ReadOnlyIndex, *, folder: bool) -> None:
    """Make the index file read-only, and its folder too when ``folder``."""
    built.db.chmod(0o444)
    built.db.parent.chmod(0o555 if folder else 0o777)
    for name in ("-wal", "-shm"):  # a clean close leaves neither
        assert not Path(f"{built.db}{name}").exists()


def check_reads(built: ReadOnlyIndex) -> None:
    search = built.run("search", "rotate refresh tokens", "--json", "--no-daemon")
    assert search.returncode == 0, search.stderr
    assert json.loads(search.stdout)["results"][0]["path"] == "tokens.md"
    for query in ('"refresh tokens" rotate', "rotate tokens -starter"):  # an exclusion's table is temporary
        operators = built.run("search", query, "--json", "--no-daemon")
        assert operators.returncode == 0, operators.stderr
        assert {r["path"] for r in json.loads(operators.stdout)["results"]} == {"tokens.md"}, query
    status = built.run("status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["files"] == 2
    links = built.run("links", "tokens.md", "--json")
    assert links.returncode == 0, links.stderr
    assert "bread.md" in links.stdout
    related = built.run("related", "tokens.md", "--json")
    assert related.returncode == 0, related.stderr
    assert "bread.md" in related.stdout


def test_a_read_only_file_in_a_read_only_folder_is_searched(built: ReadOnlyIndex) -> None:
    """No ``-shm`` can be made beside it, so the index is read as an immutable file."""
    lock(built, folder=True)
    check_reads(built)
    made = sorted(p.name for p in built.db.parent.iterdir())
    assert made == ["vault.db", "vault.db.writer.lock"]  # the read made nothing; the lock is the build's


def test_a_read_only_file_in_a_writable_folder_is_searched(built: ReadOnlyIndex) -> None:
    """SQLite's ``-shm`` can be made beside it: the index is read through its write-ahead log."""
    lock(built, folder=False)
    check_reads(built)
    assert Path(f"{built.db}-shm").exists()  # mode=ro used the shared-memory file


@pytest.mark.parametrize("folder", [True, False])
def test_indexing_a_read_only_index_exits_7(built: ReadOnlyIndex, folder: bool) -> None:
    lock(built, folder=folder)
    before = built.db.read_bytes()
    result = built.run("index")
    assert result.returncode == 7, result.stderr
    assert result.stderr.startswith(f"error: cannot write the index {built.db}: ")
    assert "read-only" in result.stderr and "hint:" in result.stderr and "Traceback" not in result.stderr
    assert built.db.read_bytes() == before


def test_a_read_only_index_that_needs_a_migration_exits_7(built: ReadOnlyIndex) -> None:
    with sqlite3.connect(built.db) as conn:  # an index from the vaultseek before the latest schema
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION - 1}")
    conn.close()
    lock(built, folder=True)
    result = built.run("search", "tokens", "--no-daemon")
    assert result.returncode == 7, result.stderr
    assert "upgrade" in result.stderr and "hint:" in result.stderr


def test_read_only_when_asked(sample_vault: Path, tmp_path: Path) -> None:
    """The engine's own switch, as any caller can use it: reads work, writes are refused, and
    nothing is written (no ``-wal``/``-shm`` files, the file unchanged)."""
    db = tmp_path / "i.db"
    with open_index(sample_vault, db=db, create=True) as index:
        index.sync()
    before = db.read_bytes()
    with open_index(sample_vault, db=db, read_only=True) as index:
        assert index.read_only
        assert index.search("refresh token", k=1).results[0].path == "security/oauth.md"
        assert index.status().files == 4
        with pytest.raises(IndexAccessError, match="read-only"):
            index.sync()
    assert db.read_bytes() == before
    with open_index(sample_vault, db=db) as index:  # writable: opened for writing
        assert not index.read_only
    assert stat.S_IMODE(db.stat().st_mode) & 0o200
