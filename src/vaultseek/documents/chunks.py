"""Segments → chunk drafts, with the same shape notes have.

Running text (PDF pages, DOCX sections, HTML, TXT) is cut by :func:`~.splitting.split_text`
(~1,000 characters, ~100 overlap) and pieces under 100 characters are dropped, except a whole
section under a heading of its own (a short DOCX, ODT or EPUB section is a chunk, as a note's
is); structured text (rows, slides, flattened data) keeps pieces down to 20 characters. A chunk
cites the page (slide, row range) its text is on: pages are chunked one by one, and a short
page is not dropped but joins the chunk before it, which then cites both (``pp. 3–4``), or,
before the first long page, the chunk after it (``pp. 1–2``); a document of short pages only
becomes one chunk per page, each citing its own. A segment
meant to stay whole (a slide, a batch of rows) is still cut once it passes
:data:`MAX_WHOLE_CHARS`, and a heading past :data:`MAX_HEADING_CHARS` is shortened, so one
enormous slide or title never becomes one enormous chunk or context line.

Every chunk's heading context names the document, its type and the place in it —
``Annual report | pdf | Annual report > page 3`` — so BM25 and the vectors both see it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..records import ChunkDraft, Location
from .extraction import Segment
from .splitting import split_text

CHUNK_CHARS = 1000
OVERLAP_CHARS = 100
MIN_RUNNING_CHARS = 100
MIN_STRUCTURED_CHARS = 20
MAX_WHOLE_CHARS = 8 * CHUNK_CHARS
MAX_HEADING_CHARS = 200

_SPACE_RUNS = re.compile(r"[ \t\u00a0]{2,}|[\t\u00a0]")
"""What becomes one space: runs of blanks, and a lone tab or no-break space. A lone space is
left alone, so a line of a million words is not rebuilt from a million pieces."""
_BLANK_RUNS = re.compile(r"\n\s*\n\s*\n+")


def clean_text(text: str) -> str:
    """One form for extracted text: ``\\n`` line ends, no NULs or soft hyphens, runs of
    spaces and of blank lines collapsed, lines right-trimmed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "").replace("\xad", "")
    text = text.replace("\f", "\n\n")
    text = "\n".join(_SPACE_RUNS.sub(" ", line).rstrip() for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", text).strip()


def _place(location: Location | None) -> list[str]:
    """Words for the heading context: ``page 3``, ``slide 2``, ``sheet Q1``, ``rows 2–21``."""
    return location.words(short=False) if location is not None else []


def document_chunks(segments: list[Segment], *, title: str, kind: str) -> list[ChunkDraft]:
    """Ordered chunk drafts for a document's (already scrubbed) segments."""
    drafts: list[ChunkDraft] = []
    leftovers: list[tuple[str, Segment]] = []
    previous: Segment | None = None
    drafted = Segment("")  # the segment the last draft came from
    for segment in segments:
        text = clean_text(segment.text)
        if not text:
            continue
        pieces = (
            [text]
            if segment.whole and len(text) <= MAX_WHOLE_CHARS
            else split_text(
                text, size=CHUNK_CHARS, overlap=0 if segment.structured else OVERLAP_CHARS
            )
        )
        minimum = MIN_STRUCTURED_CHARS if segment.structured else MIN_RUNNING_CHARS
        for piece in pieces:
            if len(piece) >= minimum or _is_section(piece, segment, pieces):
                if not drafts and _opens(leftovers, piece, segment):
                    # Short pages before the first long one (a cover, a title page) open it.
                    assert segment.location is not None and leftovers[0][1].location is not None
                    first = leftovers[0][1].location.page
                    piece = "\n\n".join([*(p for p, _s in leftovers), piece])
                    segment = replace(segment, location=replace(segment.location, page=first,
                                                                page_end=segment.location.page))  # fmt: skip
                    leftovers.clear()
                drafts.append(_draft(piece, segment, title, kind, len(drafts)))
                drafted = segment
            elif _joins(piece, segment, previous, drafts):
                last = drafts[-1]
                assert last.location is not None and segment.location is not None
                spans = replace(drafted, location=replace(last.location, page_end=segment.location.page))
                drafts[-1] = _draft(f"{last.text}\n\n{piece}", spans, title, kind, last.position)
            else:
                leftovers.append((piece, segment))
        previous = segment
    if not drafts and leftovers:
        # A short document ("Call Bob re: invoice") is below the fragment limit, but it is a
        # whole document, not a fragment: keep it so it can be found at all, one chunk per
        # page (or slide, …) so each cites the place its text is on.
        for location, group in _by_location(leftovers):
            text = "\n\n".join(piece for piece, _s in group)
            drafts.append(_draft(text, replace(group[0][1], location=location), title, kind, len(drafts)))
    return drafts


def _joins(piece: str, segment: Segment, previous: Segment | None, drafts: list[ChunkDraft]) -> bool:
    """Whether a short piece is a whole page of running text that can join the chunk before
    it (the previous page's last), rather than be dropped: the fact on a short page is found
    and cited with both pages."""
    last = drafts[-1] if drafts else None
    return (
        last is not None
        and previous is not None
        and not segment.structured
        and len(piece) >= MIN_STRUCTURED_CHARS
        and _page(segment.location) is not None
        and _page(previous.location) is not None
        and last.location is not None
        and (last.location.page_end or last.location.page) == _page(previous.location)
        and len(last.text) + len(piece) <= CHUNK_CHARS + MIN_RUNNING_CHARS
    )


def _is_section(piece: str, segment: Segment, pieces: list[str]) -> bool:
    """Whether a short piece is a whole section under a heading of its own (a Word, ODT or EPUB
    section: "Membership — junior fees rise by ten percent"), with text besides the heading: a
    chunk of its own, as a note's short section is, not a fragment to drop."""
    return (
        len(pieces) == 1
        and bool(segment.heading)
        and segment.location is None
        and not segment.structured
        and piece.strip() != clean_text(segment.heading[-1])
    )


def _opens(leftovers: list[tuple[str, Segment]], piece: str, segment: Segment) -> bool:
    """Whether the short pages kept back so far are whole pages of running text before
    ``segment``'s, short enough together to open the first chunk (which then cites them all)."""
    page = _page(segment.location)
    return (
        bool(leftovers)
        and page is not None
        and not segment.structured
        and all(not s.structured and len(p) >= MIN_STRUCTURED_CHARS and (_page(s.location) or page) < page
                for p, s in leftovers)
        and sum(len(p) for p, _s in leftovers) + len(piece) <= CHUNK_CHARS + MIN_RUNNING_CHARS
    )


def _page(location: Location | None) -> int | None:
    return location.page if location is not None else None


def _by_location(leftovers: list[tuple[str, Segment]]) -> list[tuple[Location | None, list[tuple[str, Segment]]]]:
    """Consecutive pieces grouped by the place they come from."""
    groups: list[tuple[Location | None, list[tuple[str, Segment]]]] = []
    for piece, segment in leftovers:
        if groups and groups[-1][0] == segment.location:
            groups[-1][1].append((piece, segment))
        else:
            groups.append((segment.location, [(piece, segment)]))
    return groups


def short_heading(text: str) -> str:
    """A heading or title as chunks show it: at most :data:`MAX_HEADING_CHARS` characters."""
    return text if len(text) <= MAX_HEADING_CHARS else text[: MAX_HEADING_CHARS - 1].rstrip() + "…"


def _draft(text: str, segment: Segment, title: str, kind: str, position: int) -> ChunkDraft:
    heading = [short_heading(h) for h in segment.heading]
    title = short_heading(title)
    crumbs = [title, *_place(segment.location), *heading]
    return ChunkDraft(
        section=heading[-1] if heading else "",
        heading_context=f"{title} | {kind} | {' > '.join(crumbs)}",
        text=text,
        position=position,
        location=segment.location,
    )
