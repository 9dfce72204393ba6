"""The deep tier's background worker: one process that serves every queued index in turn.

``vaultseek index`` queues its index (``index/deep_queue.py``) and starts this worker when
none runs. The worker works a slice at a time (:data:`SLICE_SECONDS`) on the queued index
whose notes are least covered — the smallest share of files whose opening has a deep vector —
so a small vault queued behind a large one is findable by meaning within minutes, not after
the large one is done. It takes an index out of the queue when every chunk has a deep vector,
or when the index or its vault is gone (a line in ``worker.log`` says which), and exits when
nothing is left.

It keeps out of the way of interactive work three ways: the operating system's idle priority
(Linux ``SCHED_IDLE``: it runs only on a core nobody else wants; elsewhere ``nice`` 19),
engine threads on half the cores at most (``deep_threads``), and a rest whenever a search,
hook or daemon request touched the activity marker in the last two seconds
(``index/activity.py``) — checked between batches of ~1 s.

An index whose deep job another process runs (the daemon's watcher, ``vaultseek deep``) is
passed over until it is free. An index that cannot be opened for a reason that may pass (a
PostgreSQL server down, a password refused) is set aside for this run and stays queued; the
next ``vaultseek index`` or ``vaultseek deep --resume`` tries it again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

from ..config import load_config
from ..engine import Index
from ..errors import (
    ConfigError,
    DatabaseAuthError,
    DatabaseUnavailableError,
    EmbeddingServerError,
    IndexAccessError,
    IndexCorruptError,
    IndexNotFoundError,
    ModelError,
    VaultNotFoundError,
    VaultseekError,
)
from ..index import deep_queue
from ..index.activity import interactive_recently
from ..index.deep_queue import QueuedIndex, QueueState
from ..records import DeepQueueEntry, DeepWorkerStatus

if TYPE_CHECKING:
    from ..embeddings.deep import DeepModel

SLICE_SECONDS = 10.0
"""Work on one index before choosing again (a few batches; the choice costs two counts)."""
REST_SECONDS = 0.25
"""How often a resting worker looks again (at the activity marker, a stop, the queue)."""
BUSY_SECONDS = 5.0
"""An index whose job another process holds is looked at again after this long."""
SERVER_WAIT_SECONDS = (15.0, 30.0, 60.0, 120.0, 300.0)
"""An index whose embedding server failed is tried again after these waits, one per failure
in a row (the last repeats): the job pauses while the server is away and resumes by itself."""

Log = Callable[[str], None]
StopCheck = Callable[[], bool]
GONE = (IndexNotFoundError, IndexCorruptError, IndexAccessError, VaultNotFoundError)
"""Errors opening an index that mean it is gone (its database, collection or vault), or can
no longer be written by this user: the worker drops it from the queue."""
PASSING = (DatabaseUnavailableError, DatabaseAuthError)
"""Errors that may pass (a server down, a password not found): the index stays queued."""


def lower_priority() -> str:
    """Make this process yield the processor to everything else: ``SCHED_IDLE`` on Linux,
    else the lowest ``nice``; and, on Linux, its autogroup's ``nice`` 19. Returns what it
    did (for the log). Threads started afterwards (the engine's) inherit it.

    The autogroup matters: Linux shares the processor fairly between sessions first
    (``/proc/sys/kernel/sched_autogroup_enabled``), and a policy or ``nice`` counts only
    within the session. The worker runs in a session of its own (it outlives whoever started
    it), so without this its one thread competed with an agent's hooks as an equal: measured,
    cold hooks 1.3–1.4× slower while it embedded. Only a session leader changes it: run by
    hand, the worker leaves its terminal's session alone."""
    done = []
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        done.append("SCHED_IDLE")
    except (AttributeError, OSError):
        try:
            os.nice(19 - os.nice(0))
            done.append("nice 19")
        except OSError:
            done.append("normal priority (could not lower it)")
    if os.getsid(0) == os.getpid():
        try:
            Path("/proc/self/autogroup").write_text("19", "ascii")
            done.append("autogroup nice 19")
        except OSError:
            pass
    return ", ".join(done)


@dataclass
class _Served:
    """A queued index the worker has open."""

    entry: QueuedIndex
    index: Index
    busy_until: float = 0.0
    server_failures: int = 0
    """Failures of its embedding server in a row (the next wait grows with them)."""


class DeepWorker:
    """Serves the queue until it is empty, ``should_stop`` says so, or the queue is paused.

    ``log`` hears one line per event worth keeping (an index finished, dropped or set aside,
    an error); ``resting`` says whether interactive work wants the machine (tests pass their
    own); ``sleep`` waits (tests pass a fast one)."""

    def __init__(
        self,
        *,
        should_stop: StopCheck,
        log: Log,
        resting: Callable[[], bool] = interactive_recently,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.should_stop = should_stop
        self.log = log
        self.resting = resting
        self.sleep = sleep
        self.clock = clock
        self.embedded = 0
        """Texts embedded by this worker, over every index."""
        self._open: dict[str, _Served] = {}
        self._set_aside: set[str] = set()
        self._models: dict[tuple[str, str | None, str], DeepModel] = {}
        """Deep models loaded, by (``deep_model``, ``deep_url``, ``deep_prompts``): indexes
        that want the same model share one."""

    def run(self, lock: IO[bytes]) -> None:
        """Work until done; ``lock`` is the worker lock (released on the way out, under the
        queue's lock when the queue ran dry, so nothing queued meanwhile is stranded)."""
        try:
            while not self.should_stop():
                if self.resting():  # before anything else: even counting waits for quiet
                    self._rest(REST_SECONDS)
                    continue
                queue = deep_queue.load_queue()
                if queue.paused:
                    self.log("paused: stopping (`vaultseek deep --resume` starts the worker again)")
                    break
                ready, busy = self._rank(queue)
                if not ready:
                    if busy:  # another process runs those jobs; they may be left to us later
                        self._rest(BUSY_SECONDS)
                        continue
                    if deep_queue.release_when_idle(lock, self._has_work):
                        self.log(f"nothing left to embed: exiting ({self.embedded:,} texts embedded)")
                        return
                    continue
                self._work_on(ready[0])
            if self.should_stop():
                self.log(f"asked to stop: exiting, the queue kept ({self.embedded:,} texts embedded)")
        except ModelError as exc:
            self.log(f"the deep model cannot run here: {exc}; exiting, the queue kept")
        finally:
            for served in self._open.values():
                served.index.close()
            self._open.clear()
            lock.close()

    def _has_work(self, state: QueueState) -> bool:
        return any(entry.db not in self._set_aside for entry in state.entries)

    def _rest(self, seconds: float) -> None:
        end = self.clock() + seconds
        while not self.should_stop() and self.clock() < end:
            self.sleep(min(REST_SECONDS, max(0.0, end - self.clock())))

    # -- choosing -------------------------------------------------------------------------
    def _rank(self, queue: QueueState) -> tuple[list[_Served], bool]:
        """The queued indexes with work left that this worker can take now, least covered
        openings first (then fewest chunks left); and whether others wait for another job."""
        for db in list(self._open):
            if queue.find(db) is None:  # finished or dropped by another hand
                self._close(db)
        ranked: list[tuple[float, int, _Served]] = []
        busy = False
        now = self.clock()
        for entry in queue.entries:
            if entry.db in self._set_aside:
                continue
            served = self._served(entry)
            if served is None:
                continue
            if served.busy_until > now:
                busy = True
                continue
            store = served.index.store
            try:
                done, total = store.deep_progress()
                openings_done, openings = store.deep_opening_progress()
            except Exception as exc:  # noqa: BLE001 - a server gone mid-run: the next start tries again
                self._set(entry, f"{exc.__class__.__name__}: {exc}")
                continue
            if done >= total:
                self._finish(served, f"complete: {entry.vault} ({total:,} chunks)")
                continue
            share = openings_done / openings if openings else 1.0
            ranked.append((share, total - done, served))
        ranked.sort(key=lambda item: item[:2])
        return [served for _share, _left, served in ranked], busy

    def _served(self, entry: QueuedIndex) -> _Served | None:
        """The open index of ``entry``; None when it is gone (dropped) or cannot be opened now
        (set aside)."""
        gone = entry.gone()
        if gone is not None:
            self._drop(entry, gone)
            return None
        served = self._open.get(entry.db)
        if served is not None:
            return served
        try:
            index = _open(entry)
        except PASSING as exc:
            self._set(entry, str(exc))
            return None
        except (*GONE, ConfigError) as exc:  # a config file deleted since is gone too
            self._drop(entry, str(exc))
            return None
        except Exception as exc:  # noqa: BLE001 - one index that cannot be opened must not end the others' work
            self._set(entry, f"{exc.__class__.__name__}: {exc}")
            return None
        served = self._open[entry.db] = _Served(entry, index)
        return served

    # -- working --------------------------------------------------------------------------
    def _work_on(self, served: _Served) -> None:
        index = served.index
        key = (index.config.deep_model, index.config.deep_url, index.config.deep_prompts)
        try:
            report = index.deepen(
                model=self._models.get(key), seconds=SLICE_SECONDS,
                should_stop=lambda: self.should_stop() or self.resting(),
            )  # fmt: skip
            if key not in self._models:  # not setdefault: its argument would load each index's own copy
                self._models[key] = index.deep_model()
        except EmbeddingServerError as exc:  # the server is away or failing: pause, try later
            wait = SERVER_WAIT_SECONDS[min(served.server_failures, len(SERVER_WAIT_SECONDS) - 1)]
            served.server_failures += 1
            served.busy_until = self.clock() + wait
            self.log(f"paused {served.entry.vault}: {exc}; trying again in {wait:.0f} s")
            return
        except ModelError:
            raise
        except (IndexNotFoundError, IndexCorruptError) as exc:
            self._drop(served.entry, str(exc))
            return
        except VaultseekError as exc:  # a server gone, a disk full: the next start tries again
            self._set(served.entry, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - one index tripping a bug must not end the others' work
            self._set(served.entry, f"{exc.__class__.__name__}: {exc}")
            return
        if served.server_failures:
            self.log(f"resumed {served.entry.vault}: its embedding server answers again")
            served.server_failures = 0
        if report is None:  # another process runs this index's job now
            served.busy_until = self.clock() + BUSY_SECONDS
            return
        self.embedded += report.embedded
        if report.complete:
            self._finish(served, f"complete: {served.entry.vault} ({report.total:,} chunks)")

    def _finish(self, served: _Served, message: str) -> None:
        """Take a complete index out of the queue, unless a sync wrote chunks since."""

        def work_arrived() -> bool:
            done, total = served.index.store.deep_progress()
            return done < total

        if deep_queue.drop(served.entry.db, unless=work_arrived):
            self.log(message)
            self._close(served.entry.db)

    def _drop(self, entry: QueuedIndex, why: str) -> None:
        self.log(f"dropped {entry.vault} ({entry.label}) from the queue: {why}")
        deep_queue.drop(entry.db)
        self._close(entry.db)

    def _set(self, entry: QueuedIndex, why: str) -> None:
        self.log(f"set aside {entry.vault} ({entry.label}) until the next start: {why}")
        self._set_aside.add(entry.db)
        self._close(entry.db)

    def _close(self, db: str) -> None:
        served = self._open.pop(db, None)
        if served is not None:
            served.index.close()


def _open(entry: QueuedIndex) -> Index:
    """Open the queued index for writing deep vectors (the tier on, whatever the config
    says: it was queued because the tier was wanted). A PostgreSQL collection is looked at
    read-only first, so one deleted since is reported gone, not created again empty."""
    config = load_config(
        vault=entry.vault, db=entry.database_url or entry.db, collection=entry.collection,
        config_file=entry.config_file, deep_tier=True,
    )  # fmt: skip
    if entry.database_url is not None:
        Index(config, read_only=True).close()
    return Index(config)


def open_entry(entry: QueuedIndex) -> Index:
    """A queued index opened for reading (``vaultseek status``)."""
    config = load_config(
        vault=entry.vault, db=entry.database_url or entry.db, collection=entry.collection,
        config_file=entry.config_file, deep_tier=True,
    )  # fmt: skip
    return Index(config, read_only=True)


def worker_status() -> DeepWorkerStatus | None:
    """The worker and every queued index — coverage, state, rate — for ``vaultseek status``;
    None when nothing is queued and no worker runs."""
    queue = deep_queue.load_queue()
    pid = deep_queue.worker_pid()
    running = deep_queue.worker_running()
    if not queue.entries and not running:
        return None
    entries = []
    for entry in queue.entries:
        gone = entry.gone()
        if gone is not None:
            entries.append(DeepQueueEntry(entry.vault, entry.label, problem=gone))
            continue
        try:
            with open_entry(entry) as index:
                deep = index.deep_status()
        except VaultseekError as exc:
            entries.append(DeepQueueEntry(entry.vault, entry.label, problem=str(exc)))
            continue
        entries.append(DeepQueueEntry(entry.vault, entry.label, deep=deep))
    entries = _with_known_rates(entries)
    state: Literal["running", "paused", "stopped"] = "paused" if queue.paused else "running" if running else "stopped"
    threads = deep_queue.running_threads() if running else None
    return DeepWorkerStatus(state=state, pid=pid, entries=tuple(entries), log=str(deep_queue.log_path()), threads=threads)


def _with_known_rates(entries: list[DeepQueueEntry]) -> list[DeepQueueEntry]:
    """An index the worker has not reached yet has no rate of its own; the rate it measures
    on the index it works on now (else on any other) is the best estimate of its time left:
    same machine, same model."""
    from dataclasses import replace

    measured = [entry.deep for entry in entries if entry.deep is not None and entry.deep.rate]
    if not measured:
        return entries
    known = next((deep for deep in measured if deep.state == "running"), measured[0])
    return [
        replace(entry, deep=replace(entry.deep, rate=known.rate, work_rate=known.work_rate))
        if entry.deep is not None and not entry.deep.rate and entry.deep.pending
        else entry
        for entry in entries
    ]
