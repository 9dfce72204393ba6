"""The ``map`` command: parse, call :meth:`~vaultseek.engine.Index.vault_map` (or
``map_note``), render as text, JSON or a picture."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ..errors import QueryError
from .common import open_index_for

AddCommon = Callable[[argparse.ArgumentParser], None]
_SHOWN_MISSING = 10


def add_parsers(commands: Any, add_common: AddCommon, positive_int: Callable[[str], int]) -> None:
    found = commands.add_parser(
        "map", help="a map of the vault: clusters and their names, bridges, islands, missing links (docs/map.md)"
    )
    found.add_argument("--note", metavar="NOTE", help="one note's place: its cluster, nearest notes and missing links")
    found.add_argument("--out", metavar="FILE", help="also draw the map into FILE (.svg, or .png with the documents extra)")
    found.add_argument("--json", action="store_true", help="machine-readable output: every note, cluster and missing link")
    found.add_argument("--rebuild", action="store_true", help="lay the whole map out anew (otherwise only changed notes move)")
    found.add_argument("--clusters", type=positive_int, metavar="N", help="how many clusters (default: grows with the vault, up to 40)")
    found.add_argument("--missing", type=int, default=None, metavar="N", help=f"missing links listed (default {_SHOWN_MISSING}; 50 with --json)")
    found.add_argument("-k", type=positive_int, default=10, help="nearest notes shown with --note (default 10)")
    scope = found.add_argument_group("scope (a map of these notes alone, made fresh)")
    scope.add_argument("--folder", action="append", metavar="FOLDER", help="only files in this folder")
    scope.add_argument("--tag", action="append", metavar="TAG", help="only notes with this tag")
    scope.add_argument("--kind", action="append", metavar="KIND", help="only files of this kind (note, pdf, …)")
    scope.add_argument("--after", metavar="WHEN", help="modified at or after (2026-01-31, or an age: 7d, 3mo)")
    scope.add_argument("--before", metavar="WHEN", help="modified before")
    add_common(found)


def cmd_map(args: argparse.Namespace, out: TextIO) -> int:
    from ..reports import MapRequest

    if args.missing is not None and args.missing < 0:
        raise QueryError("--missing must be 0 or more")
    out_path = Path(args.out) if args.out else None
    if out_path is not None and out_path.suffix.lower() not in (".svg", ".png"):
        raise QueryError(f"cannot draw {out_path.name}: name a .svg or .png file")
    filters = {
        name: value
        for name, value in (("folders", args.folder), ("tags", args.tag), ("kinds", args.kind),
                            ("modified_after", args.after), ("modified_before", args.before))
        if value is not None
    }  # fmt: skip
    with open_index_for(args, create=False) as index:
        if args.note:
            note = index.map_note(args.note, k=args.k)
            out.write((json.dumps(note.to_dict(), ensure_ascii=False) if args.json else format_note(note)) + "\n")
            return 0
        limit = args.missing if args.missing is not None else (50 if args.json else _SHOWN_MISSING)
        request = MapRequest(filters=filters or None, rebuild=args.rebuild, clusters=args.clusters)
        found = index.vault_map(request, limit=limit, progress=_progress(args.json))
    if out_path is not None:
        from ..vaultmap import picture

        if out_path.suffix.lower() == ".svg":
            out_path.write_text(picture.svg(found), encoding="utf-8")
        else:
            picture.png(found, out_path)
    out.write((json.dumps(found.to_dict(), ensure_ascii=False) if args.json else format_map(found, out_path)) + "\n")
    return 0


def _progress(quiet: bool) -> Callable[[str], None] | None:
    if quiet or not sys.stderr.isatty():
        return None

    def say(message: str) -> None:
        sys.stderr.write(f"map: {message}…\n")

    return say


def format_map(found: Any, picture: Path | None) -> str:
    roles = Counter(note.role for note in found.notes)
    how = {"kept": "as kept", "updated": f"updated: {found.moved} notes placed anew", "built": "built",
           "scoped": "made for the scope"}[found.how]  # fmt: skip
    lines = [
        f"Map of {len(found.notes):,} notes in {len(found.clusters)} clusters ({found.space} vectors; {how}, {found.seconds:.1f} s)",
        f"  {roles['core']:,} core · {roles['member']:,} members · {roles['bridge']:,} bridges · {roles['island']:,} islands",
        "",
        "Clusters (largest first):",
    ]
    for cluster in sorted(found.clusters, key=lambda c: -c.size):
        thin = "  (thin)" if cluster.thin else ""
        central = ", ".join(path.rsplit("/", 1)[-1].removesuffix(".md") for path in cluster.central)
        lines.append(f"  {cluster.id:>3}  {cluster.size:>6,}  {cluster.label}{thin}")
        lines.append(f"              central: {central}")
    if found.missing_links:
        lines += ["", f"Missing links (closest unlinked pairs, {len(found.missing_links)} shown):"]
        for link in found.missing_links:
            lines.append(f"  {link.similarity:.2f}  {link.source}  ↔  {link.target}   add {link.link}")
    if picture is not None:
        lines += ["", f"Drawn: {picture}"]
    lines += [f"note: {notice}" for notice in found.notices]
    return "\n".join(lines)


def format_note(found: Any) -> str:
    lines = [
        f"{found.path}" + (f" — {found.title}" if found.title else ""),
        f"  cluster {found.cluster.id}: {found.cluster.label}",
        f"  role: {found.role} (bridge {found.bridge:.2f}, density {found.density:.2f})",
        "",
    ]
    lonely = bool(found.neighbours) and all(near.close is False for near in found.neighbours)
    lines.append("Nearest notes (none is close in meaning or linked):" if lonely else "Nearest notes:")
    for near in found.neighbours:
        marks = ["linked" if near.linked else "not linked"]
        if near.close is False and not lonely:
            marks.append("not close")
        lines.append(f"  {near.similarity:.2f}  {near.path}  (cluster {near.cluster}, {', '.join(marks)})")
    if found.missing_links:
        lines += ["", "Missing links:"]
        for link in found.missing_links:
            lines.append(f"  {link.similarity:.2f}  add {link.link}")
            if link.source_passage and link.target_passage:
                lines.append(f"        here:  {link.source_passage.text[:120]}")
                lines.append(f"        there: {link.target_passage.text[:120]}")
    return "\n".join(lines)


COMMANDS = {"map": cmd_map}
