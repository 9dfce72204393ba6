"""The ``intake`` and ``review`` commands: parse, call :class:`vaultseek.intake.Intake`,
render. Kept apart from :mod:`cli` (which registers them) so the light entry points never
import the intake stack."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ..errors import IntakeError

AddCommon = Callable[[argparse.ArgumentParser], None]


def add_parsers(commands: Any, add_common: AddCommon) -> None:
    intake = commands.add_parser("intake", help="score and route incoming items (file, folder, - for stdin, or the inbox)")
    intake.add_argument("source", nargs="?", help="a file, a folder, or - for stdin (default: the inbox folder)")
    intake.add_argument("--dry-run", action="store_true", help="show scores and the decision; move nothing")
    intake.add_argument("--json", action="store_true", help="machine-readable output")
    intake.add_argument("--domain", metavar="NAME", help="file it into this domain folder, whatever the scores")
    add_common(intake)

    review = commands.add_parser("review", help="the review queue: list it, accept or discard an item")
    review.add_argument("--json", action="store_true", help="machine-readable output")
    actions = review.add_subparsers(dest="action", metavar="ACTION")
    accept = actions.add_parser("accept", help="file a queued (or discarded) item into its domain")
    accept.add_argument("item", help="the item's file name, as `vaultseek review` lists it")
    accept.add_argument("--domain", metavar="NAME", help="re-route it into this domain folder instead")
    accept.add_argument("--json", action="store_true", help="machine-readable output")
    add_common(accept)
    discard = actions.add_parser("discard", help="move a queued item to the discard folder")
    discard.add_argument("item", help="the item's file name")
    discard.add_argument("--json", action="store_true", help="machine-readable output")
    add_common(discard)
    add_common(review)


def _open_intake(args: argparse.Namespace) -> Any:
    from ..engine import open_index
    from ..intake import Intake
    from .terminal import lock_waiter

    index = open_index(args.vault, db=args.db, collection=args.collection, config_file=args.config, create=True)
    try:
        if index.store.get_meta("last_indexed") is None:
            # intake routes by the vault's content: it must be indexed first
            index.sync(on_wait=lock_waiter(index.db_path, timeout=None))
        return index, Intake(index)
    except BaseException:
        index.close()
        raise


def cmd_intake(args: argparse.Namespace, out: TextIO) -> int:
    index, intake = _open_intake(args)
    with index:
        if args.source == "-":
            text = sys.stdin.read()
            outcomes = [intake.take_text(text, dry_run=args.dry_run, domain=args.domain)]
        elif args.source is None:
            if args.domain:
                raise IntakeError("--domain goes with one item", hint="vaultseek intake FILE --domain NAME")
            outcomes = intake.take_inbox(dry_run=args.dry_run)
        else:
            outcomes = intake.take(Path(args.source), dry_run=args.dry_run, domain=args.domain)
        if not args.dry_run:
            _queue_deep(index)
    if args.json:
        out.write(json.dumps({"dry_run": args.dry_run, "items": [o.to_dict() for o in outcomes]}, ensure_ascii=False) + "\n")
    else:
        if not outcomes:
            out.write("nothing to take" + (" (the inbox is empty)" if args.source is None else "") + "\n")
        for outcome in outcomes:
            out.write(format_outcome(outcome) + "\n")
    return 1 if any(o.error for o in outcomes) else 0


def format_outcome(outcome: Any) -> str:
    if outcome.error is not None:
        return f"{outcome.item}: not taken: {outcome.error} (left where it is)"
    a = outcome.assessment
    where = {"file": a.domain or "(vault top level)", "review": "review queue", "discard": "discarded"}[a.decision]
    lines = [
        f"{outcome.item}: {a.decision.upper()} → {where}   total {a.total:.3f}"
        + (f"   written to {outcome.destination}" if outcome.destination else "   (dry run: nothing moved)")
    ]
    for reason in a.reasons:
        lines.append(f"  {reason}")
    for dimension, weight in zip(a.dimensions, a.weights, strict=True):
        lines.append(f"  {dimension.name:<13} {dimension.score:.3f} × {weight:g}")
        lines.extend(f"      {reason}" for reason in dimension.reasons)
    return "\n".join(lines)


def cmd_review(args: argparse.Namespace, out: TextIO) -> int:
    index, intake = _open_intake(args)
    with index:
        if args.action is None:
            queue = intake.queue()
            if args.json:
                out.write(json.dumps({"items": [q.to_dict() for q in queue]}, ensure_ascii=False) + "\n")
            elif not queue:
                out.write("the review queue is empty\n")
            else:
                for q in queue:
                    scores = " ".join(f"{k[:3]} {v:.2f}" for k, v in q.scores.items())
                    total = f"{q.total:.3f}" if isinstance(q.total, (int, float)) else "  ?  "
                    out.write(f"{total}  {q.name}  → {q.domain or '(top level)'}  [{scores}]  {q.title}\n")
            return 0
        if args.action == "accept":
            outcome = intake.accept(args.item, domain=args.domain)
            _queue_deep(index)
        else:
            outcome = intake.discard(args.item)
    if args.json:
        out.write(json.dumps(outcome.to_dict(), ensure_ascii=False) + "\n")
    else:
        out.write(f"{outcome.item} → {outcome.destination}\n")
    return 0


def _queue_deep(index: Any) -> None:
    """What intake filed gets its deep vectors from the background worker, as after
    ``vaultseek index`` (nothing when the deep tier is off or has no work left)."""
    from .deep import continue_after_index

    continue_after_index(index)


COMMANDS = {"intake": cmd_intake, "review": cmd_review}
