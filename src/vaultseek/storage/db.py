"""Opening the index database: the one module that imports ``apsw``.

apsw rather than the standard ``sqlite3`` because many Pythons (this machine's, pyenv builds,
some macOS builds) ship an SQLite that cannot load extensions or lacks a current FTS5; apsw
bundles its own SQLite. WAL mode gives one writer and any number of readers who never block.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from urllib.parse import quote

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
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The index's FTS5 tokenizer: the SQLite index is built with it, and the PostgreSQL
backend asks it for the terms it stores, so both index the same words."""
_tokenizer: FTS5Tokenizer | None = None
_tokenizer_lock = threading.Lock()


def fts5_tokens(text: str, *, query: bool, prefix: bool = False) -> list[str]:
    """``text``'s terms as the index's FTS5 tokenizer gives them (stemmed, folded), from an
    in-memory SQLite connection kept for the process: for a document, or for a query (and
    a prefix query's last token, as FTS5 treats it)."""
    global _tokenizer
    with _tokenizer_lock:
        if _tokenizer is None:
            name, *args = FTS_TOKENIZER.split()
            _tokenizer = apsw.Connection(":memory:").fts5_tokenizer(name, args)
        flags = (apsw.FTS5_TOKENIZE_QUERY | (apsw.FTS5_TOKENIZE_PREFIX if prefix else 0)) if query else apsw.FTS5_TOKENIZE_DOCUMENT
        tokens = _tokenizer(text.encode("utf-8"), flags, None)
    # With offsets (the default) each token is (start, end, text, *colocated); apsw's stub
    # types the result for every flag combination, so it allows a 2-tuple.
    return [t[2] for t in tokens]  # type: ignore[misc]


def open_connection(path: Path, *, create: bool, read_only: bool = False) -> apsw.Connection:
    """Open (and, with ``create``, make) the database at ``path`` with vaultseek's pragmas.

    An existing index this user cannot write (:func:`find_write_blocker`) is opened for
    reading only, as it is with ``read_only``: searching it needs no writes. Raises
    :class:`IndexNotFoundError` when it is missing and ``create`` is false,
    :class:`IndexAccessError` when ``create`` is asked of an index (or folder) that cannot be
    written, :class:`IndexCorruptError` when the file is not an SQLite database.
    """
    if create and read_only:
        raise ValueError("an index opened read-only cannot be created")
    if not create and not path.exists():
        raise IndexNotFoundError(
            f"no index at {path}", hint="run `vaultseek index <folder>` first"
        )
    blocker = None if read_only else find_write_blocker(path)
    if create and blocker is not None:
        raise IndexAccessError(
            f"cannot write the index {path}: {blocker}",
            hint="make it writable or pass another --db; `vaultseek search`, `status`, `links` "
            "and `related` can still read it",
        )
    if read_only or blocker is not None:
        return _open_read_only(path)
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _create_private(path)
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


def copy_database(conn: apsw.Connection, dest: Path) -> None:
    """Write a consistent copy of the database behind ``conn`` to ``dest`` (a new file; its
    write-ahead log included), as SQLite's online backup makes it."""
    target = apsw.Connection(str(dest))
    try:
        with target.backup("main", conn, "main") as backup:
            backup.step()
    finally:
        target.close()


def find_write_blocker(path: Path) -> str | None:
    """Why this user cannot write the index at ``path`` (a new one there, if there is none
    yet), or None. The folder counts too: in WAL mode SQLite keeps ``-wal`` and ``-shm``
    files beside the database. ``os.access`` answers for the user this process runs as, so
    for root only a read-only file system is a blocker, not a file's mode."""
    folder = path.parent
    try:
        if os.statvfs(path if path.exists() else folder).f_flag & os.ST_RDONLY:
            return "the file system is read-only"
    except OSError:  # the folder does not exist yet: creating it says what is wrong
        return None
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is read-only"
    if folder.exists() and not os.access(folder, os.W_OK):
        return f"its folder {folder} is read-only"
    return None


def _open_read_only(path: Path) -> apsw.Connection:
    """Open the index at ``path`` for reading only; no pragma that writes is applied.

    ``mode=ro`` first: it reads the write-ahead log, so it sees what a writer committed a
    moment ago, but it needs the ``-shm`` file, and cannot create one in a folder this user may
    not write to. Without one, ``immutable=1``: the main file alone, without locks. That is
    safe only while nobody writes, which holds here: a writer in WAL mode keeps a ``-shm``
    file, and the folder is closed to this user."""
    shared_memory = Path(f"{path}-shm")
    conn = None
    try:
        for option in ("mode=ro", "immutable=1"):
            conn = apsw.Connection(
                f"file:{quote(str(path.absolute()))}?{option}",
                flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
            )
            try:
                conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()  # opens the WAL
            except (apsw.ReadOnlyError, apsw.CantOpenError):
                conn.close()
                conn = None
                if option == "mode=ro" and not shared_memory.exists():
                    continue
                raise
            break
        assert conn is not None
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        _configure_reader(conn)
    except apsw.Error as exc:
        if conn is not None:
            conn.close()
        raise translate(exc, path) from exc
    return conn


def is_read_only(conn: apsw.Connection) -> bool:
    """Whether ``conn`` can only read its database (opened so, or SQLite had to)."""
    return bool(conn.readonly("main"))


def _create_private(path: Path) -> None:
    """Create a missing database file readable by its owner only (0600): notes' text lives
    in it, and SQLite gives its -wal and -shm files the same mode."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass


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
    _configure_reader(conn)


def _configure_reader(conn: apsw.Connection) -> None:
    """The pragmas that only shape this connection's reads (none writes to the file)."""
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
