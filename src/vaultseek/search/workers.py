"""The threads a search's vector scans run on while BM25 runs on the caller's: SQLite, the int8
scan and the deep model's engine all work without Python's lock, so on two cores a hybrid
search's lists take about as long as the slowest."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .candidates import ScanResult

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


@functools.cache
def cores() -> int:
    """The cores this process may use (asked once: the answer costs ~70 µs here)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


_workers: ThreadPoolExecutor | None = None
_workers_lock = threading.Lock()
_started = 0
"""Background scans this process has started: the first ``_OWN_THREADS`` (one search's static
and deep lists) each have a thread of their own, later ones the pool's."""
_OWN_THREADS = 2


def start(background: bool, fn: Callable[..., ScanResult], *args: object) -> Callable[[], ScanResult]:
    """Start ``fn(*args)`` on the vector workers — a few threads shared by every search of
    the process — and return what waits for its result; run it right here instead when not
    ``background`` or on a single core, where there is nothing to overlap with. A process's
    first search starts plain threads instead: the pool's module (``concurrent.futures``, which
    loads ``logging``) costs a fresh ``vaultseek search`` ~8 ms, more than it saves."""
    global _workers, _started
    available = cores()
    if not background or available < 2:
        result = fn(*args)
        return lambda: result
    with _workers_lock:
        first, _started = _started < _OWN_THREADS, _started + 1
        if not first and _workers is None:
            from concurrent.futures import ThreadPoolExecutor

            _workers = ThreadPoolExecutor(max_workers=min(4, available), thread_name_prefix="vaultseek-vectors")
    if first:
        return _in_thread(fn, *args)
    assert _workers is not None
    return _workers.submit(fn, *args).result


def _in_thread(fn: Callable[..., ScanResult], *args: object) -> Callable[[], ScanResult]:
    """``fn(*args)`` on a thread of its own; what waits for its result (or raises its error)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, fn(*args)))
        except BaseException as exc:  # noqa: BLE001 - raised again in the waiting thread
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="vaultseek-vectors", daemon=True)
    thread.start()

    def wait() -> ScanResult:
        thread.join()
        done, value = outcome[0]
        if not done:
            raise value
        return value

    return wait
