"""Splitting a parsed note into searchable chunks (:class:`~vaultseek.records.ChunkDraft`).

A chunk should be one idea a reader would want as a search hit: a section, not a whole note
(too coarse for ranking and snippets) and not a sentence (too little context for embeddings).
So the note is cut at its section headings and only cut finer when a section is too long.

Rules, in order:

1. The body is rendered once with :func:`~vaultseek.notes.markdown.render_links`, so sizes are
   measured on the text that is actually stored and embedded.
2. Sections start at every ``#``/``##`` heading outside fenced code. Level-1 headings count as
   section starts too (many vaults use ``#`` for sections), *except* a leading ``# H1`` that
   opens the note: that one belongs to the preamble, whose ``section`` is then the H1 text
   (otherwise ""), and whose breadcrumb is just the note title.
3. Sections (and ``###`` sub-sections) titled Related / See Also / Links / References are not
   indexed: they are link lists whose words would match every query about their targets.
4. A section over :data:`MAX_CHUNK_CHARS` is cut at its ``###`` headings; a piece still over the
   limit is cut at blank lines, packing paragraphs greedily. A plain paragraph over the limit
   is cut at line breaks, and a line over the limit at the last space before it (at the limit
   itself when there is none: a 3 MB base64 line). A fenced code block stays whole up to
   :data:`MAX_FENCED_CHARS`, and a longer one is cut the same way, so no chunk is ever longer
   than that: the deep model's work per chunk, and the size of a search hit, stay bounded.
5. Pieces under :data:`MIN_CHUNK_CHARS` (typically a lone heading line) are dropped.

Only the first piece of a split section starts with the heading line; later pieces carry the
heading in ``heading_context`` instead of repeating it in the text.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from typing import NamedTuple

from vaultseek.notes.markdown import (
    Heading,
    fence_spans,
    headings,
    in_spans,
    normalize_text,
    render_links,
)
from vaultseek.records import ChunkDraft, Note

__all__ = [
    "MAX_CHUNK_CHARS",
    "MAX_CONTEXT_TAGS",
    "MAX_FENCED_CHARS",
    "MIN_CHUNK_CHARS",
    "SKIPPED_SECTION_NAMES",
    "chunk_note",
]

MAX_CHUNK_CHARS = 2000
"""Soft upper bound on a chunk's length; only unsplittable blocks exceed it."""
MAX_FENCED_CHARS = 4 * MAX_CHUNK_CHARS
"""Hard upper bound on a chunk's length: a fenced code block longer than this is cut too."""
MIN_CHUNK_CHARS = 30
"""Pieces shorter than this (stripped) carry too little meaning to be worth a vector."""
MAX_CONTEXT_TAGS = 8
"""Tags listed in ``heading_context``; more would drown the title and section in it."""
SKIPPED_SECTION_NAMES = frozenset({"related", "see also", "links", "references"})

_BLANK_LINES = re.compile(r"\n(?:[ \t]*\n)+")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


class _Piece(NamedTuple):
    text: str
    section: str
    crumbs: tuple[str, ...]
    """Headings below the note title, outermost first, for the breadcrumb."""


def chunk_note(note: Note) -> list[ChunkDraft]:
    """Cut ``note.body`` into ordered chunks; an empty or whitespace-only body gives none."""
    text = render_links(normalize_text(note.body))
    if not text.strip():
        return []
    prefix = _context_prefix(note)
    found = headings(text)
    root = _breadcrumb_root(note.title, text, found)
    drafts: list[ChunkDraft] = []
    for piece in _pieces(text, found):
        body = _LEADING_BLANK_LINES.sub("", piece.text, count=1).rstrip()
        if len(body.lstrip()) < MIN_CHUNK_CHARS:
            continue
        breadcrumb = " > ".join((root, *piece.crumbs))
        drafts.append(
            ChunkDraft(
                section=piece.section,
                heading_context=prefix + breadcrumb,
                text=body,
                position=len(drafts),
            )
        )
    if not drafts and len(text.strip()) > 0:
        # A short note ("Call Bob about the invoice") is below the fragment limit, but it is a
        # whole note, not a fragment: keep it as one chunk so it can be found at all.
        drafts.append(
            ChunkDraft(section="", heading_context=prefix + root, text=text.strip(), position=0)
        )
    return drafts


def _opening_h1(text: str, found: list[Heading]) -> Heading | None:
    """The ``# H1`` a note opens with, if any: it names the note like a title does."""
    if found and found[0].level == 1 and not text[: found[0].start].strip():
        return found[0]
    return None


def _breadcrumb_root(title: str, text: str, found: list[Heading]) -> str:
    """The title, plus the opening H1 when it says something else (``bread > Sourdough``),
    so a note is findable by the name in its file and the name in its first line."""
    h1 = _opening_h1(text, found)
    if h1 is None or not h1.text or h1.text.casefold() == title.casefold():
        return title
    if any(h.level == 1 for h in found[1:]):  # several H1s are sections, not a title
        return title
    return f"{title} > {h1.text}"


def _context_prefix(note: Note) -> str:
    """``"Title | type | tags | "``: what every chunk of the note is about, empty parts omitted."""
    parts = [note.title]
    if note.type:
        parts.append(note.type)
    if note.tags:
        parts.append(", ".join(note.tags[:MAX_CONTEXT_TAGS]))
    return " | ".join(parts) + " | "


