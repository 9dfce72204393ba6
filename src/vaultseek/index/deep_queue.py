"""The deep tier's queue: one background worker for all of a user's indexes.

``vaultseek index`` (and the study app after an upload, and ``vaultseek intake``) leave the
deep vectors of what they wrote to a background worker (``agents/deep_worker.py``). They do not
start a worker each: they add their index to this user's queue and start the worker only when
none runs, so four vaults indexed in a row make one process that serves all four, not four
processes competing for two cores.

Everything lives in ``$XDG_STATE_HOME/vaultseek/deep/`` (folder 0700, files 0600):

- ``queue.json``: the queued indexes — what it takes to open each again (vault, index file or
  PostgreSQL URL without its password, collection, config file) — and whether the queue is
  paused. Read-modify-write happens under ``queue.lock`` (an ``flock``), and the file is
  replaced whole, so a reader never sees half of it.
- ``worker.lock``: held by the running worker for as long as it runs, naming its pid (the
  kernel releases it when the process ends in any way, so no stale worker is ever counted).
- ``worker.log``: what the worker has to say (indexes it finished or dropped, errors).

Two rules keep exactly one worker and never a stranded queue. A starter takes ``worker.lock``
itself before it starts the worker process and hands the locked file to the child, so a
second starter sees the lock held from the first moment. And a worker that runs out of work
lets go of ``worker.lock`` only while it holds ``queue.lock``, after a last look at the queue:
an index queued a moment earlier is either seen by that look or sees no worker and starts one.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Literal

from ..config import VAULT_CONFIG_NAME, Config
from ..places import config_home, display_url, state_home
from ..storage.writer_lock import find_holder, is_locked, name_holder, try_lock

LOG_BYTES = 256 * 1024
"""worker.log is rotated to worker.log.1 past this size."""
WORKER_COMMAND = "vaultseek deep --worker"


@dataclass(frozen=True, slots=True)
class QueuedIndex:
    """One index waiting for deep vectors, and what it takes to open it again."""

    vault: str
    db: str
    """``Config.db``: the SQLite file, or the local file that stands for a PostgreSQL index
    (the key of the queue: one entry per index)."""
    collection: str
    database_url: str | None = None
    """The PostgreSQL database, without its password (the worker reads that from
    ``~/.pgpass`` or the ``PGPASSWORD`` it was started with); None for SQLite."""
    config_file: str | None = None
    """The ``--config`` file the index was opened with (absolute), if any."""
    queued_at: float = 0.0

    @classmethod
    def of(cls, config: Config) -> QueuedIndex:
        assert config.vault is not None and config.db is not None
        return cls(
            vault=str(config.vault), db=str(config.db), collection=config.collection,
            database_url=None if config.database_url is None else display_url(config.database_url),
            config_file=_named_config_file(config), queued_at=round(time.time(), 3),
        )  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QueuedIndex | None:
        """The entry ``data`` describes, or None when it is not one (a hand-edited file)."""
        try:
            return cls(
                vault=str(data["vault"]), db=str(data["db"]), collection=str(data["collection"]),
                database_url=data.get("database_url") or None, config_file=data.get("config_file") or None,
                queued_at=float(data.get("queued_at") or 0.0),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None

    def gone(self) -> str | None:
        """Why this index is gone, found without opening it (its vault folder, its SQLite
        file), or None. An open connection keeps reading a deleted file, so the worker asks
        this every time."""
        if not Path(self.vault).is_dir():
            return f"the vault folder {self.vault} is gone"
        if self.database_url is None and not Path(self.db).exists():
            return f"the index {self.db} is gone"
        return None

    @property
    def label(self) -> str:
        """How messages name the index: its file, or ``URL (collection NAME)``."""
        if self.database_url is None:
            return self.db
        return f"{self.database_url} (collection {self.collection})"


def _named_config_file(config: Config) -> str | None:
    """The config file ``config`` was loaded with by name (``--config``), if any: the one
    among its sources that is neither the user's default file nor the vault's own, which
    loading the vault again finds by themselves."""
    assert config.vault is not None
    found = {config_home() / "config.toml", config.vault / VAULT_CONFIG_NAME}
    named = [source for source in config.sources if Path(source) not in found]
    return str(Path(named[0]).resolve()) if named else None


@dataclass(slots=True)
class QueueState:
    """The queue as ``queue.json`` holds it."""

    entries: list[QueuedIndex] = field(default_factory=list)
    paused: bool = False

    def find(self, db: str | os.PathLike[str]) -> QueuedIndex | None:
        key = str(db)
        return next((entry for entry in self.entries if entry.db == key), None)

    def remove(self, db: str | os.PathLike[str]) -> bool:
        before = len(self.entries)
        self.entries = [entry for entry in self.entries if entry.db != str(db)]
        return len(self.entries) != before


@dataclass(frozen=True, slots=True)
class Enqueued:
    """What :func:`enqueue` (or :func:`resume`) did: the worker's pid when it started one
    (None: one was running already, or the queue is paused), whether a worker runs now, the
    queue's length, and the indexes :func:`resume` took out of it because they are gone, each
    with why."""

    started: int | None
    running: bool
    paused: bool
    queued: int
    dropped: tuple[tuple[QueuedIndex, str], ...] = ()


# -- where things are ------------------------------------------------------------------------
def deep_dir(*, create: bool = False) -> Path:
    folder = state_home() / "deep"
    if create:
        folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.mkdir(exist_ok=True, mode=0o700)
    return folder


def queue_path() -> Path:
    return deep_dir() / "queue.json"


def worker_lock_path() -> Path:
    return deep_dir() / "worker.lock"


def log_path() -> Path:
    return deep_dir() / "worker.log"


# -- the queue file --------------------------------------------------------------------------
def load_queue() -> QueueState:
    """The queue as it is now (empty when there is none yet or the file is unreadable)."""
    try:
        data = json.loads(queue_path().read_text("utf-8"))
    except (OSError, ValueError):
        return QueueState()
    if not isinstance(data, dict):
        return QueueState()
    raw = data.get("indexes")
    found = [QueuedIndex.from_dict(item) for item in raw if isinstance(item, dict)] if isinstance(raw, list) else []
    return QueueState(entries=[entry for entry in found if entry is not None], paused=bool(data.get("paused")))


def _save_queue(state: QueueState) -> None:
    path = queue_path()
    scratch = path.with_name(path.name + ".tmp")
    text = json.dumps({"paused": state.paused, "indexes": [asdict(entry) for entry in state.entries]}, indent=2)
    fd = os.open(scratch, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text + "\n")
    scratch.replace(path)


@contextmanager
def locked_queue() -> Iterator[QueueState]:
    """The queue for reading and changing: held under ``queue.lock`` for the ``with`` block
    and written back at its end if it changed."""
    deep_dir(create=True)
    fd = os.open(deep_dir() / "queue.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for milliseconds by whoever has it
        state = load_queue()
        before = (list(state.entries), state.paused)
        yield state
        if (state.entries, state.paused) != before:
            _save_queue(state)
    finally:
        os.close(fd)  # releases the lock


# -- the worker ------------------------------------------------------------------------------
def worker_running() -> bool:
    return is_locked(worker_lock_path())


def worker_pid() -> int | None:
    """The running worker's pid (None: none runs, or it has not named itself yet)."""
    if not worker_running():
        return None
    return find_holder(worker_lock_path()).pid


