"""The ``links`` and ``related`` commands: parse, call :class:`~vaultseek.engine.Index`,
render. Kept apart from :mod:`cli` (which registers them) so it stays a list of commands."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any, TextIO

from .common import open_index_for

AddCommon = Callable[[argparse.ArgumentParser], None]


def add_parsers(commands: Any, add_common: AddCommon, positive_int: Callable[[str], int]) -> None:
    links = commands.add_parser("links", help="a note's links: outgoing (resolved and unresolved) and backlinks")
    links.add_argument("note", help="a vault-relative path, or a note's name as a link would write it")
    links.add_argument("--json", action="store_true", help="machine-readable output")
    add_common(links)

    related = commands.add_parser("related", help="notes related to a note, by links and by meaning")
    related.add_argument("note", help="a vault-relative path, or a note's name as a link would write it")
    related.add_argument("-k", type=positive_int, default=10, help="how many notes (default 10)")
    related.add_argument("--json", action="store_true", help="machine-readable output")
    add_common(related)


def _open(args: argparse.Namespace) -> Any:
    return open_index_for(args, create=False)


def cmd_links(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as index:
        found = index.links(args.note)
    out.write((json.dumps(found.to_dict(), ensure_ascii=False) if args.json else format_links(found)) + "\n")
    return 0


def cmd_related(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as index:
        found = index.related(args.note, k=args.k)
    out.write((json.dumps(found.to_dict(), ensure_ascii=False) if args.json else format_related(found)) + "\n")
    return 0


def _written(link: Any) -> str:
    """A link as its note writes it (wiki links in brackets, markdown links as the path)."""
    target = link.target + (f"#{link.heading}" if link.heading else "")
    if link.syntax == "markdown":
        return f"{'!' if link.embed else ''}[{link.alias or ''}]({target})"
    return f"{'!' if link.embed else ''}[[{target}{'|' + link.alias if link.alias else ''}]]"


def format_links(found: Any) -> str:
    resolved = [link for link in found.outgoing if link.path is not None]
    missing = len(found.missing_headings)
    lines = [found.path, "", f"Links ({len(resolved)}" + (f", {missing} to a missing heading):" if missing else "):")]
    lines += [f"  → {'(this note)' if link.via == 'self' else link.path}  {_written(link)}"
              + (" (by alias)" if link.via == "alias" else "")
              + ("  (heading not found)" if link.heading_found is False else "") for link in resolved]  # fmt: skip
    if found.unresolved:
        lines += ["", f"Unresolved ({len(found.unresolved)}):"]
        lines += [f"  ? {_written(link)}" for link in found.unresolved]
    sources = list(dict.fromkeys(link.source for link in found.backlinks))
    lines += ["", f"Backlinks ({len(sources)} notes):"]
    for source in sources:
        written = [_written(link) for link in found.backlinks if link.source == source]
        lines.append(f"  ← {source}  {', '.join(written)}")
    lines += [f"note: {notice}" for notice in found.notices]
    return "\n".join(lines)


def format_related(found: Any) -> str:
    lines = [f"note: {notice}" for notice in found.notices]
    lines.append(f"Related to {found.path}:")
    if not found.results:
        lines.append("  (nothing: no links and no similar notes)")
    for n, note in enumerate(found.results, start=1):
        why = []
        if note.linked:
            why.append({"to": "this note links to it", "from": "it links to this note", "both": "linked both ways"}[note.linked])
        if note.shared:
            names = [path.rsplit("/", 1)[-1].removesuffix(".md") for path in note.shared[:3]]
            why.append("both linked with " + ", ".join(names) + (" …" if len(note.shared) > 3 else ""))
        if note.similarity is not None:
            why.append(f"similarity {note.similarity:.2f}")
        if note.deep_rank is not None:  # its cosines crowd together (0.75–0.92): the rank says more
            why.append(f"deep #{note.deep_rank}")
        if note.close is False and not found.nothing_close:
            why.append("not close")
        lines.append(f"{n:>3}. {note.path}" + (f" — {note.title}" if note.title else ""))
        lines.append(f"     {'; '.join(why)}")
    return "\n".join(lines)


COMMANDS = {"links": cmd_links, "related": cmd_related}
