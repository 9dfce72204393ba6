"""Opening the index database: the one module that imports ``apsw``.

apsw rather than the standard ``sqlite3`` because many Pythons (this machine's, pyenv builds,
some macOS builds) ship an SQLite that cannot load extensions or lacks a current FTS5; apsw
bundles its own SQLite. WAL mode gives one writer and any number of readers who never block.
"""

from __future__ import annotations

import time
from pathlib import Path

import apsw

from ..errors import (
    IndexAccessError,
    IndexBusyError,
    IndexCorruptError,
    IndexNotFoundError,
    VaultseekError,
)

BUSY_TIMEOUT_MS = 5_000

Connection = apsw.Connection
BusyError = apsw.BusyError
FTS5_TOKENIZE_QUERY = apsw.FTS5_TOKENIZE_QUERY
FTS5Tokenizer = apsw.FTS5Tokenizer


def open_connection(path: Path, *, create: bool) -> apsw.Connection:
    """Open (and, with ``create``, make) the database at ``path`` with vaultseek's pragmas.

    Raises :class:`IndexNotFoundError` when it is missing and ``create`` is false,
    :class:`IndexCorruptError` when the file is not an SQLite database.
    """
    if not create and not path.exists():
        raise IndexNotFoundError(
            f"no index at {path}", hint="run `vaultseek index <folder>` first"
        )
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexAccessError(
                f"cannot create the folder for the index {path}: {exc.strerror}",
                hint="pass a --db path in a folder you can write to",
            ) from exc
    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    try:
        conn = apsw.Connection(str(path), flags=flags)
    except apsw.Error as exc:
        raise translate(exc, path) from exc
    try:
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        _configure_until_unlocked(conn, create=create)
    except apsw.Error as exc:
        conn.close()
        raise translate(exc, path) from exc
    return conn


def _configure_until_unlocked(conn: apsw.Connection, *, create: bool) -> None:
    """Apply the pragmas, trying again while another connection holds the write lock.

    The busy timeout does not cover this: on a brand-new file ``journal_mode=WAL`` rewrites
    the header and then, inside the same statement, upgrades a read lock to a write lock,
    where SQLite answers SQLITE_BUSY at once instead of waiting (waiting while holding a
    read lock could deadlock). So a second connection creating the schema at that moment
    (the study app's warm-up reader next to its writer) made the open fail with "database
    is locked" within milliseconds. The failed statement leaves no lock behind and the
    pragmas are idempotent, so trying again after a short pause is safe; the whole wait is
    bounded by the same BUSY_TIMEOUT_MS."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.002
    while True:
        try:
            _configure(conn, create=create)
            return
        except apsw.BusyError:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)


def _configure(conn: apsw.Connection, *, create: bool) -> None:
    if create and not conn.execute("PRAGMA page_count").fetchall()[0][0]:
        # Only settable before the first table: lets `Store.optimize` shrink the file
        # after large deletions instead of keeping free pages forever.
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-32000")
    conn.execute("PRAGMA mmap_size=268435456")  # reads straight from the page cache


def translate(exc: BaseException, path: Path) -> BaseException:
    """Map an apsw error met while using the database at ``path`` to a vaultseek error with
    a hint; anything else is returned unchanged."""
    if isinstance(exc, VaultseekError) or not isinstance(exc, apsw.Error):
        return exc
    if isinstance(exc, apsw.BusyError):
        return IndexBusyError(
            f"the index {path} stayed locked for {BUSY_TIMEOUT_MS // 1000} s",
            hint="another vaultseek is writing to it; try again when it is done",
        )
    if isinstance(exc, (apsw.NotADBError, apsw.CorruptError)):
        return IndexCorruptError(
            f"{path} is not a usable vaultseek index ({exc.__class__.__name__})",
            hint="if it is an old vaultseek index, delete it and run `vaultseek index` to "
            "rebuild it; otherwise pass another --db",
        )
    if isinstance(exc, apsw.CantOpenError):
        return IndexNotFoundError(
            f"cannot open the index at {path}", hint="check the path and its permissions"
        )
    if isinstance(exc, (apsw.ReadOnlyError, apsw.FullError, apsw.IOError, apsw.PermissionsError)):
        reason = {
            apsw.ReadOnlyError: "it is read-only",
            apsw.FullError: "the disk is full",
            apsw.PermissionsError: "permission denied",
        }.get(type(exc), f"an I/O error occurred ({exc})")
        return IndexAccessError(
            f"cannot write the index {path}: {reason}",
            hint="free space or fix permissions, or pass another --db",
        )
    return exc
