"""The note view: a fused list of chunks read as a list of notes.

A search ranks chunks — the sections of notes, the pages of documents — so three sections of
one note can fill the first five places. The note view answers with files instead: each note
once, where its best chunk ranks (so the note order is the order in which the fused list first
meets each file), with its best chunks as its sections:

* at most :data:`MAX_SECTIONS` sections a note, best first;
* an extra section must earn its place twice over: it ranks above the best chunk of the
  :data:`PAGE`-th note (it would make a first page of ten notes on its own merit), and it scores
  at least :data:`SECTION_SHARE` of its note's best section (a title match's bonus aside: it
  names the note, not a section). A note's weak tail — a section matched by one common word,
  far down the list — stays out, in a long list by the first test, in a short one (a narrow
  filter, a small vault) by the second.

``k`` counts notes, so the fused list is read as deep as it takes to find them (through
``paths_of``, in batches: a few more rows than the chunk view reads, never the whole list when
its head holds enough notes). Every signal has already run on the chunks; a note keeps what
they did to its sections, and a document's sections keep their pages, slides and sheets.

On the PowerShell documentation's long pages (``python -m benchmarks.noteview``), the first ten
notes of a page-title query show 2.42 sections each with the cap alone, 1.63 with the position
test, 1.71 with the share, 1.56 with both. No judged set judges sections, so the rule is not
tuned on judgments: it decides what is shown beside a note, never where the note ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import PurePosixPath

from ..records import NoteResult, SearchResult
from .fusion import Fused

MAX_SECTIONS = 3
"""The most sections one note shows: its best and up to two more."""
PAGE = 10
"""An extra section is shown only when it ranks above the best chunk of this many-th note."""
SECTION_SHARE = 0.5
"""…and scores at least this share of its note's best section."""

PathsOf = Callable[[Sequence[int]], Mapping[int, str]]
"""Chunk ids → the vault-relative path of each one's file (a chunk deleted since it was ranked
is left out)."""
NoteChunks = tuple[str, list[Fused]]
"""A note's path and its shown chunks, best first."""


def _files(fused: Sequence[Fused], paths_of: PathsOf, batch: int) -> Iterator[tuple[int, Fused, str]]:
    """``(position, item, path)`` down the fused list, the paths read ``batch`` at a time."""
    for start in range(0, len(fused), batch):
        part = fused[start : start + batch]
        paths = paths_of([f.item for f in part])
        for offset, f in enumerate(part):
            path = paths.get(f.item)
            if path is not None:
                yield start + offset, f, path


def group_notes(fused: Sequence[Fused], k: int, paths_of: PathsOf) -> list[NoteChunks]:
    """The first ``k`` notes of ``fused`` (best first), each with the chunks it shows."""
    wanted = max(k, PAGE)
    found: dict[str, list[tuple[int, Fused]]] = {}
    page_end = len(fused)
    for position, f, path in _files(fused, paths_of, batch=4 * wanted):
        chunks = found.get(path)
        if chunks is not None:
            chunks.append((position, f))
            continue
        if len(found) == wanted:
            break  # no later chunk can start a wanted note or rank above the page's last one
        found[path] = [(position, f)]
        if len(found) == PAGE:
            page_end = position
    out: list[NoteChunks] = []
    for path, chunks in list(found.items())[:k]:
        best = chunks[0][1]
        floor = SECTION_SHARE * (best.score - best.signals.get("title", 0.0))
        extra = [f for position, f in chunks[1:] if position < page_end and f.score >= floor]
        out.append((path, [best, *extra[: MAX_SECTIONS - 1]]))
    return out


def notes_depth(fused: Sequence[Fused], k: int, paths_of: PathsOf) -> int:
    """How many chunks from the head of ``fused`` hold its first ``k`` notes (all of them when
    it holds fewer): what a re-scoring that may only reach the top k notes must look at."""
    seen: set[str] = set()
    for position, _f, path in _files(fused, paths_of, batch=4 * k):
        if path not in seen:
            seen.add(path)
            if len(seen) == k:
                return position + 1
    return len(fused)


def assemble_notes(
    groups: Sequence[NoteChunks], results: Sequence[SearchResult], titles: Mapping[str, str | None]
) -> list[NoteResult]:
    """The notes of ``groups`` made of ``results`` (the materialised chunks of every group; a
    chunk missing from them was deleted since it was ranked and is left out, and so is a note
    left without one). ``titles`` maps a group's path to its file's title; a note without one
    is named after its file."""
    by_id = {r.chunk_id: r for r in results}
    notes = []
    for path, chunks in groups:
        sections = tuple(by_id[f.item] for f in chunks if f.item in by_id)
        if sections:
            shown = sections[0].path
            notes.append(NoteResult(shown, titles.get(path) or PurePosixPath(shown).stem, sections))
    return notes
