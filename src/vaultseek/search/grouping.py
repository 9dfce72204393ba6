"""The note view: a fused list of chunks read as a list of notes.

A search ranks chunks — the sections of notes, the pages of documents — so three sections of
one note can fill the first five places. The note view answers with files instead: each note
once, with its best chunks as its sections. The notes the query names (the title match) come
first; the rest are ranked by :func:`note_score`, the best section's score plus a share of the
next two (:data:`FURTHER_SHARE`, in the default hybrid: :func:`share_for`): a page several of
whose sections match the query outranks one whose single section scores the same, and a
second or third section never counts for more than a small share of the best one's. With one
section a note (tldr's pages, most abstracts) the order is the fused list's own.

The sections a note shows:

* at most :data:`MAX_SECTIONS`, best first;
* an extra section must earn its place twice over: it ranks above the best chunk of the
  :data:`PAGE`-th note (it would make a first page of ten notes on its own merit), and it scores
  at least :data:`SECTION_SHARE` of its note's best section (a title match's bonus aside: it
  names the note, not a section). A note's weak tail — a section matched by one common word,
  far down the list — stays out, in a long list by the first test, in a short one (a narrow
  filter, a small vault) by the second.

``k`` counts notes, drawn from the whole fused list: its first :data:`SCORED` chunks are read
(through ``paths_of``, in one query), and the rest only when those hold fewer notes than asked
for. Every signal has already run on the chunks; a note keeps what they did to its sections,
and a document's sections keep their pages, slides and sheets.

On the PowerShell documentation's long pages (``python -m benchmarks.noteview``), the first ten
notes of a page-title query show 2.47 sections each with the cap alone, 1.66 with the position
test, 1.74 with the share, 1.58 with both. No judged set judges sections, so the rule is not
tuned on judgments: it decides what is shown beside a note, never where the note ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import PurePosixPath
from typing import NamedTuple

from ..records import NoteResult, SearchResult
from .fusion import Fused

MAX_SECTIONS = 3
"""The most sections one note shows: its best and up to two more."""
PAGE = 10
"""An extra section is shown only when it ranks above the best chunk of this many-th note."""
SECTION_SHARE = 0.5
"""…and scores at least this share of its note's best section."""
FURTHER_SHARE = 0.25
"""What a note's second-best section adds to its score, times its own score; its third adds
this squared (:func:`note_score`). Chosen on the tune halves of the judged sets
(docs/research/quality-attempts.md, "Several matching sections")."""
FURTHER = 2
"""How many sections beyond the best count towards a note's score."""
SCORED = 100
"""A note's further sections count towards its score from the first this many chunks of the
fused list (the lists' default ``candidates``, and the depth the evaluation harness reads, so
that it ranks notes as the note view does); its best section always counts."""

PathsOf = Callable[[Sequence[int]], Mapping[int, str]]
"""Chunk ids → the vault-relative path of each one's file (a chunk deleted since it was ranked
is left out)."""


class PathCache:
    """A search's :data:`PathsOf`: each chunk's path read from the index once, however often
    the pointer step, the link boost and the note view ask for it."""

    def __init__(self, read: PathsOf) -> None:
        self._read = read
        self._known: dict[int, str] = {}
        self._absent: set[int] = set()

    def __call__(self, ids: Sequence[int]) -> Mapping[int, str]:
        missing = [i for i in ids if i not in self._known and i not in self._absent]
        if missing:
            found = self._read(missing)
            self._known.update(found)
            self._absent.update(i for i in missing if i not in found)
        return {i: self._known[i] for i in ids if i in self._known}


class NoteChunks(NamedTuple):
    """A note of the fused list as the note view shows it."""

    path: str
    chunks: list[Fused]
    """The chunks it shows, best first."""
    score: float
    """What it ranks by (:func:`note_score`)."""


def _files(fused: Sequence[Fused], paths_of: PathsOf, first: int = 0) -> Iterator[tuple[int, Fused, str]]:
    """``(position, item, path)`` of each chunk of ``fused`` (a slice of the list starting at
    position ``first``) whose file is known, the paths read in one call."""
    paths = paths_of([f.item for f in fused])
    for offset, f in enumerate(fused):
        path = paths.get(f.item)
        if path is not None:
            yield first + offset, f, path


def share_for(mode: str, fusion: str | None) -> float:
    """The share of its further sections a note's score takes in a search of ``mode`` and
    ``fusion``: :data:`FURTHER_SHARE` in the default hybrid (convex fusion, whose scores it was
    chosen on); 0 elsewhere — RRF's scores lie too close together (a note's third-best section
    scores nearly what its best does) and a single list's were not measured — so a note ranks
    by its best section there."""
    return FURTHER_SHARE if mode == "hybrid" and fusion == "convex" else 0.0


