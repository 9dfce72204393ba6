"""What fusion needs to know of the deep list beyond its hits, found per search.

The deep tier's list is the strongest on questions and on languages the fast tiers read badly,
and the weakest where the words already decide: a name, a command, a word only one note
holds. It is also incomplete for hours after ``vaultseek index``. So its weight in the hybrid's
convex fusion (``fusion.convex``) is set per search:

- **coverage**: times the share of the index's chunks that have a deep vector. A list drawn
  from a tenth of the chunks mostly ranks chunks that are not the answer (the answer has no
  vector yet nine times in ten), so it counts a tenth;
- **lexical evidence** (:func:`evidence`): a quarter of it when every word of the query is held
  by one note alone (:func:`one_note_holds`: a name, a command, a rare word — the note is a
  known item). The deep list then re-orders within what the words found instead of
  overriding it;

and a chunk still waiting for its vector stands in with its note's opening, when that has one
(:func:`opening_scores`; the deep worker embeds every note's opening first), else with its
other lists' weighted mean (``fusion.convex``'s ``unscored``).

Measured on the tune halves of the judged sets at 0–100 % coverage (docs/research/
quality-attempts.md, "The deep list at every coverage — reached").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..storage.store import Store
from ..storage.vectors import VectorIndex

Scored = list[tuple[int, float]]

SOLE_CHUNKS = 10
"""A query's words count as one note's alone when at most this many chunks hold them all, all
of one note (a word a long note repeats in a few sections is still that note's)."""
SOLE_SHARE = 0.25
"""The deep list's share of its weight when one note holds every word of the query: with the
default weights the deep and the static list together (0.25 + 0.25) stay below a lexical
hit's 0.75, so the note the words name comes first."""


@dataclass(frozen=True, slots=True)
class DeepList:
    """What fusion needs to know of the deep list beyond its hits."""

    coverage: float
    """The share of the index's chunks that have a deep vector."""
    unscored: set[int]
    """The other lists' candidates that have no deep vector yet (and no stand-in)."""
    anchor: float | None
    """The deep model's cosine at which the list's best counts fully (``fusion.ANCHORS``)."""
    stand_ins: dict[int, float] = field(default_factory=dict)
    """Candidates without a deep vector whose note's opening has one → the opening's score."""
    evidence: float = 1.0
    """The share of its weight the lexical evidence leaves the deep list (:func:`evidence`)."""

    @property
    def share(self) -> float:
        """The share of its configured weight the deep list has in this search's fusion."""
        return self.coverage * self.evidence


def lacking(index: VectorIndex, lists: tuple[Scored, ...]) -> set[int]:
    """The items of ``lists`` that have no row in ``index``."""
    items = {item for hits in lists for item, _s in hits}
    held, _rows = index.rows_of(items)
    return items - set(held.tolist())


def opening_scores(store: Store, index: VectorIndex, query: np.ndarray | None, items: set[int]) -> dict[int, float]:
    """Of ``items`` (chunks without a deep vector), those whose note's opening chunk has one →
    the opening's score for ``query`` (as the deep list ranks: its cosine less its hub offset).
    One indexed lookup and a dot product per opening: no model call."""
    if query is None or not items or not len(index):
        return {}
    openings = store.openings(sorted(items))
    if not openings:
        return {}
    held, rows = index.rows_of(set(openings.values()))
    scored = dict(zip(held.tolist(), index.scores(query, rows).tolist(), strict=True))
    return {item: scored[opening] for item, opening in openings.items() if opening in scored}


def one_note_holds(store: Store, bm25: Scored, held: int) -> bool:
    """Whether the lexical list's chunks that hold every word of the query (its first
    ``held``) are one note's, and no more than :data:`SOLE_CHUNKS`."""
    if not 0 < held <= SOLE_CHUNKS:
        return False
    return len(set(store.chunk_paths([item for item, _s in bm25[:held]]).values())) == 1


def evidence(store: Store, bm25: Scored, held: int) -> float:
    """The share of its weight the deep list keeps for a query whose lexical list is ``bm25``
    (its first ``held`` hold every word of the query): :data:`SOLE_SHARE` when one note holds
    every word, else all of it. (Halving it when BM25 and the static list put the same note
    first gained 0.007 on English PowerShell questions and cost MEDLINE 0.011: not kept.)"""
    return SOLE_SHARE if one_note_holds(store, bm25, held) else 1.0