def _is_skipped(name: str) -> bool:
    return name.rstrip(":").strip().casefold() in SKIPPED_SECTION_NAMES


def _pieces(text: str, headings: list[Heading]) -> Iterator[_Piece]:
    """Walk the sections in order and yield their pieces (before the short-piece filter)."""
    title_h1 = _opening_h1(text, headings)
    bounds = [h for h in headings if h.level <= 2 and h is not title_h1]
    subs = [h for h in headings if h.level == 3]

    starts = [0, *(h.start for h in bounds)]
    ends = [*starts[1:], len(text)]
    heads: list[Heading | None] = [None, *bounds]
    k = 0
    crumbs: tuple[str, ...]
    for head, start, end in zip(heads, starts, ends, strict=True):
        inner: list[Heading] = []
        while k < len(subs) and subs[k].start < end:
            inner.append(subs[k])
            k += 1
        if start == end:
            continue
        if head is None:
            name, crumbs = (title_h1.text if title_h1 else ""), ()
        elif _is_skipped(head.text):
            continue
        else:
            name, crumbs = head.text, (head.text,)
        yield from _section_pieces(text, start, end, name, crumbs, inner)


def _section_pieces(
    text: str,
    start: int,
    end: int,
    name: str,
    crumbs: tuple[str, ...],
    subs: list[Heading],
) -> Iterator[_Piece]:
    """One section: whole if it fits, else its ``###`` parts, else packed paragraphs."""
    parts: list[_Piece] = [_Piece(text[start : subs[0].start if subs else end], name, crumbs)]
    for i, sub in enumerate(subs):
        if _is_skipped(sub.text):
            continue
        sub_end = subs[i + 1].start if i + 1 < len(subs) else end
        parts.append(_Piece(text[sub.start : sub_end], sub.text, (*crumbs, sub.text)))

    whole = parts[0].text if len(parts) == 1 else "".join(p.text for p in parts)
    if len(whole.strip()) <= MAX_CHUNK_CHARS:
        yield _Piece(whole, name, crumbs)
        return
    for part in parts:
        if len(part.text.strip()) <= MAX_CHUNK_CHARS:
            yield part
        else:
            for packed in _pack_paragraphs(part.text):
                yield _Piece(packed, part.section, part.crumbs)


def _pack_paragraphs(text: str) -> list[str]:
    """Greedily pack blank-line-separated blocks into pieces of at most the limit.

    Blank lines inside fenced code are not block breaks, so a code block always stays whole
    in one piece.
    """
    fences = fence_spans(text)
    blocks: list[str] = []
    pos = 0
    for m in _BLANK_LINES.finditer(text):
        if in_spans(fences, m.start()):
            continue
        _add_block(blocks, text[pos : m.start()], _overlaps(fences, pos, m.start()))
        pos = m.end()
    _add_block(blocks, text[pos:], _overlaps(fences, pos, len(text)))

    return _greedy(blocks, "\n\n")


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether any of the sorted ``spans`` intersects ``[start, end)``."""
    i = bisect_left(spans, (start, -1))
    return in_spans(spans, start) or (i < len(spans) and spans[i][0] < end)


def _add_block(blocks: list[str], block: str, fenced: bool) -> None:
    """Append a block, pre-cut at line breaks (and long lines at spaces) if it is over the limit:
    :data:`MAX_CHUNK_CHARS` for plain text, :data:`MAX_FENCED_CHARS` for one holding code."""
    block = block.rstrip()
    if not block.strip():
        return
    limit = MAX_FENCED_CHARS if fenced else MAX_CHUNK_CHARS
    if len(block) <= limit:
        blocks.append(block)
        return
    lines: list[str] = []
    for line in block.split("\n"):
        lines.extend(_cut_line(line, limit) if len(line) > limit else (line,))
    blocks.extend(_greedy(lines, "\n", limit))


def _cut_line(line: str, limit: int) -> list[str]:
    """Pieces of an over-long line, each at most ``limit`` characters: cut after the last space
    in the second half of each stretch, else at the limit. The spaces at the cuts are dropped
    and nothing else: every word stays whole unless it alone is longer than half the limit."""
    pieces: list[str] = []
    start = 0
    while len(line) - start > limit:
        # Leave at least a fragment's worth for the last piece, which would be dropped otherwise.
        end = start + min(limit, len(line) - start - MIN_CHUNK_CHARS)
        cut = line.rfind(" ", start + limit // 2, end)
        if cut == -1:
            pieces.append(line[start:end])
            start = end
        else:
            pieces.append(line[start:cut])
            start = cut + 1
    pieces.append(line[start:])
    return pieces


def _greedy(items: list[str], sep: str, limit: int = MAX_CHUNK_CHARS) -> list[str]:
    """Join consecutive items while the result stays within ``limit``; an item over the limit
    on its own becomes a piece of its own rather than being cut."""
    out: list[str] = []
    current: list[str] = []
    size = 0
    for item in items:
        extra = len(item) + (len(sep) if current else 0)
        if current and size + extra > limit:
            out.append(sep.join(current))
            current, size = [], 0
            extra = len(item)
        current.append(item)
        size += extra
    if current:
        out.append(sep.join(current))
    return out
