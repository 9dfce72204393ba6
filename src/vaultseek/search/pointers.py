"""Pointer sections: a section that only points at another note ranks after that note.

An index page lists other notes, each with a line of description: the about_ topics' index
(``### [about_Type_Accelerators](about_Type_Accelerators.md)`` and the topic's one-line
summary), a module's page of cmdlets, an Obsidian map of content (``- [[Note A]] — what it
is``). Such a section holds the title's and the description's words in a handful of tokens,
so every list ranks it above the note it points to. It is still the way to the answer, but
the answer is the note: when the note it points to is also a candidate, that note takes the
pointer's place and the pointer follows it. When it is not a candidate the pointer keeps its
place.

A chunk of the ranking's first :data:`HEAD_NOTES` notes is a **pointer** when at least half of
its entries point at another indexed file its file links to:

* a heading that is the text of such a link, over 1 to :data:`MAX_GLOSS_WORDS` words and no
  code (``### [Compare-Object](Compare-Object.md)`` and a line);
* a line that begins with such a link's text and goes on for 1 to that many words (a list of
  links with a short gloss each). Other lines are entries that point nowhere; headings that
  are not links are not entries.

A bare list of links — a page's "Related links", "See also" — has no gloss and is no pointer:
the page it closes is an answer of its own, not an index.

Chunk text shows links as their text (``render_links``), so a line "begins with a link" when
its first words, compared as names are (:func:`~vaultseek.text.keys.name_key`), are the text
of one of the file's resolved links. Everything comes from the index as it is — the head's
chunks and their files' resolved links, two indexed reads — so nothing is re-indexed and the
step costs a millisecond or two. Of the notes a pointer names, the best-ranked candidate is
the one moved: it gets the pointer's score, the pointer a hair less. The moved chunk records
what it gained in ``signals["pointer"]``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from ..storage.store import ChunkRow, LinkRow, Store
from ..text.keys import name_key
from .fusion import Fused
from .grouping import FURTHER_SHARE, PAGE, PathsOf, notes_depth

POINTER = "pointer"
HEAD_NOTES = PAGE
"""Pointers are looked for among the chunks of the ranking's first ten notes (in either view,
whatever ``k``): the first page is where one would stand in its note's way, and the cost stays
that of a page."""
MAX_GLOSS_WORDS = 40
"""The most words a pointer's description may have (the about_ topics' longest has 32)."""
MAX_NAME_WORDS = 12
"""The most words of a line's start tried as a link's text."""
POINTER_SHARE = 0.5
"""The share of a section's lines that must be pointer lines for a list to be a pointer."""
_TRAILING = " \t\"'`[](){}<>?!.,:;#*|—–"
"""What may follow a link's text on its line before the gloss (``[[Note]]: …``, ``— …``)."""
_key = functools.lru_cache(maxsize=1 << 16)(name_key)
"""Link texts, headings and line starts recur from search to search: their keys are kept."""
_FENCES = ("```", "~~~")
_MARKER = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+|\|\s*|>\s*)*")


@dataclass(frozen=True, slots=True)
class LinkNames:
    """The texts of a file's links to other files, as name keys, each with the file it resolves
    to (the first link with that text wins); and the first word of each, which a line must
    begin with to be worth a closer look."""

    targets: dict[str, str]
    firsts: frozenset[str]

    @classmethod
    def of(cls, targets: Mapping[str, str]) -> LinkNames:
        return cls(dict(targets), frozenset(key.split(" ", 1)[0] for key in targets))


def link_names(links: Sequence[LinkRow]) -> dict[str, LinkNames]:
    """File → the names of the links it makes (:class:`LinkNames`)."""
    found: dict[str, dict[str, str]] = {}
    for link in links:
        if link.resolved is None or link.embed:
            continue
        names = found.setdefault(link.source, {})
        for shown in _shown(link):
            key = _key(shown)
            if key:
                names.setdefault(key, link.resolved)
    return {path: LinkNames.of(names) for path, names in found.items() if names}


def _shown(link: LinkRow) -> list[str]:
    """The texts a link may read as in a chunk: its alias, or its target without ``.md`` (and
    with a heading, ``target > heading``), and the target's bare file name."""
    if link.alias:
        return [link.alias]
    target = link.target[:-3] if link.target.lower().endswith(".md") else link.target
    bare = PurePosixPath(target).name
    shown = [f"{target} > {link.heading}" if link.heading else target, bare]
    return list(dict.fromkeys(s for s in shown if s))


