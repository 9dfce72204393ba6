"""What a query's operators leave to the ranked lists (``search.syntax``).

A required phrase narrows the chunks every list may rank to those that hold it, and so does a
query made only of prefixes (``termin*``: the chunks with a word that starts with one); an
exclusion (``-android``) narrows the notes: every chunk of a file with any chunk that holds it
is left out. BM25 gets the phrases in its FTS5 query and the exclusions in its SQL; a
vector list is masked to the rows left before it ranks (:meth:`Restriction.rows`), so it
returns its best ``k`` of those however few they are — a fixed pool filtered afterwards could
come back empty.

The sets are read once a search, from the full-text index, as chunk ids (what every list
ranks). A query without such operators has no restriction and pays nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..records import SearchFilter
from ..storage.store import Store
from ..storage.vectors import VectorIndex
from ..text.lexical import phrase_query
from .syntax import ParsedQuery


@dataclass(frozen=True, slots=True)
class Restriction:
    """The chunks and files a query's operators allow."""

    chunks: np.ndarray | None
    """The ids of the chunks the lists may rank, ascending (None: any chunk)."""
    excluded_chunks: np.ndarray | None
    """The ids of the chunks no list may rank — every chunk of the excluded notes — ascending
    (None: none)."""
    excluded_notes: int = 0
    """How many notes the exclusions leave out."""
    excluding: str | None = None
    """The exclusions as one FTS5 expression (BM25 leaves out its notes in SQL)."""
    excluded: tuple[str, ...] = ()
    """The exclusions as typed, for the notices."""
    notices: tuple[str, ...] = ()
    """Why nothing can be found, when the required phrases leave no chunk."""

    def rows(self, store: Store, index: VectorIndex, scope: SearchFilter | None) -> np.ndarray:
        """The positions of ``index``'s rows that are allowed and inside ``scope``."""
        keep = np.ones(len(index), dtype=bool)
        if self.chunks is not None:
            keep &= np.isin(index.ids, self.chunks)
        if self.excluded_chunks is not None and len(self.excluded_chunks):
            keep &= ~np.isin(index.ids, self.excluded_chunks)
        if scope is not None and store.backend == "sqlite":  # marked once per scope and version
            keep &= store.scope_mask(scope).inside(index.ids)
        elif scope is not None:
            if index.files is None:  # once per matrix
                index.files = store.file_ids_of(index.ids)
            keep &= np.isin(index.files, store.file_ids_in(scope))
        return np.flatnonzero(keep)

    def admitted(self, ids: Sequence[int]) -> set[int]:
        """Which of the chunks ``ids`` are allowed (a title match may name a note the lists
        did not rank, and it must obey the operators too)."""
        wanted = np.asarray(ids, dtype=np.int64)
        keep = np.ones(len(wanted), dtype=bool)
        if self.chunks is not None:
            keep &= np.isin(wanted, self.chunks)
        if self.excluded_chunks is not None:
            keep &= ~np.isin(wanted, self.excluded_chunks)
        return set(wanted[keep].tolist())

    def empty_notices(self) -> list[str]:
        """What to say when a search with this restriction found nothing."""
        if self.notices or not self.excluded_notes:
            return list(self.notices)
        notes = self.excluded_notes
        shown = ", ".join(f'"{item}"' for item in self.excluded)
        which = "the note that contains" if notes == 1 else f"the {notes} notes that contain"
        return [f"no result outside {which} {shown} (excluded)"]


def restrict(store: Store, parsed: ParsedQuery) -> Restriction | None:
    """The restriction ``parsed`` asks for, or None when it narrows nothing (no required
    phrase, no exclusion, free words that are not all prefixes)."""
    required = list(parsed.lexical.required)
    if parsed.prefix_only:
        required.append(f"({parsed.prefix_match()})")
    if not required and parsed.excluded_match is None:
        return None
    chunks = store.chunks_matching(" AND ".join(required)) if required else None
    excluded, notes = store.note_chunks_matching(parsed.excluded_match) if parsed.excluded_match else (None, 0)
    notices: tuple[str, ...] = ()
    if chunks is not None and not len(chunks):
        notices = tuple(_why_nothing(store, parsed))
    return Restriction(chunks, excluded, notes, parsed.excluded_match, parsed.excluded, notices)


FLAG_SCAN = 400
"""Of the chunks that hold a capitalised ``-Word``'s word, how many are read for it written as
a flag: where it is one (``-Recurse`` in PowerShell docs), it is in most of them."""


def written_as_flags(store: Store, words: Sequence[str]) -> set[str]:
    """Of the capitalised ``-Word``s a query typed (``syntax.ParsedQuery.capitalised``), those the
    vault writes as flags: some chunk holding the word has it right after a ``-`` that starts a
    word (``-Recurse``, ``-syu``, in any case). The others (``-Zahnarzt``: a German noun, never
    written so) are exclusions."""
    flags = set()
    for word in words:
        stem = word.rstrip("*")
        phrase = phrase_query(stem)
        if phrase is None:
            continue
        ending = r"\w*" if word.endswith("*") else r"(?!\w)"
        flag = re.compile(r"(?<![\w-])-" + re.escape(stem) + ending, re.IGNORECASE)
        ids = store.chunks_matching(f"{phrase} *" if word.endswith("*") else phrase, FLAG_SCAN)
        if any(flag.search(row.text) for row in store.chunks_by_id(ids.tolist()).values()):
            flags.add(word)
    return flags


def _why_nothing(store: Store, parsed: ParsedQuery) -> list[str]:
    """Notices for required phrases (and prefixes) that no chunk holds together."""
    missing = []
    for shown in parsed.required:
        phrase = phrase_query(shown)
        if phrase is not None and not len(store.chunks_matching(phrase)):
            missing.append(f'no chunk contains "{shown}"')
    if parsed.prefix_only and not len(store.chunks_matching(parsed.prefix_match())):
        words = " or ".join(prefix.rstrip("*") for prefix in parsed.prefixes)
        missing.append(f"no word in the index starts with {words}")
    if missing:
        return missing
    wanted = [f'"{shown}"' for shown in parsed.required]
    if parsed.prefix_only:
        wanted.append("a word starting with " + " or ".join(prefix.rstrip("*") for prefix in parsed.prefixes))
    return ["no chunk contains all of " + ", ".join(wanted)]
