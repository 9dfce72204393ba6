"""The knowledge base's read side: a small pool of read-only ``Index`` objects, each lent to
one thread at a time. WAL lets them read while the one writer (:mod:`.ingestion`) indexes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..engine import Index
from ..errors import IndexClosedError

IndexFactory = Callable[[], Index]
"""Opens one ``Index`` on the app's database: the readers and the writer each call it."""


class ReaderPool:
    """Up to ``size`` Index objects, each lent to one thread at a time.

    Closing never touches an index that is out on loan: an apsw connection closed while
    another thread is inside a statement raises ``ThreadingViolationError`` (as the start-up
    warm-up would, still searching at shutdown). Idle indexes close at once; a
    lent one is closed by its borrower as it comes back. Nothing waits for borrowers, so a
    slow search cannot hang shutdown, and no index is lent after ``close``."""

    def __init__(self, factory: IndexFactory, size: int = 3) -> None:
        self.factory = factory
        self.size = size
        self.idle: list[Index] = []
        self.opened = 0
        """Indexes that exist (idle or lent), or are being opened."""
        self.closed = False
        self.changed = threading.Condition()

    @contextmanager
    def borrow(self) -> Iterator[Index]:
        """An index for this thread alone until the block ends (raises
        :class:`IndexClosedError` once the pool is closed)."""
        index = self._take()
        try:
            yield index
        finally:
            self._give_back(index)

    def _take(self) -> Index:
        with self.changed:
            while True:
                if self.closed:
                    raise IndexClosedError("the study app is shutting down", hint="start it again")
                if self.idle:
                    return self.idle.pop()
                if self.opened < self.size:
                    self.opened += 1
                    break
                self.changed.wait()
        try:  # outside the lock: opening may wait for the database (see db.open_connection)
            return self.factory()
        except BaseException:
            with self.changed:
                self.opened -= 1
                self.changed.notify()
            raise

    def _give_back(self, index: Index) -> None:
        with self.changed:
            if not self.closed:
                self.idle.append(index)
                self.changed.notify()
                return
            self.opened -= 1
        index.close()  # the pool closed while it was lent: close it here, where it was used

    def close(self) -> None:
        with self.changed:
            self.closed = True
            idle, self.idle = self.idle, []
            self.opened -= len(idle)
            self.changed.notify_all()  # borrowers waiting for an index get IndexClosedError
        for index in idle:
            index.close()

