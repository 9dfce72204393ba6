"""The PostgreSQL store's footing: transactions and locks, meta, and the change counters."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ...errors import IndexBusyError
from ..writer_lock import LockHolder

SYNC_LOCK_CLASS = 7_405_339
"""First key of the advisory lock a sync holds (the second is the hash of the schema)."""
LOCK_POLL_SECONDS = 0.2


class PgStoreBase:
    """What every part of :class:`~vaultseek.storage.postgres.store.PgStore` stands on: the
    psycopg connection, write transactions under the collection's advisory locks, the
    ``meta`` table, and the counters that tell whether anything was written."""

    pg: Any
    collection: str
    schema: str
    _lock_key: str
    _writing: bool
    _changes: int

    # -- transactions -------------------------------------------------------------------
    @contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction holding the collection's writer lock (nested calls join
        the open one); it bumps ``stats.version`` so readers reload what they cached."""
        if self._writing:
            yield
            return
        with self.pg.transaction():
            self.pg.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self._lock_key,))
            self._writing = True
            try:
                yield
            finally:
                self._writing = False
            self.pg.execute("UPDATE stats SET version = version + 1")
        self._changes += 1

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction around many :meth:`replace_file` calls: all of them or none."""
        with self._write():
            yield

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """A transaction holding the writer lock from its first read."""
        with self._write():
            yield

    @contextmanager
    def sync_lock(
        self,
        *,
        timeout: float | None = None,
        on_wait: Callable[[LockHolder], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[bool]:
        """The collection's one-writer lock for a whole sync (a
        :class:`~vaultseek.storage.writer_lock.WriterLock`): a session advisory lock, which
        the server releases when the holder's connection ends however it ends. A waiter
        hears who holds it (the holder's ``application_name``, address and start) and gives
        up after ``timeout`` seconds with :class:`IndexBusyError`. A connection lost while it
        is held ends the sync with the error that says so, not with the failed unlock's.
        (``connection`` is imported here: it loads psycopg, which a search of an index file,
        importing this module for its classes, must not.)"""
        from .connection import Error, translate

        try:
            key = (SYNC_LOCK_CLASS, self._one("SELECT hashtext(%s)", (self.schema,)))
        except Error as exc:
            raise translate(exc, self.pg) from exc
        started = time.monotonic()
        told: LockHolder | None = None
        while not self._try_lock(key):
            waited = time.monotonic() - started
            holder = self._lock_holder(key)
            if on_wait is not None and (told is None or holder != told):
                told = holder
                on_wait(holder)
            if should_stop is not None and should_stop():
                yield False
                return
            if timeout is not None and waited >= timeout:
                raise IndexBusyError(
                    f"the collection {self.collection!r} is being written by {holder.describe()}; "
                    f"gave up after {timeout:g} s",
                    hint="try again when it is done, or wait longer (`vaultseek index --wait SECONDS`)",
                )
            time.sleep(LOCK_POLL_SECONDS)
        try:
            yield True
        finally:
            self._unlock(key)

    def _try_lock(self, key: tuple[int, int]) -> bool:
        from .connection import Error, translate

        try:
            return bool(self._one("SELECT pg_try_advisory_lock(%s, %s)", key))
        except Error as exc:
            raise translate(exc, self.pg) from exc

    def _unlock(self, key: tuple[int, int]) -> None:
        """Release the sync lock; on a connection that is gone there is nothing to release
        (the server ended the session, and its locks with it)."""
        from .connection import Error, translate

        if self.pg.closed or self.pg.broken:
            return
        try:
            self.pg.execute("SELECT pg_advisory_unlock(%s, %s)", key)
        except Error as exc:
            if self.pg.closed or self.pg.broken:
                return
            raise translate(exc, self.pg) from exc

    def _lock_holder(self, key: tuple[int, int]) -> LockHolder:
        row = self.pg.execute(
            "SELECT a.pid, a.application_name, host(a.client_addr), extract(epoch FROM a.backend_start) "
            "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
            "AND l.granted AND l.classid = %s::oid AND l.objid = (%s::bigint & 4294967295)::oid AND l.objsubid = 2",
            key,
        ).fetchone()
        if row is None:
            return LockHolder()
        where = f" on {row[2]}" if row[2] else ""
        return LockHolder(int(row[0]), f"{row[1] or 'a'} session{where}", float(row[3]))

    def total_changes(self) -> int:
        """Write transactions this store has committed: unchanged across a step means the
        step wrote nothing."""
        return self._changes

    def data_version(self) -> int:
        """Changes whenever any writer commits: the cue to reload cached vectors."""
        return int(self._one("SELECT version FROM stats"))

    def _one(self, sql: str, params: Sequence[object] | None = None) -> Any:
        row = self.pg.execute(sql, params).fetchone()
        return None if row is None else row[0]

    # -- meta ---------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        value = self._one("SELECT value FROM meta WHERE key = %s", (key,))
        return None if value is None else str(value)

    def delete_meta(self, key: str) -> None:
        with self._write():
            self.pg.execute("DELETE FROM meta WHERE key = %s", (key,))

    def set_meta(self, values: dict[str, str]) -> None:
        with self._write(), self.pg.cursor() as cur:
            cur.executemany(
                "INSERT INTO meta(key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                list(values.items()),
            )

    def chunk_count(self) -> int:
        return int(self._one("SELECT chunks FROM stats"))
