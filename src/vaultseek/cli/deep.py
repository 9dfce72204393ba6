"""The ``deep`` command and what ``index`` does about the deep tier after the fast index.

Kept apart from :mod:`cli` (which registers it) so that module stays a list of commands. The
work itself is :meth:`Index.deepen`; the background worker is :mod:`agents.deep_worker` and
its queue :mod:`index.deep_queue`. This module decides where the work runs (here, or in the
worker), controls the worker (stop, pause, resume) and renders it.

Exit codes of ``vaultseek deep``: 0 done (or, with ``--stop``/``--pause``/``--resume``/
``--background``, the worker is where it was asked to be); 4 the worker did not stop (another
user's process, which this user cannot signal); 6 the deep model cannot run here; 130 stopped
by Ctrl-C before every chunk had its vector.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from .common import EXIT_INTERRUPTED

AddCommon = Callable[[argparse.ArgumentParser], None]
POLL_SECONDS = 1.0
"""How often ``vaultseek deep`` looks at a job another process runs."""
STOP_GRACE_SECONDS = 10.0
"""How long ``--stop`` and ``--pause`` let the worker finish its batch (~1 s on an idle core;
far longer on a machine so busy that an idle-priority process seldom runs) before ending it
with SIGKILL, which loses at most that batch — a few seconds of work: every earlier one is
committed."""
KILL_WAIT_SECONDS = 5.0


def add_parsers(commands: Any, add_common: AddCommon) -> None:
    deep = commands.add_parser(
        "deep", help="give every chunk a deep (multilingual, contextual) vector now, with a progress bar; or control the background worker"
    )
    deep.add_argument("--json", action="store_true", help="print the run's report as JSON")
    deep.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    control = deep.add_mutually_exclusive_group()
    control.add_argument(
        "--background", action="store_true",
        help="queue this index for the background worker (one per user, for all your indexes) and start it unless it runs",
    )  # fmt: skip
    control.add_argument("--stop", action="store_true", help="stop the background worker after its current batch; the queue is kept")
    control.add_argument("--pause", action="store_true", help="stop the background worker and start none (not even `index`) until --resume")
    control.add_argument("--resume", action="store_true", help="lift --pause and start the background worker if anything is queued")
    control.add_argument("--worker", action="store_true", help="run the background worker in this process (what `index` starts): serves every queued index, exits when none is left")
    deep.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)  # the worker lock, handed over by its starter
    add_common(deep)


def cmd_deep(args: argparse.Namespace, out: TextIO) -> int:
    if args.worker:
        return _run_worker(args, out)
    if args.stop or args.pause:
        return _stop_worker(out, pause=args.pause, as_json=args.json)
    if args.resume:
        return _resume_worker(out, as_json=args.json)
    from ..engine import open_index
    from .terminal import DeepBar, GracefulStop, format_deep_status

    if args.background:
        with open_index(args.vault, db=args.db, collection=args.collection, config_file=args.config, create=False) as index:
            return _queue(index, args, out)
    with GracefulStop("Finishing the current batch, then stopping", quiet=args.quiet) as stop, \
            open_index(args.vault, db=args.db, collection=args.collection, config_file=args.config, create=False) as index:  # fmt: skip
        bar = DeepBar(enabled=None if not args.quiet else False)
        try:
            while True:
                report = index.deepen(progress=bar, should_stop=stop)
                if report is not None or stop():
                    break
                _follow(index, bar, stop)  # another process runs the job
        finally:
            bar.clear()
        status = index.deep_status()
    if report is None:  # left to the process that holds the job
        if args.json:
            out.write(json.dumps({"running_elsewhere": True}) + "\n")
        return EXIT_INTERRUPTED if stop() else 0
    if args.json:
        out.write(json.dumps(report.to_dict(), ensure_ascii=False) + "\n")
    elif not args.quiet:
        rate = f" ({report.embedded / report.seconds:.1f} chunks/s)" if report.embedded and report.seconds else ""
        out.write(f"Deep vectors: {report.embedded:,} chunks embedded in {report.seconds:.1f} s{rate}\n")
        if status is not None:
            out.write(f"  {format_deep_status(status)}\n")
    return EXIT_INTERRUPTED if report.interrupted and stop() else 0


def _follow(index: Any, bar: Callable[[Any], None], should_stop: Callable[[], bool]) -> None:
    """Draw the progress of the job another process runs until it ends or stops."""
    from ..index.deepening import job_running
    from ..records import DeepProgress

    while not should_stop() and job_running(index.db_path):
        status = index.deep_status()
        if status is None or status.state == "complete":
            return
        bar(DeepProgress(status.embedded, status.chunks, status.rate, status.eta_seconds))
        time.sleep(POLL_SECONDS)


# -- the background worker ------------------------------------------------------------------
def _run_worker(args: argparse.Namespace, out: TextIO) -> int:
    """Be the background worker: idle priority, SIGTERM and Ctrl-C finish the batch first."""
    from ..agents.deep_worker import DeepWorker, lower_priority
    from ..index.deep_queue import (
        adopt_worker_lock,
        engine_threads,
        log_line,
        worker_name,
        worker_pid,
    )
    from ..storage.writer_lock import name_holder

    lock = adopt_worker_lock(args.lock_fd)
    if lock is None:  # another worker serves the queue
        if not args.quiet:
            out.write(f"A deep-tier worker already runs (pid {worker_pid()}); it serves the queue\n")
        return 0
    stop = {"asked": False}

    def ask(_signum: int, _frame: object) -> None:
        stop["asked"] = True

    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, ask)

    threads = _worker_threads(log_line)
    os.environ["OMP_NUM_THREADS"] = str(threads)  # before any model loads: the engine reads it once
    name_holder(lock, command=worker_name(threads))  # `vaultseek status` shows them
    log_line(f"started at {lower_priority()}, {engine_threads(threads)}")
    DeepWorker(should_stop=lambda: stop["asked"], log=log_line).run(lock)
    return 0


def _worker_threads(log: Callable[[str], None]) -> int:
    """The worker's engine threads, from ``deep_threads`` as the user set it for the machine; a
    bad value is logged and the default used (the worker has no terminal to say it on)."""
    from ..config import user_setting
    from ..errors import ConfigError
    from ..index.deep_queue import worker_threads

    try:
        return worker_threads(user_setting("deep_threads"))
    except ConfigError as exc:
        log(f"{exc.message}; using the default")
        return worker_threads(None)


def _say(out: TextIO, as_json: bool, text: str, facts: Mapping[str, object]) -> None:
    """A control command's outcome: a line for a person, or its facts as one JSON object."""
    out.write((json.dumps(facts) if as_json else text) + "\n")