def pointed(text: str, names: LinkNames) -> list[str]:
    """The files a chunk's ``text`` merely points at (see the module docstring), in the order
    it names them; empty when it is not a pointer.

    The text is read as entries: a heading and the lines under it, when the heading is a link's
    text (a pointer entry when those lines hold 1 to :data:`MAX_GLOSS_WORDS` words and no code), and
    every other line (a pointer entry when it begins with a link's text and goes on for 1 to
    that many words). Other headings are not entries."""
    entries: list[str | None] = []  # each entry's target, None for one that points nowhere
    open_heading: str | None = None  # the target of the linked heading being read
    gloss = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            if open_heading is not None:
                entries.append(open_heading if 0 < gloss <= MAX_GLOSS_WORDS else None)
            open_heading, gloss = names.targets.get(_key(line.lstrip().lstrip("#"))), 0
        elif open_heading is not None:  # code under it makes it a section of its own
            gloss += MAX_GLOSS_WORDS + 1 if line.lstrip().startswith(_FENCES) else len(line.split())
        else:
            entries.append(_leading_link(line, names))
    if open_heading is not None:
        entries.append(open_heading if 0 < gloss <= MAX_GLOSS_WORDS else None)
    found = [target for target in entries if target is not None]
    if found and len(found) >= POINTER_SHARE * len(entries):
        return list(dict.fromkeys(found))
    return []


def _leading_link(line: str, names: LinkNames) -> str | None:
    """The file whose link text begins ``line`` (after a list or table marker) and is followed
    by 1 to :data:`MAX_GLOSS_WORDS` words, or None."""
    words = _MARKER.sub("", line, count=1).split()
    if not words or len(words) > MAX_NAME_WORDS + MAX_GLOSS_WORDS:
        return None  # a line of prose: no need to look
    if _key(words[0]).split(" ", 1)[0] not in names.firsts:
        return None
    keys = _key(" ".join(words[:MAX_NAME_WORDS])).split(" ")
    for n in range(len(keys), 0, -1):
        target = names.targets.get(" ".join(keys[:n]).rstrip(_TRAILING))
        if target is not None:
            gloss = sum(1 for word in keys[n:] if any(ch.isalnum() for ch in word))
            gloss += max(0, len(words) - MAX_NAME_WORDS)
            return target if 0 < gloss <= MAX_GLOSS_WORDS else None
    return None


def follow_pointers(
    store: Store, fused: list[Fused], known: Mapping[int, ChunkRow], paths_of: PathsOf | None = None,
    share: float = FURTHER_SHARE,
) -> tuple[list[Fused], dict[int, ChunkRow]]:
    """``fused`` with each pointer among the chunks of its first :data:`HEAD_NOTES` notes placed
    after the best candidate it points at (see the module docstring; unchanged when there is
    none), and ``known`` — rows already read — with the head's rows added: the results are
    mostly among them, so they are not read twice. ``paths_of`` reads chunks' paths (default:
    from ``store``); ``share`` is the note view's (``grouping.share_for``)."""
    if not fused:
        return fused, dict(known)
    paths_of = paths_of or store.chunk_paths
    head = fused[: notes_depth(fused, HEAD_NOTES, paths_of, share)]
    missing = [f.item for f in head if f.item not in known]
    rows = {**known, **(store.chunks_by_id(missing) if missing else {})}
    names = link_names(store.links_out(sorted({rows[f.item].path for f in head if f.item in rows})))
    if not names:
        return fused, rows
    targets: dict[int, list[str]] = {}
    for f in head:
        row = rows.get(f.item)
        if row is not None and row.path in names:
            found = pointed(row.text, names[row.path])
            if found:
                targets[f.item] = found
    if not targets:
        return fused, rows
    paths = paths_of([f.item for f in fused])
    best: dict[str, int] = {}  # file → the position of its best chunk
    for position, f in enumerate(fused):
        path = paths.get(f.item)
        if path is not None:
            best.setdefault(path, position)
    out = list(fused)
    moved = False
    for position, f in enumerate(fused):
        if f.item not in targets:
            continue
        ahead = [best[p] for p in targets[f.item] if p in best]
        if not ahead:
            continue  # none of the notes it points at is a candidate: it keeps its place
        chosen = min(ahead)
        if chosen < position:
            continue  # already ahead of it
        score = out[position].score
        target = out[chosen]
        lift = score - target.score
        out[chosen] = replace(target, score=score, signals={**target.signals, POINTER: round(lift, 6)})
        out[position] = replace(out[position], score=score - 1e-9 * max(abs(score), 1.0))
        best[paths[target.item]] = position
        moved = True
    if not moved:
        return fused, rows
    return sorted(out, key=lambda f: -f.score), rows  # stable: ties keep the fused order
