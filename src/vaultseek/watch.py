"""Keeping an index fresh while notes change: the one module that imports ``watchfiles``.

``watchfiles`` (Rust ``notify``: inotify on Linux, FSEvents on macOS) reports created,
modified, deleted and renamed paths; events are grouped until the vault has been quiet for
50 ms (at most 400 ms), then one incremental :meth:`Index.sync` brings the index in line. A
sync with nothing to do is a stat scan (~0.4 s at 17k files), a changed note costs a few
milliseconds more, and renames and deletions drop the old path's rows in the same run — so a
save is searchable well within 2 s, and a deleted note leaves no rows behind.

There is one writer per index: a watcher holds an exclusive lock file beside the daemon's
socket for as long as it runs, so ``vaultseek watch`` and ``vaultseek daemon`` (which runs a
watcher) never write concurrently. Readers — hooks, MCP, the CLI, the daemon's own searches —
use their own connections; in WAL mode they never wait for the writer, and each search
reloads the vector matrix when a commit happened since its last one.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import watchfiles

from . import daemon_client
from .config import Config
from .engine import Index
from .errors import ConfigError, VaultseekError
from .records import SyncReport
from .sources import PathFilter

QUIET_MS = 50
"""Changes are handled once the vault has been quiet this long…"""
MAX_WAIT_MS = 400
"""…or after this long, for a vault that never stops changing."""
RETRY_SECONDS = 1.0
"""A sync that failed (the index locked by `vaultseek index`) is tried again this often."""
SETTLE_SECONDS = 0.5
"""An inbox file changed more recently than this may still be being written: taken later."""


def acquire_writer_lock(db: Path) -> IO[bytes]:
    """The exclusive lock of the index's single writer (released when the file is closed)."""
    folder = daemon_client.make_private_dir(daemon_client.socket_path(db).parent)
    handle = (folder / f"{daemon_client.index_key(db)}.writer.lock").open("ab")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise ConfigError(
            f"another vaultseek is already watching the index {db}",
            hint="`vaultseek daemon status` shows whether the daemon runs; one writer is enough",
        ) from None
    return handle


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
        """Set once the first sync is done (the index matches the vault)."""
        self.syncs = 0

    def relevant(self, _change: watchfiles.Change, path: str) -> bool:
        """Would this path change the index? Notes that match ``include``, and folders (a
        renamed or deleted folder reports only itself); never the database's own files."""
        try:
            rel = Path(path).relative_to(self.vault).as_posix()
        except ValueError:
            return False
        if (rel + "/").startswith(self.config.intake_inbox + "/"):
            return True  # an arrival in the intake inbox (the folder itself is not indexed)
        parts = rel.split("/")
        if any(self.filter.skips_dir("/".join(parts[: i + 1])) for i in range(len(parts) - 1)):
            return False
        if any(part in self.config.excluded for part in parts):
            return False
        if self.filter.accepts_file(rel):
            return True
        return os.path.isdir(path) or (not os.path.exists(path) and not Path(rel).suffix)

    def run(self, stop: threading.Event) -> None:
        lock = acquire_writer_lock(self.db)
        try:
            with Index(self.config, create=True) as index:
                pending = not self._sync(index, remember=True)
                pending = not self._take_inbox(index) or pending
                self.ready.set()
                for changes in watchfiles.watch(
                    self.vault,
                    watch_filter=self.relevant,
                    debounce=MAX_WAIT_MS,
                    step=QUIET_MS,
                    stop_event=stop,
                    rust_timeout=int(RETRY_SECONDS * 1000),
                    yield_on_timeout=True,
                    raise_interrupt=False,
                ):
                    if stop.is_set():
                        break
                    if changes or pending:
                        taken = self._take_inbox(index)
                        pending = not self._sync(index) or not taken
        finally:
            self.ready.set()
            lock.close()

    def _take_inbox(self, index: Index) -> bool:
        """Route what waits in the intake inbox (``vaultseek.intake``); False when an item
        was too fresh to take yet, or intake failed (then it is tried again)."""
        if not self.inbox.is_dir():
            return True
        from .intake import Intake

        try:
            intake = Intake(index)
            waiting = intake.pending()
            if not waiting:
                return True
            outcomes = intake.take_inbox(min_age=SETTLE_SECONDS)
        except VaultseekError as exc:
            self.on_error(exc)
            return False
        for outcome in outcomes:
            if outcome.error:
                self.on_error(VaultseekError(f"intake: {outcome.item} not taken: {outcome.error}"))
        if outcomes:
            self.on_intake(outcomes)
        return len(outcomes) >= waiting

    def _sync(self, index: Index, *, remember: bool = False) -> bool:
        try:
            report = index.sync(remember=remember)
        except VaultseekError as exc:
            self.on_error(exc)
            return False
        self.syncs += 1
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
