"""Lock files beside an index: one writer at a time — the one module that imports ``fcntl``.

Every process that writes an index's files and notes — ``vaultseek index``, ``watch``, the
daemon's watcher, ``intake``, the study app — does so inside :meth:`Index.sync`, which holds
the index's writer lock (:func:`writer_lock`) for the whole run. A second writer waits for it
(saying who holds it, through ``on_wait``), gives up after ``timeout`` seconds with
:class:`IndexBusyError`, or stops waiting when its ``should_stop`` says so. SQLite alone
would let two runs interleave their transactions: each stays consistent, but both walk the
vault, both re-chunk and re-embed the same files, and each one's report counts the other's
work.

The lock is an exclusive ``flock`` on ``<db>.writer.lock``, created 0600 like the database.
The kernel releases it when its holder closes the file or dies in any way (``kill -9``, a
power cut), so no lock outlives its process and there is nothing stale to clean up. The
holder writes its pid, command line and start time into the file, for a waiter to name, and
clears them as it lets go; the file's content means nothing while nobody holds the lock (and a
process that is gone is never named).

The deep tier's job (``index/deepening.py``) takes its own lock, ``<db>.deep.lock``, with
:func:`try_lock`: deep vectors are written beside syncs by design, one job at a time. So does
a watcher (``agents/watch.py``), for as long as it runs: one watcher per index.
``Index.forget`` (the study app dropping a deleted upload's rows) is one short transaction
that does not wait for a sync, which could hold the app's request for minutes: a sync that
read the file before it was deleted may write it back, and the next sync removes it.

A backend whose database is a server (PostgreSQL's advisory locks, say) provides its own
:class:`WriterLock`; the sync code only ever calls ``with writer_lock(...)``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from ..errors import IndexAccessError, IndexBusyError

POLL_SECONDS = 0.1
"""How often a waiting writer tries the lock again (``flock`` cannot wait with a timeout)."""
NAME_WAIT_SECONDS = 0.5
"""How long a waiter gives a fresh holder to write its name before saying "another process"."""
_MAX_COMMAND = 300
"""Characters of the holder's command line kept in the lock file."""


@dataclass(frozen=True, slots=True)
class LockHolder:
    """Who holds a lock, as its lock file says: pid, command line, since when (epoch
    seconds). All None when the holder has not said (yet), or the file cannot be read."""

    pid: int | None = None
    command: str | None = None
    since: float | None = None

    def describe(self, *, now: float | None = None) -> str:
        """``pid 4242 (vaultseek index ~/notes), for 12 s`` or ``another process``."""
        if self.pid is None:
            return "another process"
        text = f"pid {self.pid}" + (f" ({self.command})" if self.command else "")
        if self.since is not None:
            seconds = max(0, round((time.time() if now is None else now) - self.since))
            text += f", for {seconds} s"
        return text


WaitCallback = Callable[[LockHolder], None]
StopCheck = Callable[[], bool]


class WriterLock(Protocol):
    """What the sync code calls for an index's writer lock: a context manager that yields
    True once this process is the index's one writer, or False when ``should_stop`` ended
    the wait first. Raises :class:`IndexBusyError` after ``timeout`` seconds (None: wait as
    long as it takes; 0: do not wait). ``on_wait`` hears who holds the lock when this process
    has to wait, and again whenever the holder changes."""

    def __call__(
        self,
        *,
        timeout: float | None = None,
        on_wait: WaitCallback | None = None,
        should_stop: StopCheck | None = None,
    ) -> AbstractContextManager[bool]: ...


def writer_lock_path(db: Path) -> Path:
    """The writer lock's file, beside the database."""
    return db.with_name(db.name + ".writer.lock")


def file_writer_lock(db: Path) -> WriterLock:
    """The :class:`WriterLock` of the SQLite index at ``db``."""

    def lock(
        *,
        timeout: float | None = None,
        on_wait: WaitCallback | None = None,
        should_stop: StopCheck | None = None,
    ) -> AbstractContextManager[bool]:
        return writer_lock(db, timeout=timeout, on_wait=on_wait, should_stop=should_stop)

    return lock


