"""The ``index`` command: index a vault, settle its default index, continue the deep tier."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from .common import EXIT_INTERRUPTED, open_index_for

AddCommon = Callable[[argparse.ArgumentParser], None]


def add_parsers(commands: Any, add_common: AddCommon) -> None:
    index = commands.add_parser("index", help="index a vault (incremental after the first run)")
    index.add_argument("folder", nargs="?", help="the vault folder (default: --vault or the last one)")
    index.add_argument("--json", action="store_true", help="print the run's report as JSON")
    index.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    index.add_argument("--deep", action=argparse.BooleanOptionalAction, default=None, help="continue the deep tier in the background afterwards (default: the configuration's deep_tier, on)")
    index.add_argument("--wait", type=_seconds, metavar="SECONDS", help="while another vaultseek writes this index, wait at most this long, then exit 4 (default: wait until it is done; 0: do not wait)")
    index.add_argument("--make-default", action="store_true", help="make this --db the vault's default index (the one commands without --db open); without it, an index elsewhere leaves the default as it is")
    add_common(index)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def cmd_index(args: argparse.Namespace, out: TextIO) -> int:
    from dataclasses import replace

    from ..config import index_label
    from .deep import continue_after_index, format_after_index
    from .terminal import GracefulStop, ProgressBar, format_sync_report, lock_waiter

    with GracefulStop("Finishing the current file, then stopping") as stop, \
            open_index_for(args, create=True, vault=args.folder) as index:  # fmt: skip
        if args.deep is not None:
            index.config = replace(index.config, deep_tier=args.deep)
        bar = ProgressBar(enabled=None if not args.quiet else False)
        try:
            waiter = None if args.quiet else lock_waiter(index_label(index.config), timeout=args.wait)
            report = index.sync(progress=bar, should_stop=stop, wait=args.wait, on_wait=waiter)
        finally:
            bar.clear()
        if not report.interrupted:
            _settle_default(index, make_default=args.make_default)
        deep = None if report.interrupted else continue_after_index(index)
        if args.json:
            out.write(json.dumps({**report.to_dict(), **({"deep": deep} if deep else {})}, ensure_ascii=False) + "\n")
        elif not args.quiet:
            out.write(format_sync_report(report, vault=str(index.vault), db=index_label(index.config)) + "\n")
            if deep is not None:
                out.write(format_after_index(deep) + "\n")
    return EXIT_INTERRUPTED if report.interrupted else 0


def _settle_default(index: Any, *, make_default: bool) -> None:
    """With ``--make-default``, make this index the vault's default; otherwise say so when the
    default is another index (the run left it where it was: see ``VaultRegistry.remember``)."""
    import shlex

    from ..config import index_arguments
    from ..places import VaultRegistry

    config = index.config
    registry = VaultRegistry()
    if make_default or config.database_url is not None:
        # A PostgreSQL index is recorded here, with its URL (without the password): it becomes
        # the vault's default when there is none yet, as a first index file does.
        registry.remember(index.vault, index.db_path, make_default=make_default,
                          database_url=config.database_url, collection=config.collection)  # fmt: skip
    if make_default:
        return
    default = registry.db_for(index.vault)
    if default != index.db_path:
        # --db … (and --collection … for PostgreSQL)
        flags = [word for flag in index_arguments(config)[1:] for word in flag.split("=", 1)]
        command = shlex.join(["vaultseek", "index", str(index.vault), *flags, "--make-default"])
        remembered = registry.database_for(index.vault)
        shown = f"{remembered[0]} (collection {remembered[1]})" if remembered else str(default)
        sys.stderr.write(
            f"note: the vault's default index stays {shown} (commands without --db open it); "
            f"pass {shlex.join(flags)} to use this one, or make it the default: {command}\n"
        )


COMMANDS = {"index": cmd_index}
