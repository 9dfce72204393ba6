"""Keeping an index fresh while notes change: the one module that imports ``watchfiles``.

``watchfiles`` (Rust ``notify``: inotify on Linux, FSEvents on macOS) reports created,
modified, deleted and renamed paths; events are grouped until the vault has been quiet for
50 ms (at most 400 ms), then the index syncs just the paths the events name
(:meth:`Index.sync` with ``paths``): a few milliseconds for a saved note, where a full sync
is a stat walk of the whole vault (~0.7 s at 17k files). A rename arrives as a deletion and
a creation, and each path is synced as it now is on disk, so the old path's rows go and the
new one's come in the same run.

A sync of named paths is only as good as the events, so the watcher syncs everything when
it cannot trust them: at start (the vault changed while nobody watched), when a path is or
was a folder (a moved folder reports only itself; the engine decides this, since only the
index knows what a deleted path held), after a batch of more than :data:`MAX_PATHS` paths,
after a failed sync (the failed batch's events are gone), and every
:data:`RESCAN_SECONDS` as a safety net for events the platform dropped.

``watchfiles`` stops with an error on a path that is not valid UTF-8: an event for such a
file ends its watch, and such a folder anywhere in the vault keeps it from starting. The
watcher outlives both: it says so once through ``on_error``, starts a new watch and syncs in
full (the failed batch's events are lost); while no watch can be started it syncs in full every
:data:`EVENTLESS_SYNC_SECONDS` instead, trying again each time. The sync itself lists such a
name as skipped and indexes everything else.

There is one watcher per index: a watcher holds an exclusive lock file beside the daemon's
socket for as long as it runs, so ``vaultseek watch`` and ``vaultseek daemon`` (which runs a
watcher) never both watch it. Each sync also holds the index's writer lock
(``storage/writer_lock.py``), as every writer's does: a sync due while ``vaultseek index`` or
``intake`` writes waits for it, and a stop ends that wait. Readers — hooks, MCP, the CLI,
the daemon's own searches — use their own connections; in WAL mode they never wait for the
writer, and each search reloads the vector matrix when a commit happened since its last one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import watchfiles

from ..config import Config
from ..engine import Index
from ..errors import ConfigError, EmbeddingServerError, VaultseekError
from ..index import deep_queue
from ..index.activity import interactive_recently
from ..index.sources import PathFilter
from ..records import SyncReport
from ..storage.writer_lock import try_lock
from . import daemon_client

QUIET_MS = 50
"""Changes are handled once the vault has been quiet this long…"""
MAX_WAIT_MS = 400
"""…or after this long, for a vault that never stops changing."""
RETRY_SECONDS = 1.0
"""A sync that failed (the index locked by `vaultseek index`) is tried again this often."""
SETTLE_SECONDS = 0.5
"""An inbox file changed more recently than this may still be being written: taken later."""
MAX_PATHS = 1_000
"""A batch naming more paths than this is synced in full. A bulk change (a ``git checkout``,
a sync client catching up, an unzip) is where the kernel's event queue overflows (inotify
holds 16,384 events by default; a saved file costs 3–6), and ``watchfiles`` does not pass
that signal on, so a big batch is the one sign that events may be missing. Named paths cost
~0.2 ms each, a full walk ~40 µs a file (measured at 17k files: 0.19 s for 1,000 paths,
0.6–0.7 s for the walk), so the safety costs a few tenths of a second once per bulk change."""
DEEP_SLICE_SECONDS = 2.0
"""The deep tier's work between two looks at file events: an edit waits at most this long
(plus one batch) before it is synced, and a note's new chunks get their deep vectors within
seconds of the sync (``deepening.py``)."""
EVENTLESS_SYNC_SECONDS = 10.0
"""How often the vault is synced in full while file events cannot be had (a folder name that
is not valid UTF-8 keeps ``watchfiles`` from starting): new notes are indexed within this
long, at ~0.7 s of one core per 17k files each time, ~7% of a core for a vault that size."""
RESCAN_SECONDS = 600.0
"""A full sync runs at least this often, so a change whose event was lost (a dropped
event, a network file system that sends none) is indexed within minutes. At ~0.7 s per
17k files, that is about 0.1% of one core."""


def acquire_writer_lock(db: Path) -> IO[bytes]:
    """The exclusive lock of the index's one watcher (released when the file is closed)."""
    folder = daemon_client.make_private_dir(daemon_client.socket_path(db).parent)
    handle = try_lock(folder / f"{daemon_client.index_key(db)}.writer.lock")
    if handle is None:
        raise ConfigError(
            f"another vaultseek is already watching the index {db}",
            hint="`vaultseek daemon status` shows whether the daemon runs; one watcher is enough",
        )
    return handle


