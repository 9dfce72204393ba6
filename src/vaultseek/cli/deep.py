"""The ``deep`` command and what ``index`` does about the deep tier after the fast index.

Kept apart from :mod:`cli` (which registers it) so that module stays a list of commands. The
work itself is :meth:`Index.deepen`; this module decides where it runs (here, or in a
detached worker) and renders it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any, TextIO

AddCommon = Callable[[argparse.ArgumentParser], None]
EXIT_INTERRUPTED = 130
POLL_SECONDS = 1.0
"""How often ``vaultseek deep`` looks at a job another process runs."""


def add_parsers(commands: Any, add_common: AddCommon) -> None:
    deep = commands.add_parser(
        "deep", help="give every chunk a deep (multilingual, contextual) vector now, with a progress bar"
    )
    deep.add_argument("--json", action="store_true", help="print the run's report as JSON")
    deep.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    deep.add_argument(
        "--background", action="store_true",
        help="run as the detached worker `index` starts: lowered priority, exits when done",
    )  # fmt: skip
    add_common(deep)


def cmd_deep(args: argparse.Namespace, out: TextIO) -> int:
    from ..engine import open_index
    from .terminal import DeepBar, GracefulStop, format_deep_status

    if args.background:
        os.nice(10)  # the user's own work comes first
    with GracefulStop("Finishing the current batch, then stopping", quiet=args.quiet) as stop, \
            open_index(args.vault, db=args.db, collection=args.collection, config_file=args.config, create=False) as index:  # fmt: skip
        bar = DeepBar(enabled=None if not args.quiet and not args.background else False)
        try:
            while True:
                report = index.deepen(progress=bar, should_stop=stop)
                if report is not None or args.background or stop():
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
    elif not args.quiet and not args.background:
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
        bar(DeepProgress(status.embedded, status.chunks, status.rate))
        time.sleep(POLL_SECONDS)


def continue_after_index(index: Any, args: argparse.Namespace) -> dict[str, Any] | None:
    """After the fast index: hand the deep tier's remaining work to a detached worker,
    unless a job already runs (a worker, the daemon's watcher) or nothing is left. Returns
    what happened, for the summary (None: the tier is off)."""
    from ..agents.watch import writer_active
    from ..index.deepening import start_worker

    if not index.config.deep_tier:
        return None
    status = index.deep_status()
    if status is None:
        return None
    outcome: dict[str, Any] = {"state": status.state, "embedded": status.embedded, "chunks": status.chunks}
    if status.state == "waiting":
        if writer_active(index.db_path):
            outcome["state"] = "watcher"  # the daemon's or `vaultseek watch`'s watcher continues it
        else:
            pid = start_worker(index.config, config_file=args.config)
            outcome["state"] = "running" if pid is not None else status.state
            if pid is not None:
                outcome["pid"] = pid
    if status.rate and status.pending:
        outcome["eta_seconds"] = round(status.pending / status.rate)
    if status.reason:
        outcome["reason"] = status.reason
    return outcome


def format_after_index(outcome: dict[str, Any]) -> str:
    from .terminal import format_duration

    share = f"{outcome['embedded']:,} of {outcome['chunks']:,} chunks have a deep vector"
    eta = f" (~{format_duration(outcome['eta_seconds'])})" if outcome.get("eta_seconds") else ""
    state = outcome["state"]
    if state == "complete":
        return f"  deep tier: {share}, complete"
    if state == "unavailable":
        return f"  deep tier: off here ({outcome.get('reason')})"
    if state == "running":
        return f"  deep tier: {share}; embedding the rest in the background{eta} — `vaultseek status` shows progress, `vaultseek deep` waits for it"
    if state == "watcher":
        return f"  deep tier: {share}; the running watcher embeds the rest{eta}"
    return f"  deep tier: {share}; `vaultseek deep` embeds the rest"


COMMANDS = {"deep": cmd_deep}