def _stop_worker(out: TextIO, *, pause: bool, as_json: bool = False) -> int:
    """``--stop``: end the worker after its batch (SIGTERM; SIGKILL after
    :data:`STOP_GRACE_SECONDS`, which loses at most the batch in flight). ``--pause`` also
    keeps any from starting until ``--resume``."""
    from ..errors import IndexBusyError
    from ..index import deep_queue

    if pause:
        deep_queue.pause()
    after = (
        "none starts until `vaultseek deep --resume`"
        if pause
        else "`vaultseek index` or `vaultseek deep --resume` starts it again"
    )
    pid = _running_pid()
    if pid is None:
        facts: Mapping[str, object] = {"stopped": None, "paused": pause, "queued": _queued_count()}
        if pause:
            _say(out, as_json, f"Paused the deep tier's background work: {_queued()}; {after}", facts)
        else:
            _say(out, as_json, f"No deep-tier worker is running ({_queued()})", facts)
        return 0
    try:
        os.kill(pid, signal.SIGTERM)
        killed = not _wait_until_stopped(STOP_GRACE_SECONDS)
        if killed:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        killed = False
    except PermissionError as exc:
        raise IndexBusyError(
            f"cannot stop the deep-tier worker (pid {pid}): it is not this user's process",
            hint="its owner can stop it with `vaultseek deep --stop`",
        ) from exc
    if killed and not _wait_until_stopped(KILL_WAIT_SECONDS):
        raise IndexBusyError(f"the deep-tier worker (pid {pid}) has not stopped", hint=f"kill {pid}")
    how = f" (ended after {STOP_GRACE_SECONDS:g} s without finishing its batch; that batch is lost)" if killed else ""
    verb = "Paused: stopped" if pause else "Stopped"
    facts = {"stopped": pid, "paused": pause, "batch_lost": killed, "queued": _queued_count()}
    _say(out, as_json, f"{verb} the deep-tier worker (pid {pid}){how}; {_queued()}; {after}", facts)
    return 0


def _queued_count() -> int:
    """The queued indexes that still exist (one whose vault or file is gone is dropped when
    the worker or ``--resume`` meets it, and is not counted meanwhile)."""
    from ..index import deep_queue

    return sum(entry.gone() is None for entry in deep_queue.load_queue().entries)


def _queued() -> str:
    count = _queued_count()
    return f"{count:,} {'index stays' if count == 1 else 'indexes stay'} queued"


def _running_pid() -> int | None:
    """The worker's pid, once it has named itself (a worker started a moment ago may not
    have yet); None when none runs."""
    from ..index import deep_queue

    deadline = time.monotonic() + 2.0
    while deep_queue.worker_running():
        pid = deep_queue.worker_pid()
        if pid is not None or time.monotonic() > deadline:
            return pid
        time.sleep(0.05)
    return None


