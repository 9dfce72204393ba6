"""How many chunks the seed design's chunker makes of a note, without importing the chunker.

The benchmark vault is tuned to a chunk target (see `benchmarks.vaultgen`) by this estimate,
so any change to it changes the vault every seed gives.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_SECTION_CHARS = 2_000
"""A ``##`` section longer than this is split further (at ``###``, then at paragraphs)."""
MIN_PIECE_CHARS = 30
"""Pieces shorter than this carry too little text to be worth a chunk and are dropped."""
SKIPPED_SECTION_TITLES = frozenset({"related", "see also", "links", "references"})
"""``##`` sections with these titles (compared lower-cased) hold link lists, not content."""


def estimate_chunks(text: str) -> int:
    """How many chunks the seed design's chunker makes of one note.

    A stand-in for the project's chunker, which is written concurrently, so that the vault can be
    tuned without importing it. Rules: frontmatter removed; the note is cut at ``## `` headings
    (outside code fences; the text before the first one is a section too); sections titled as in
    `SKIPPED_SECTION_TITLES` are dropped; a section longer than `MAX_SECTION_CHARS` is cut at
    ``### `` headings and any part still too long is packed greedily from its blank-line separated
    paragraphs into pieces of at most `MAX_SECTION_CHARS` (one longer paragraph stays whole);
    pieces shorter than `MIN_PIECE_CHARS` (stripped, heading line excluded) are dropped.
    """
    count = 0
    for title, section in _split_at_heading(_strip_frontmatter(text), "## "):
        if title.strip().rstrip(":").strip().lower() in SKIPPED_SECTION_TITLES:
            continue
        count += _count_pieces(section.strip())
    return count


def _count_pieces(section: str) -> int:
    if len(section) <= MAX_SECTION_CHARS:
        return int(len(section) >= MIN_PIECE_CHARS)
    count = 0
    for _, sub in _split_at_heading(section, "### "):
        sub = sub.strip()
        if len(sub) <= MAX_SECTION_CHARS:
            count += len(sub) >= MIN_PIECE_CHARS
        else:
            count += sum(len(p) >= MIN_PIECE_CHARS for p in _pack_paragraphs(sub))
    return count


def _strip_frontmatter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 3)
        if end != -1 and text[end + 4 : end + 5] in ("\n", ""):
            return text[end + 5 :]
    return text


def _split_at_heading(text: str, marker: str) -> Iterator[tuple[str, str]]:
    """(title, body) pairs, cutting at lines that start with ``marker`` outside code fences."""
    title, in_fence = "", False
    lines: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if not in_fence and line.startswith(marker):
            yield title, "\n".join(lines)
            title, lines = line[len(marker) :].strip(), []
        else:
            lines.append(line)
    yield title, "\n".join(lines)


def _pack_paragraphs(text: str) -> list[str]:
    pieces: list[str] = []
    current = ""
    for para in (p.strip() for p in re.split(r"\n[ \t]*\n", text)):
        if not para:
            continue
        if current and len(current) + 2 + len(para) > MAX_SECTION_CHARS:
            pieces.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    if current:
        pieces.append(current)
    return pieces