@contextmanager
def writer_lock(
    db: Path,
    *,
    timeout: float | None = None,
    on_wait: WaitCallback | None = None,
    should_stop: StopCheck | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[bool]:
    """Hold the writer lock of the index at ``db`` for the ``with`` block (see
    :class:`WriterLock` for the arguments and what it yields)."""
    handle = _wait_for(db, timeout=timeout, on_wait=on_wait, should_stop=should_stop, clock=clock)
    if handle is None:
        yield False
        return
    try:
        _write_holder(handle)
        yield True
    finally:
        _release(handle)


def _wait_for(
    db: Path,
    *,
    timeout: float | None,
    on_wait: WaitCallback | None,
    should_stop: StopCheck | None,
    clock: Callable[[], float],
) -> IO[bytes] | None:
    """The locked file, or None when ``should_stop`` ended the wait."""
    path = writer_lock_path(db)
    try:
        handle = _open(path)
    except OSError as exc:
        raise IndexAccessError(
            f"cannot create the index's lock file {path}: {exc.strerror}",
            hint="make its folder writable, or pass another --db",
        ) from exc
    started = clock()
    told: LockHolder | None = None
    try:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle
            except BlockingIOError:
                pass
            waited = clock() - started
            holder = find_holder(path)
            named = holder.pid is not None and (told is None or holder.pid != told.pid)
            patient = timeout is None or timeout > 0  # `wait=0` fails at once: nothing to say first
            if on_wait is not None and patient and (named or (told is None and waited >= NAME_WAIT_SECONDS)):
                told = holder
                on_wait(holder)
            if should_stop is not None and should_stop():
                handle.close()
                return None
            if timeout is not None and waited >= timeout:
                raise IndexBusyError(
                    f"the index {db} is being written by "
                    f"{holder.describe()}; gave up after {timeout:g} s",
                    hint="try again when it is done, or wait longer (`vaultseek index --wait "
                    "SECONDS`; without --wait it waits as long as it takes)",
                )
            time.sleep(POLL_SECONDS if timeout is None else max(0.0, min(POLL_SECONDS, timeout - waited)))
    except BaseException:
        handle.close()
        raise


def _open(path: Path, *, or_read_only: bool = True) -> IO[bytes]:
    """The lock file opened for locking, created 0600 if missing. ``flock`` needs no write
    access, so a lock file this user cannot write (made by another account) is opened for
    reading with ``or_read_only``: it still locks, it only cannot name its holder."""
    try:
        return os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600), "r+b", buffering=0)
    except PermissionError:
        if not or_read_only:
            raise
        return os.fdopen(os.open(path, os.O_RDONLY | os.O_CLOEXEC), "rb", buffering=0)


def _write_holder(handle: IO[bytes], *, pid: int | None = None, command: str | None = None) -> None:
    """Write this process's name — or ``pid``'s and ``command``, a child's the lock was
    handed to — into the lock file it holds (best effort: a full disk or a read-only file
    leaves the holder unnamed, never the lock untaken)."""
    record = {
        "pid": os.getpid() if pid is None else pid,
        "command": _command_line() if command is None else command,
        "since": round(time.time(), 3),
    }
    try:
        os.ftruncate(handle.fileno(), 0)
        os.pwrite(handle.fileno(), (json.dumps(record) + "\n").encode("utf-8"), 0)
    except OSError:
        pass


def _release(handle: IO[bytes]) -> None:
    """Clear the holder's name, then let go (closing the file releases the lock). The file
    stays: removing it would let a waiter lock a file no longer there while a newcomer locks
    its replacement, and would be a deletion a watcher must look at when the index lies in the
    vault."""
    try:
        os.ftruncate(handle.fileno(), 0)
    except OSError:
        pass
    handle.close()


def _command_line() -> str:
    """This process's command line as a user would have typed it: ``vaultseek index ~/notes``
    rather than the interpreter and the path of ``__main__.py``."""
    argv = list(sys.argv) or [""]
    program = argv[0]
    if program in ("", "-c", "-m"):
        program = os.path.basename(sys.executable) + (f" {program}" if program else "")
    elif os.path.basename(program) in ("__main__.py", "main.py") and "vaultseek" in Path(program).parts:
        program = "vaultseek"
    else:
        program = os.path.basename(program)
    text = " ".join([program, shlex.join(argv[1:])]).strip()
    return text if len(text) <= _MAX_COMMAND else text[: _MAX_COMMAND - 1] + "…"


def find_holder(path: Path) -> LockHolder:
    """Who holds the lock at ``path``, as far as its file says (an empty :class:`LockHolder`
    when it does not say, or names a process that is gone)."""
    try:
        with open(path, "rb") as handle:
            record = json.loads(handle.read(4096) or b"null")
    except (OSError, ValueError):
        return LockHolder()
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        return LockHolder()
    pid = record["pid"]
    if not _alive(pid):  # a holder killed before the next one wrote its own name
        return LockHolder()
    command = record.get("command")
    since = record.get("since")
    return LockHolder(
        pid=pid,
        command=command if isinstance(command, str) else None,
        since=float(since) if isinstance(since, (int, float)) else None,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def try_lock(path: Path) -> IO[bytes] | None:
    """An exclusive lock on the file at ``path`` (created 0600), or None when another
    process holds it or this user cannot write the file (nor, then, what it guards).
    Released when the returned file is closed, or the process ends."""
    try:
        handle = _open(path, or_read_only=False)
    except OSError:
        return None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def name_holder(handle: IO[bytes], *, pid: int | None = None, command: str | None = None) -> None:
    """Name who holds the lock ``handle`` (from :func:`try_lock`) holds, for
    :func:`find_holder`: this process, or the child process ``pid`` it was passed on to."""
    _write_holder(handle, pid=pid, command=command)


def is_locked(path: Path) -> bool:
    """Whether some process holds the lock at ``path`` now (False when there is no file)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, after the test
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
    return False