def _wait_until_stopped(seconds: float) -> bool:
    from ..index import deep_queue

    deadline = time.monotonic() + seconds
    while deep_queue.worker_running():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _resume_worker(out: TextIO, *, as_json: bool = False) -> int:
    from ..index import deep_queue

    outcome = deep_queue.resume()
    indexes = f"{outcome.queued:,} queued {'index' if outcome.queued == 1 else 'indexes'}"
    dropped = [{"vault": entry.vault, "index": entry.label, "why": why} for entry, why in outcome.dropped]
    facts = {"resumed": True, "started": outcome.started, "running": outcome.running, "queued": outcome.queued,
             "dropped": dropped}  # fmt: skip
    reasons = "; ".join(why for _entry, why in outcome.dropped)
    gone = f"dropped {len(dropped):,} {'index that is' if len(dropped) == 1 else 'indexes that are'} gone: {reasons}"
    if outcome.started is not None:
        text = f"Resumed: the deep-tier worker (pid {outcome.started}) embeds {indexes}"
    elif outcome.running:
        text = f"Resumed: the deep-tier worker was already running ({indexes})"
    else:
        nothing = f"nothing is queued ({gone})" if dropped else "nothing is queued"
        text = f"Resumed: {nothing}; the next `vaultseek index` starts the worker when it has work"
    if dropped and (outcome.started is not None or outcome.running):
        text += f"; {gone}"
    _say(out, as_json, text, facts)
    return 0


def _queue(index: Any, args: argparse.Namespace, out: TextIO) -> int:
    """``--background``: queue this index (if it has work left) and say where things stand."""
    outcome = continue_after_index(index)
    if args.json:
        out.write(json.dumps(outcome or {"state": "off"}) + "\n")
    elif not args.quiet:
        out.write((format_after_index(outcome) if outcome else "  deep tier: off (deep_tier = false)").strip() + "\n")
    return 0


# -- after `index` --------------------------------------------------------------------------
def continue_after_index(index: Any) -> dict[str, Any] | None:
    """After the fast index: queue the deep tier's remaining work for the background worker
    (starting it unless it runs or is paused), unless a job is on this index already (the
    worker, the daemon's watcher) or nothing is left. Returns what happened, for the summary
    (None: the tier is off)."""
    from ..agents.watch import writer_active
    from ..index.deep_queue import enqueue

    if not index.config.deep_tier:
        return None
    status = index.deep_status()
    if status is None:
        return None
    outcome: dict[str, Any] = {
        "state": status.state, "embedded": status.embedded, "chunks": status.chunks,
        "openings": status.openings, "openings_embedded": status.openings_embedded,
    }  # fmt: skip
    if status.state in ("waiting", "queued", "paused"):
        if writer_active(index.db_path):
            outcome["state"] = "watcher"  # the daemon's or `vaultseek watch`'s watcher continues it
        else:
            queued = enqueue(index.config)
            outcome["state"] = "paused" if queued.paused else "running" if queued.running else "waiting"
            outcome["queued"] = queued.queued
            if queued.started is not None:
                outcome["pid"] = queued.started
    if status.pending:
        outcome["eta_seconds"] = None if status.eta_seconds is None else round(status.eta_seconds)
        outcome["openings_eta_seconds"] = None if status.openings_eta_seconds is None else round(status.openings_eta_seconds)
    if status.reason:
        outcome["reason"] = status.reason
    return outcome


def format_after_index(outcome: dict[str, Any]) -> str:
    from .terminal import format_time_left

    share = f"{outcome['embedded']:,} of {outcome['chunks']:,} chunks have a deep vector"
    state = outcome["state"]
    left = format_time_left(
        outcome.get("eta_seconds"), outcome.get("openings_eta_seconds"), openings_pending=outcome["openings"] - outcome["openings_embedded"]
    )
    if state == "complete":
        return f"  deep tier: {share}, complete"
    if state == "unavailable":
        return f"  deep tier: off here ({outcome.get('reason')})"
    if state == "paused":
        return f"  deep tier: {share}; queued, but background work is paused — `vaultseek deep --resume` continues it"
    if state == "running":
        others = outcome.get("queued", 1) - 1
        sharing = f" (one worker for all your indexes; {others:,} more queued)" if others > 0 else ""
        return f"  deep tier: {share}; embedding the rest in the background{sharing}, {left} — `vaultseek status` shows progress, `vaultseek deep --stop` stops it"
    if state == "watcher":
        return f"  deep tier: {share}; the running watcher embeds the rest, {left}"
    return f"  deep tier: {share}; `vaultseek deep` embeds the rest"


COMMANDS = {"deep": cmd_deep}
