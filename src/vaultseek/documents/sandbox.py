"""Documents are read in a child process whose memory is capped, so a hostile file costs at
most that cap, gives its memory back when read, and a crash skips only that file.

A PDF of a few KB can hold a content stream that inflates to millions of text operators:
PDFium parses them all when the page is loaded (about 300 bytes an operator) and builds its
text page (about 200 bytes a character) before any text reaches the reader, so no cap on the
text taken can help — a 1.2 MB file took 4 GB. Nothing in PDFium's API tells a page's cost
before it is loaded, and the same holds for the other libraries' parsers. So every document is
read by :func:`.registry.extract` in a :class:`ReaderProcess`:

* the parent watches the child's resident memory every :data:`WATCH_SECONDS` and kills it
  once it holds more than ``Limits.max_reader_bytes`` (default :data:`READER_MEMORY_MB`) past
  what it held after start-up (and the child watches itself the same way, so the cap holds
  where the parent cannot read another process's memory, as on macOS); as a backstop against
  one huge allocation, the child's address space (``RLIMIT_AS``) is capped at
  :data:`ADDRESS_SPACE_FACTOR` times that (address space, not memory: the OCR engine's runtime
  reserves far more than it touches). A reader that needs more is stopped, and the file
  skipped with a reason starting :data:`STOPPED_READER`;
* a child that says nothing for :data:`QUIET_SECONDS` (it reports every page) is killed, and
  the file skipped the same way;
* one child reads a run's documents one after another (starting one takes 0.2 to 0.4 s; a
  small PDF then costs about 1 ms more than read in the calling process), and it exits once it holds
  more than :data:`RECYCLE_MB` above its start, so memory a large document took goes back to
  the operating system instead of staying with the process;
* the child dies with its parent (``PR_SET_PDEATHSIG`` on Linux; elsewhere at its next
  message).

The reader's calls back — progress, the stop request, an OCRed page's checkpoint — are
messages to the parent, which answers them with the real :class:`.ExtractContext`; so OCR
checkpoints are written by the indexing process itself.

Whether a reader's library is installed is checked in the parent first
(:func:`.registry.require_reader`), so a missing extra is reported as a missing extra (one
notice per run), never as a reader that failed.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..errors import MissingExtraError
from .extraction import (
    MB,
    DocumentError,
    ExtractContext,
    Extracted,
    ExtractionStopped,
    Limits,
    OcrSettings,
)

READER_MEMORY_MB = 1024
"""The default of ``Limits.max_reader_bytes``: the resident memory a reader child may take
past what it holds after start-up (about 50 MB). RapidOCR reading two pages at once takes
about 550 MB; a hostile page far more."""
WATCH_SECONDS = 0.02
"""How often the parent looks at the child's resident memory while it reads. PDFium takes
about 50 MB a second at most while it loads a hostile page, so the overshoot is a few MB."""
ADDRESS_SPACE_FACTOR = 4
OVER_BUDGET_EXIT = 75
"""The exit code of a child that found itself over its memory budget."""
QUIET_SECONDS = 300.0
"""A reader that reports nothing (no page done) for this long is stopped."""
RECYCLE_MB = 256
"""A child holding this much more resident memory than after start-up exits after the
document, and the next document gets a fresh one."""
STOPPED_READER = "stopped the reader"
"""How every reason for a file that ended or stalled its reader starts; such a file is not
read again until it changes (:mod:`vaultseek.index.sync`)."""

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class ReaderProcess:
    """A child process that reads documents, started on first use and again after it ended.
    Not thread-safe: one caller at a time (the indexer's loop, or one upload)."""

    def __init__(self, *, quiet_seconds: float = QUIET_SECONDS) -> None:
        self.quiet_seconds = quiet_seconds
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._budget = 0
        self._baseline = 0
        self.started = 0
        """Children started so far (for the benchmark and tests)."""

    def __enter__(self) -> ReaderProcess:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the child (it is idle between documents; nothing is lost)."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.close()
        if proc is not None:
            try:
                proc.wait(timeout=5)  # it exits when its end of the pipe closes
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def _start(self, budget: int) -> Connection:
        if self._conn is not None and self._proc is not None and self._budget == budget \
                and self._proc.poll() is None:  # fmt: skip
            return self._conn
        self.close()
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        env.setdefault("MALLOC_ARENA_MAX", "2")  # each thread's arena reserves 64 MB of address
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "vaultseek.documents.sandbox", str(to_child_r),
                 str(from_child_w), str(budget)],
                pass_fds=(to_child_r, from_child_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                close_fds=True,
            )  # fmt: skip
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._conn = _Duplex(from_child_r, to_child_w)
        self._budget = budget
        self.started += 1
        try:  # it says how much it holds once started
            if not self._conn.poll(60):
                raise EOFError("no answer in 60 s")
            self._baseline = int(self._conn.recv())
        except (EOFError, OSError, ValueError) as exc:
            self._kill()  # not the file's fault: it is tried again on the next run
            raise DocumentError(f"the document reader could not start ({str(exc) or 'it ended at once'})") from exc
        return self._conn

    def extract(self, path: str, data: bytes, context: ExtractContext) -> Extracted:
        """:func:`.registry.extract` in the child: the same result and errors, and a
        :class:`DocumentError` starting :data:`STOPPED_READER` when the child ended or stalled."""
        from .registry import require_reader

        require_reader(path)
        budget = context.limits.max_reader_bytes
        conn = self._start(budget)
        request = ("read", path, asdict(context.ocr), asdict(context.limits), context.pages.done())
        try:
            conn.send(request)
            conn.send_bytes(data)  # written from the buffer: no pickled copy of a 100 MB file
            while True:
                self._wait(conn, budget)
                message = conn.recv()
                kind = message[0]
                if kind == "progress":
                    context.progress(message[1], message[2], message[3])
                elif kind == "stop?":
                    conn.send(bool(context.should_stop()))
                elif kind == "save":
                    conn.send(context.pages.save(message[1], message[2]))
                elif kind == "done":
                    result: Extracted = message[1]
                    if message[2]:  # the child holds too much: let it go, memory and all
                        self.close()
                    return result
                else:
                    self._raise(message)  # the child is idle again: it is kept
        except (DocumentError, ExtractionStopped, MissingExtraError):
            raise
        except (EOFError, OSError) as exc:
            code = self._ended()
            if context.should_stop():  # ended by the same stop request (Ctrl-C) as the run
                raise ExtractionStopped from exc
            if code == OVER_BUDGET_EXIT:
                raise self._over_budget(budget) from exc
            if code is None:
                raise DocumentError(f"{STOPPED_READER}: lost touch with it ({exc})") from exc
            how = _signal_name(-code) if code < 0 else f"exit code {code}"
            raise DocumentError(
                f"{STOPPED_READER}: it ended with {how} while reading (a reader may use "
                f"{budget // MB:,} MB of memory)"
            ) from exc
        except BaseException:  # a callback failed (a full disk), or the caller was interrupted
            self._kill()  # the child is mid-document: it cannot be reused
            raise

    def _wait(self, conn: Connection, budget: int) -> None:
        """Until the child says something; it is killed, and :class:`DocumentError` raised,
        once it holds more than ``budget`` past its start or is quiet too long."""
        quiet_until = time.monotonic() + self.quiet_seconds
        while not conn.poll(WATCH_SECONDS):
            held = _resident_bytes(self._proc.pid if self._proc else None) - self._baseline
            if held > budget:
                self._kill()
                raise self._over_budget(budget)
            if time.monotonic() > quiet_until:
                self._kill()
                raise DocumentError(
                    f"{STOPPED_READER}: it read for {self.quiet_seconds:,.0f} s without "
                    "finishing a page"
                )

    @staticmethod
    def _over_budget(budget: int) -> DocumentError:
        return DocumentError(
            f"{STOPPED_READER}: it needed more than {budget // MB:,} MB of memory "
            "(what reading one document may take)"
        )

    @staticmethod
    def _raise(message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "stopped":
            raise ExtractionStopped
        if kind == "missing":
            raise MissingExtraError(message[1], feature=message[2], missing=message[3])
        raise DocumentError(message[1])

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
        self.close()

    def _ended(self) -> int | None:
        """The child's exit code once it has ended (None if it has not: then it is killed)."""
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.close()
        return code


class _Duplex(Connection):
    """A connection reading one pipe and writing another (``multiprocessing``'s framing)."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        super().__init__(read_fd, writable=False)
        self._writer = Connection(write_fd, readable=False)

    def send(self, obj: Any) -> None:
        self._writer.send(obj)

    def send_bytes(self, buf: Any, offset: int = 0, size: int | None = None) -> None:
        self._writer.send_bytes(buf, offset, size)

    def close(self) -> None:
        try:
            self._writer.close()
        finally:
            super().close()


_SHARED_LOCK = threading.Lock()


def extract_once(path: str, data: bytes, context: ExtractContext) -> Extracted:
    """Read one document in a child of its own, ended afterwards (an upload: rare, and the
    caller's memory never holds what the reader took)."""
    with _SHARED_LOCK, ReaderProcess() as reader:
        return reader.extract(path, data, context)


# -- the child ----------------------------------------------------------------------------
def _statm(field: int, pid: int | None = None) -> int:
    """Field ``field`` of a process's ``/proc/<pid>/statm`` (this one's by default), in bytes;
    0 where /proc cannot tell."""
    try:
        with open(f"/proc/{pid or 'self'}/statm", "rb") as stats:
            return int(stats.read().split()[field]) * resource.getpagesize()
    except (OSError, IndexError, ValueError):
        return 0


def _resident_bytes(pid: int | None = None) -> int:
    """A process's resident memory (this one's by default); 0 where /proc cannot tell."""
    return _statm(1, pid)


def _address_space() -> int:
    """This process's address space (virtual size); 0 where /proc cannot tell."""
    return _statm(0)


def _peak_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def _watch_self(baseline: int, budget: int) -> None:
    """Exit with :data:`OVER_BUDGET_EXIT` once this process holds more than ``budget`` past
    ``baseline`` (its resident memory where /proc tells it, else its peak)."""
    while True:
        held = _resident_bytes() or _peak_bytes()
        if held - baseline > budget:
            os._exit(OVER_BUDGET_EXIT)
        time.sleep(WATCH_SECONDS)


def _die_with_parent() -> None:
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class _ChildLog:
    def __init__(self, conn: Connection, done: dict[int, str]) -> None:
        self.conn, self._done = conn, done

    def done(self) -> dict[int, str]:
        return self._done

    def save(self, page: int, text: str) -> str:
        self.conn.send(("save", page, text))
        return str(self.conn.recv())


def _serve(conn: Connection, budget: int) -> None:
    from . import registry

    with contextlib.suppress(ImportError):  # the usual reader, loaded before the cap is set
        from . import pdf  # noqa: F401

    baseline = _resident_bytes()
    conn.send(baseline)
    if budget > 0:  # native readers release the GIL, so this thread runs while they read
        self_baseline = baseline or _peak_bytes()
        threading.Thread(target=_watch_self, args=(self_baseline, budget), daemon=True).start()
    space = _address_space()
    if space and budget > 0:
        with contextlib.suppress(ValueError, OSError):
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            cap = space + ADDRESS_SPACE_FACTOR * budget
            if hard == resource.RLIM_INFINITY or cap < hard:
                resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        _tag, path, ocr, limits, done = request
        data = conn.recv_bytes()

        def stop_check() -> bool:
            conn.send(("stop?",))
            return bool(conn.recv())

        context = ExtractContext(
            path=path,
            ocr=OcrSettings(**ocr),
            pages=_ChildLog(conn, done),
            progress=lambda phase, n, total: conn.send(("progress", phase, n, total)),
            should_stop=stop_check,
            limits=Limits(**limits),
        )
        try:
            result = registry.extract(path, data, context)
        except ExtractionStopped:
            conn.send(("stopped",))
            continue
        except MissingExtraError as exc:
            conn.send(("missing", exc.extra, exc.feature, exc.missing))
            continue
        except DocumentError as exc:
            conn.send(("error", str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - reported as the file's reason, never a crash
            conn.send(("error", f"could not be read ({exc.__class__.__name__})"))
            continue
        finally:
            del data
        recycle = _resident_bytes() - baseline > RECYCLE_MB * MB
        conn.send(("done", result, recycle))
        del result
        if recycle:
            return


def _main(argv: list[str]) -> int:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which asks to stop
    read_fd, write_fd, budget = int(argv[0]), int(argv[1]), int(argv[2])
    conn = _Duplex(read_fd, write_fd)
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        _serve(conn, budget)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