def writer_active(db: Path) -> bool:
    """Whether a watcher (``vaultseek watch`` or the daemon's) holds this index's writer lock."""
    try:
        handle = acquire_writer_lock(db)
    except ConfigError:
        return True
    handle.close()
    return False


class Watcher:
    """Watches one vault and syncs its index; :meth:`run` blocks until ``stop`` is set."""

    def __init__(
        self,
        config: Config,
        *,
        on_sync: Callable[[SyncReport], None] | None = None,
        on_error: Callable[[VaultseekError], None] | None = None,
        on_intake: Callable[[list[Any]], None] | None = None,
    ) -> None:
        assert config.vault is not None and config.db is not None
        self.config = config
        self.vault = config.vault.resolve()
        self.db = config.db
        self.filter = PathFilter(config.include, config.excluded)
        self.on_sync = on_sync or (lambda _r: None)
        self.on_error = on_error or (lambda _e: None)
        self.on_intake = on_intake or (lambda _o: None)
        self.inbox = self.vault / config.intake_inbox
        self.ready = threading.Event()
        """Set once the watch is in place and the first sync done (the index matches the vault)."""
        self.syncs = 0
        self.deep_idle = not config.deep_tier
        """Nothing for the deep tier to do until a sync writes chunks or a full sync runs."""
        self.deep_broken = False
        """The deep model cannot run here (said once through ``on_error``)."""
        self.queued_while_paused = False
        """This index was put in the background worker's queue during the current pause."""
        self.rescan_seconds = RESCAN_SECONDS
        """How often a full sync runs whatever the events say (tests shorten it)."""
        self.eventless_seconds = EVENTLESS_SYNC_SECONDS
        """How often a full sync runs while file events cannot be had (tests shorten it)."""
        self.events_error: str | None = None
        """Why file events stopped, while they are stopped; None while they arrive."""
        self._full_due = True
        self._last_full = time.monotonic()
        self._inbox_waiting = True
        self._stopping: Callable[[], bool] = lambda: False
        """Whether :meth:`run` was asked to stop (a sync waiting for the writer lock stops too)."""

    def relevant(self, _change: watchfiles.Change, path: str) -> bool:
        """Could this path change the index? Files the vault indexes, folders (a renamed or
        deleted folder reports only itself), and any path that is gone (it may have been
        either; the index knows) — never what the walk skips, such as ``.obsidian`` or the
        database's own files."""
        try:
            rel = Path(path).relative_to(self.vault).as_posix()
        except ValueError:
            return False
        if (rel + "/").startswith(self.config.intake_inbox + "/"):
            return True  # an arrival in the intake inbox (the folder itself is not indexed)
        if self.filter.skips_parent_of(rel) or self.filter.skips_dir(rel):
            return False
        return self.filter.accepts_file(rel) or os.path.isdir(path) or not os.path.lexists(path)

    def run(self, stop: threading.Event) -> None:
        self._stopping = stop.is_set
        lock = acquire_writer_lock(self.db)
        try:
            with Index(self.config, create=True) as index:
                # The first sync, a full one, runs on the loop's first pass (within
                # RETRY_SECONDS), once the watch is in place: a note saved while it walks
                # the vault is then an event, not a change nobody looks at for minutes.
                self._full_due, self._last_full, self._inbox_waiting = True, time.monotonic(), True
                while not stop.is_set():
                    failure, started = self._follow_events(index, stop)
                    if failure is None:
                        break
                    if failure != self.events_error:
                        self.on_error(VaultseekError(
                            f"file events stopped ({failure}); syncing in full, and every "
                            f"{self.eventless_seconds:g} s while they cannot be restarted"
                        ))  # fmt: skip
                    self.events_error = failure
                    self._full_due = True  # the failed batch's events are lost
                    if not started:  # no watch at all: sync on a timer, then try again
                        self._step(index, None, stop)
                        stop.wait(self.eventless_seconds)
        finally:
            self.ready.set()
            lock.close()

    def _follow_events(self, index: Index, stop: threading.Event) -> tuple[str | None, bool]:
        """Sync on file events until ``stop`` is set; or until ``watchfiles`` fails, then
        (its message, whether the watch had started)."""
        events = watchfiles.watch(
            self.vault,
            watch_filter=self.relevant,
            debounce=MAX_WAIT_MS,
            step=QUIET_MS,
            stop_event=stop,
            rust_timeout=int(RETRY_SECONDS * 1000),
            yield_on_timeout=True,
            raise_interrupt=False,
        )
        started = False
        try:
            while True:
                try:
                    changes = next(events, None)
                except (RuntimeError, OSError) as exc:  # watchfiles' own error is a RuntimeError
                    return str(exc) or exc.__class__.__name__, started
                if changes is None or stop.is_set():
                    return None, started
                started, self.events_error = True, None
                self._step(index, changes, stop)
        finally:
            events.close()  # the watch ends now, not when the generator is collected

    def _step(self, index: Index, changes: set[tuple[watchfiles.Change, str]] | None, stop: threading.Event) -> None:
        """Sync after one batch of events (or none); ``changes`` None: nothing is known of
        what changed, so the sync is a full one and the inbox is looked at."""
        paths = sorted({path for _change, path in changes or ()})
        rescan_due = time.monotonic() - self._last_full > self.rescan_seconds
        if changes is None or self._full_due or rescan_due or len(paths) > MAX_PATHS:
            self._full_due = not self._sync(index, remember=not self.ready.is_set())
            self._last_full = time.monotonic()
        elif paths:
            self._full_due = not self._sync(index, paths=paths)
        if changes is None or changes or self._inbox_waiting:  # after the sync: intake routes by what is indexed
            self._inbox_waiting = not self._take_inbox(index)
        self.ready.set()
        if not self.deep_idle and not stop.is_set():
            self._deepen(index, stop)

    def _take_inbox(self, index: Index) -> bool:
        """Route what waits in the intake inbox (``vaultseek.intake``); False when an item
        was too fresh to take yet, or intake failed (then it is tried again)."""
        if not self.inbox.is_dir():
            return True
        from ..intake import Intake

        try:
            intake = Intake(index)
            waiting = intake.pending()
            if not waiting:
                return True
            outcomes = intake.take_inbox(min_age=SETTLE_SECONDS)
        except VaultseekError as exc:
            self.on_error(exc)
            return False
        except Exception as exc:  # noqa: BLE001 - one odd inbox item must not stop the watcher
            # Not retried on the timer (it would fail the same way every second), only after
            # the next change.
            self.on_error(VaultseekError(f"intake failed: {exc.__class__.__name__}: {exc}"))
            return True
        for outcome in outcomes:
            if outcome.error:
                self.on_error(VaultseekError(f"intake: {outcome.item} not taken: {outcome.error}"))
        if outcomes:
            self.on_intake(outcomes)
        return len(outcomes) >= waiting

    def _deepen(self, index: Index, stop: threading.Event) -> None:
        """A slice of the deep tier's work; idle once every chunk has a deep vector, another
        process runs the job to completion, or the deep model cannot run here. None while
        ``vaultseek deep --pause`` holds the deep tier — the index is queued instead, once a
        pause, so the worker ``--resume`` starts embeds what was synced meanwhile even when this
        watcher has stopped by then — nor while a search or hook touched the activity marker in
        the last two seconds (``index/activity.py``): the slice waits for the next quiet pass."""
        if deep_queue.paused():
            if not self.queued_while_paused:
                deep_queue.enqueue(index.config)  # paused: starts no worker
                self.queued_while_paused = True
            return
        self.queued_while_paused = False
        if interactive_recently():
            return
        try:
            report = index.deepen(seconds=DEEP_SLICE_SECONDS, should_stop=lambda: stop.is_set() or interactive_recently())
        except EmbeddingServerError as exc:  # its server is away: the next sync's slice tries again
            self.deep_idle = True
            self.on_error(exc)
            return
        except VaultseekError as exc:  # the model cannot run here: say so once, stop trying
            self.deep_idle = self.deep_broken = True
            self.on_error(exc)
            return
        if report is None or report.complete:
            self.deep_idle = True

    def _sync(self, index: Index, *, paths: list[str] | None = None, remember: bool = False) -> bool:
        """Sync everything, or just ``paths``; False when it failed (then the next sync is a
        full one: the events of the failed batch are spent)."""
        try:
            report = index.sync(paths=paths, remember=remember, should_stop=self._stopping)
        except VaultseekError as exc:
            self.on_error(exc)
            return False
        except Exception as exc:  # noqa: BLE001 - a file that trips a bug must not stop the watcher
            self.on_error(VaultseekError(f"sync failed: {exc.__class__.__name__}: {exc}"))
            return False
        self.syncs += 1
        if self.config.deep_tier and not self.deep_broken and (report.chunks_written or paths is None):
            self.deep_idle = False  # new chunks, or a full sync: a stopped worker may have left work
        self.on_sync(report)
        return True

    def start(self) -> tuple[threading.Thread, threading.Event]:
        """Run in a background thread; returns it and the event that stops it."""
        stop = threading.Event()
        errors: list[BaseException] = []

        def target() -> None:
            try:
                self.run(stop)
            except BaseException as exc:  # noqa: BLE001 - reported through on_error
                errors.append(exc)
                if isinstance(exc, VaultseekError):
                    self.on_error(exc)
                else:
                    self.on_error(VaultseekError(f"the watcher stopped: {exc!r}"))

        thread = threading.Thread(target=target, name="vaultseek-watch", daemon=True)
        thread.start()
        return thread, stop