def engine_threads(threads: int) -> str:
    """``2 engine threads``, as the worker's log and its lock name them."""
    return f"{threads} engine thread{'s' if threads > 1 else ''}"


def worker_name(threads: int) -> str:
    """What the worker calls itself in its lock once it knows its engine threads."""
    return f"{WORKER_COMMAND}, {engine_threads(threads)}"


def running_threads() -> int | None:
    """The running worker's engine threads (None: none runs, or it has not said yet)."""
    if not worker_running():
        return None
    found = re.search(r", (\d+) engine threads?$", find_holder(worker_lock_path()).command or "")
    return int(found.group(1)) if found else None


def enqueue(config: Config) -> Enqueued:
    """Queue ``config``'s index for the background worker (once: queuing it again keeps its
    place, with what it takes to open it as ``config`` says now) and start the worker unless
    one runs or the queue is paused."""
    entry = QueuedIndex.of(config)
    with locked_queue() as state:
        found = state.find(entry.db)
        if found is None:
            state.entries.append(entry)
        else:
            state.entries[state.entries.index(found)] = replace(entry, queued_at=found.queued_at)
        started = None if state.paused else _start_worker()
        return Enqueued(started=started, running=started is not None or worker_running(),
                        paused=state.paused, queued=len(state.entries))  # fmt: skip


