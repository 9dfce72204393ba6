"""The SQLite store's footing: the connection, transactions, meta and the change counters."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from .db import Connection


class StoreBase:
    """What every part of :class:`~vaultseek.storage.store.Store` stands on: the connection,
    its transactions, the ``meta`` table, and the counters that tell whether anything was
    written since a cache was filled."""

    conn: Connection
    backend: str
    _temp_changes: int
    _chunks: tuple[tuple[int, int], int] | None

    # -- meta ---------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        return self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).get

    def delete_meta(self, key: str) -> None:
        with self.conn:
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def set_meta(self, values: dict[str, str]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                list(values.items()),
            )

    def data_version(self) -> int:
        """Changes whenever another connection commits: the cue to reload cached vectors."""
        return int(self.conn.execute("PRAGMA data_version").get)

    # -- transactions and counters ------------------------------------------------------
    def total_changes(self) -> int:
        """Rows this connection has written since it opened: equal before and after a step
        means the step wrote nothing (and committed nothing readers would reload for). The
        rows of its own temporary tables (:meth:`_exclude`) are not counted."""
        return int(self.conn.total_changes()) - self._temp_changes

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction around many :meth:`replace_file` calls: all of them or none.

        Indexing committed every file on its own, and each commit (or savepoint) costs about
        half a millisecond whatever the file's size: FTS5 flushes its pending terms into a
        new segment, and every table the file touched writes its pages to the WAL. Batching
        the indexer's ~64 files took the benchmark vault's full index from ~31 s to ~24 s. A
        crash loses at most the open batch, which the next run indexes again."""
        with self.conn:
            yield

    def _atomic(self) -> contextlib.AbstractContextManager[object]:
        """The connection as a transaction — or nothing when a :meth:`batch` (or any caller's
        transaction) is already open: a nested savepoint would flush FTS5 all the same."""
        return contextlib.nullcontext() if self.conn.in_transaction else self.conn

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """One transaction holding the write lock from its first read (``BEGIN IMMEDIATE``),
        for steps that read, decide and write back and must not interleave with a writer."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def chunk_count(self) -> int:
        """How many chunks the index holds; counted again only after a write (a count walks
        the table: ~1 ms at 50k chunks, and every search asks for it)."""
        as_of = (self.data_version(), self.total_changes())
        if self._chunks is None or self._chunks[0] != as_of:
            self._chunks = (as_of, int(self.conn.execute("SELECT count(*) FROM chunks").get))
        return self._chunks[1]


T = TypeVar("T")


def _batches(items: Sequence[T], size: int = 500) -> Iterator[list[T]]:
    """``items`` in lists small enough for one ``IN (…)``."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _marks(batch: Sequence[object]) -> str:
    return ",".join("?" * len(batch))