def note_score(scores: Sequence[float], share: float = FURTHER_SHARE) -> float:
    """A note's score from its sections' fused scores, best first: the best one's, plus each of
    the next :data:`FURTHER` times ``share`` to the power of its place (a section scoring below
    zero adds nothing)."""
    further = scores[1 : 1 + FURTHER]
    return scores[0] + sum(max(score, 0.0) * share**place for place, score in enumerate(further, start=1))


def note_order(hits: Iterable[tuple[str, float, bool]], share: float = FURTHER_SHARE) -> list[str]:
    """The notes of a ranked chunk list — ``(path, fused score, named)`` best first, ``named``
    when the query names the chunk's note (the title match, ``signals.py``) — best note first:
    the notes the query names, then the rest, each by :func:`note_score` (ties keep the order
    in which the list first meets each note). A named note stays first, as the title match
    promises, however many sections another note has."""
    scores: dict[str, list[float]] = {}
    named: set[str] = set()
    for path, score, titled in hits:
        scores.setdefault(path, []).append(score)
        if titled:
            named.add(path)
    return sorted(scores, key=lambda path: (path not in named, -note_score(scores[path], share)))  # sorted() is stable


def _titled(f: Fused) -> bool:
    """Whether the title match lifted this chunk: the query names its note."""
    return f.signals.get("title", 0.0) > 0


def _notes(fused: Sequence[Fused], paths_of: PathsOf, share: float, wanted: int) -> dict[str, list[tuple[int, Fused]]]:
    """Each note of ``fused`` → its chunks with their positions, in list order; the notes in
    the order of :func:`note_order`. Only the first :data:`SCORED` chunks are read when they
    hold ``wanted`` notes: a note met later can neither outrank those (only its best section
    counts, and it scores below all of theirs) nor add a section to one of them that counts."""
    found: dict[str, list[tuple[int, Fused]]] = {}
    for position, f, path in _files(fused[:SCORED], paths_of):
        found.setdefault(path, []).append((position, f))
    if len(found) < wanted and len(fused) > SCORED:
        for position, f, path in _files(fused[SCORED:], paths_of, SCORED):
            found.setdefault(path, []).append((position, f))
    hits = [(path, f.score, _titled(f)) for path, chunks in found.items() for f in _counted(chunks)]
    return {path: found[path] for path in note_order(hits, share)}


def _counted(chunks: list[tuple[int, Fused]]) -> list[Fused]:
    """The chunks of a note that its score counts: its best, and those among the first
    :data:`SCORED` of the list."""
    return [f for position, f in chunks if position < SCORED or position == chunks[0][0]]


def group_notes(fused: Sequence[Fused], k: int, paths_of: PathsOf, share: float = FURTHER_SHARE) -> list[NoteChunks]:
    """The first ``k`` notes of ``fused`` (best first, their further sections counted at
    ``share``: :func:`share_for`), each with the chunks it shows."""
    found = list(_notes(fused, paths_of, share, max(k, PAGE)).items())
    page = found[:PAGE]
    # The weakest best section of the first page: an extra section shows only above it.
    page_end = max(chunks[0][0] for _path, chunks in page) if len(page) == PAGE else len(fused)
    out: list[NoteChunks] = []
    for path, chunks in found[:k]:
        best = chunks[0][1]
        floor = SECTION_SHARE * (best.score - best.signals.get("title", 0.0))
        extra = [f for position, f in chunks[1:] if position < page_end and f.score >= floor]
        out.append(NoteChunks(path, [best, *extra[: MAX_SECTIONS - 1]], note_score([f.score for f in _counted(chunks)], share)))
    return out


def notes_depth(fused: Sequence[Fused], k: int, paths_of: PathsOf, share: float = FURTHER_SHARE) -> int:
    """How many chunks from the head of ``fused`` hold the best chunks of its first ``k`` notes
    (all of them when it holds fewer): what a re-scoring that may only reach the top k notes
    must look at."""
    found = list(_notes(fused, paths_of, share, k + 1).values())
    if len(found) <= k:
        return len(fused)
    return max(chunks[0][0] for chunks in found[:k]) + 1


def assemble_notes(
    groups: Sequence[NoteChunks], results: Sequence[SearchResult], titles: Mapping[str, str | None]
) -> list[NoteResult]:
    """The notes of ``groups`` made of ``results`` (the materialised chunks of every group; a
    chunk missing from them was deleted since it was ranked and is left out, and so is a note
    left without one). ``titles`` maps a group's path to its file's title; a note without one
    is named after its file."""
    by_id = {r.chunk_id: r for r in results}
    notes = []
    for path, chunks, score in groups:
        sections = tuple(by_id[f.item] for f in chunks if f.item in by_id)
        if sections:
            shown = sections[0].path
            notes.append(NoteResult(shown, titles.get(path) or PurePosixPath(shown).stem, sections, score))
    return notes