def resume() -> Enqueued:
    """Lift a pause, take the indexes that are gone (their vault folder or SQLite file
    deleted) out of the queue, saying so in ``worker.log``, and start the worker when
    something is left and none runs."""
    with locked_queue() as state:
        state.paused = False
        dropped = tuple((entry, why) for entry in state.entries if (why := entry.gone()) is not None)
        for entry, why in dropped:
            state.remove(entry.db)
            log_line(f"dropped {entry.vault} ({entry.label}) from the queue: {why}")
        started = _start_worker() if state.entries else None
        return Enqueued(started=started, running=started is not None or worker_running(),
                        paused=False, queued=len(state.entries), dropped=dropped)  # fmt: skip


def pause() -> QueueState:
    """Pause the queue: no worker starts until :func:`resume` (the running one is asked to
    stop by the caller)."""
    with locked_queue() as state:
        state.paused = True
        return state


def paused() -> bool:
    return load_queue().paused


def queue_state(db: str | os.PathLike[str]) -> Literal["paused", "queued", "waiting"] | None:
    """Where the index at ``db`` stands in the queue: ``paused``, ``queued`` (a worker runs
    and will get to it), ``waiting`` (queued, but no worker runs: the next ``index`` or
    ``vaultseek deep --resume`` starts one), or None when it is not queued."""
    state = load_queue()
    if state.find(db) is None:
        return None
    if state.paused:
        return "paused"
    return "queued" if worker_running() else "waiting"


def _start_worker() -> int | None:
    """Start the worker process unless one runs (the caller holds ``queue.lock``); its pid.

    The worker lock is taken here and the locked file handed to the child, which holds it from
    its first instruction: a second starter a moment later sees a worker, not a free lock."""
    lock = try_lock(worker_lock_path())
    if lock is None:
        return None
    try:
        command = [sys.executable, "-m", "vaultseek", "deep", "--worker", f"--lock-fd={lock.fileno()}"]
        try:
            with open_log() as log:
                child = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                    start_new_session=True, close_fds=True, pass_fds=(lock.fileno(),),
                )  # fmt: skip
        except OSError:  # no process could be started: the work waits for the next start
            return None
        name_holder(lock, pid=child.pid, command=WORKER_COMMAND)
        return child.pid
    finally:
        lock.close()  # the child's copy keeps the lock


def worker_threads(setting: int | None) -> int:
    """The background worker's engine threads: ``setting`` (``deep_threads``), else half the
    cores this process may use, at least one. The worker runs at idle priority and rests while
    searches and hooks run, so the other half stays the user's even when it works."""
    if setting:
        return setting
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // 2)


def adopt_worker_lock(fd: int | None) -> IO[bytes] | None:
    """The worker lock for this worker process: the locked file its starter handed over as
    ``fd``, or (run by hand, ``fd`` None) taken now; None when another worker holds it."""
    if fd is None:
        deep_dir(create=True)
        lock = try_lock(worker_lock_path())
        if lock is not None:
            name_holder(lock, command=WORKER_COMMAND)
        return lock
    os.set_inheritable(fd, False)
    return os.fdopen(fd, "r+b", buffering=0)


def release_when_idle(lock: IO[bytes], has_work: Any) -> bool:
    """Let go of the worker lock if ``has_work(state)`` finds nothing left in the queue,
    judged under ``queue.lock`` so that nothing queued meanwhile is stranded; True when it
    let go (the worker then exits)."""
    with locked_queue() as state:
        if not state.paused and has_work(state):
            return False
        lock.close()
        return True


def drop(db: str | os.PathLike[str], *, unless: Callable[[], bool] | None = None) -> bool:
    """Take the index at ``db`` out of the queue (its deep vectors are complete, or it is
    gone), unless ``unless()``, asked under the queue's lock, says to keep it: a worker asks
    whether work arrived since it looked, which a ``vaultseek index`` that queued it again a
    moment ago would otherwise lose. True when it was taken out."""
    with locked_queue() as state:
        if unless is not None and unless():
            return False
        return state.remove(db)


def log_line(message: str) -> None:
    """Add ``message`` to worker.log as a line, with the time and this process's pid."""
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()} {message}\n"
    with open_log() as handle:
        handle.write(line.encode("utf-8", "replace"))


@contextmanager
def open_log() -> Iterator[IO[bytes]]:
    """worker.log for appending (rotated when large), 0600."""
    path = log_path()
    deep_dir(create=True)
    try:
        if path.stat().st_size > LOG_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    except OSError:
        pass
    fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "ab") as log:
        yield log
