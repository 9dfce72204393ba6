"""What fusion needs to know of the deep list beyond its hits, found per search.

The deep tier's list is the strongest on questions and on languages the fast tiers read badly,
and the weakest where the words already decide: a name, a command, a word only one note
holds. It is also incomplete for hours after ``vaultseek index``. So its weight in the hybrid's
convex fusion (``fusion.convex``) is set per search:

- **coverage**: times the share of the index's chunks that have a deep vector. A list drawn
  from a tenth of the chunks mostly ranks chunks that are not the answer (the answer has no
  vector yet nine times in ten), so it counts a tenth;
- **lexical evidence** (:func:`named_chunks`): when every word of the query is held by one
  note alone (a name, a command, a rare word — the note is a known item), or a query of one
  or two words by a few chunks of any notes (:data:`NAMING_WORDS`), the chunks that
  hold the words take the deep list's best score when it ranks them or has no vector for
  them yet (:meth:`DeepList.lifted`), and the deep list keeps half its weight: it does not
  argue against the note the words name, and re-orders the rest instead of overriding what
  the words found. When it has their vectors and left them out of its candidates, it keeps a
  quarter;

and a chunk still waiting for its vector stands in with its note's opening, when that has one
(:func:`opening_scores`; the deep worker embeds every note's opening first), else with its
other lists' weighted mean (``fusion.convex``'s ``unscored``). Two kinds of waiting chunk take
their opening's score only where that is more than the mean (:meth:`DeepList.floored`): a
document's page (slide, rows) — a PDF's first page is a cover or a contents page, which says
nothing of page 6 — and a section that BM25 and the static list both rank among their first
:data:`AGREED`: two lists that agree on a section are better evidence for it than its note's
opening is (``$PROFILE`` asked in German while only the openings have vectors: the profiles
page's own section, BM25 #1 and static #1, fell to third behind pages whose sections had theirs).

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
SOLE_SHARE = 0.5
"""The deep list's share of its weight when one note holds every word of the query and the
deep list ranks those chunks or has no vector for them yet. They take the deep list's best
score (:meth:`DeepList.lifted`), so with the default weights a chunk the words do not name
trails them by BM25's margin (0.75 × its normalised gap) less the static list's (at most
0.25): the note the words name comes first, and the rest is ranked with half the deep list."""
LEFT_OUT_SHARE = 0.25
"""The deep list's share when one note holds every word of the query and the deep list has
their vectors and left those chunks out of its candidates: with the default weights the deep
and the static list together (0.25 + 0.25) stay below a lexical hit's 0.75, so the note the
words name still comes first (a rare word the deep model reads as noise: ``espresso`` in a
standup note)."""
NAMING_WORDS = 2
"""A query of at most this many words names the few chunks that hold them all whichever notes
they are in (:func:`named_by`): a name or a rare word the user remembers, met in a meeting note
and in a code example alike. A longer query names them only when they are one note's: a
question's words met together in a few places are weaker evidence than its meaning."""
AGREED = 10
"""A waiting section that both the BM25 and the static list rank this high is held at least at
its other lists' mean (:meth:`DeepList.floored`)."""


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
    paged: frozenset[int] = frozenset()
    """Of :attr:`stand_ins`, the pages (slides, rows) of a document: their opening is a cover
    or a title slide, which may lift them but never holds them below their other lists
    (``fusion.convex``'s ``floored``)."""
    named: frozenset[int] = frozenset()
    """The chunks that hold every word of the query when they are one note's
    (:func:`named_chunks`)."""
    listed: frozenset[int] = frozenset()
    """The chunks of the deep list's own candidates (for :meth:`lifted`)."""

    @property
    def liftable(self) -> frozenset[int]:
        """Of :attr:`named`, the chunks the deep list ranks or has no vector for yet. One it
        has a vector for and left out of its candidates is far from the query in the deep
        model's eyes (the words met in a page about something else, or a rare word the model
        reads as noise)."""
        return frozenset(i for i in self.named if i in self.listed or i in self.unscored or i in self.stand_ins)

    @property
    def evidence(self) -> float:
        """The share of its weight the lexical evidence leaves the deep list:
        :data:`SOLE_SHARE` when it lifts the named chunks, :data:`LEFT_OUT_SHARE` when one
        note holds every word and the deep list left those chunks out, else all of it."""
        if not self.named:
            return 1.0
        return SOLE_SHARE if self.liftable else LEFT_OUT_SHARE

    @property
    def share(self) -> float:
        """The share of its configured weight the deep list has in this search's fusion."""
        return self.coverage * self.evidence

    def floored(self, bm25: Scored, vector: Scored) -> frozenset[int]:
        """The :attr:`stand_ins` their opening may lift but never hold below their other lists'
        mean (``fusion.convex``'s ``floored``): a document's pages (:attr:`paged`), and the
        sections the ``bm25`` and ``vector`` lists both rank among their first :data:`AGREED`."""
        if not self.stand_ins:
            return self.paged
        agreed = {item for item, _s in bm25[:AGREED]} & {item for item, _s in vector[:AGREED]}
        return self.paged | frozenset(item for item in agreed if item in self.stand_ins)

    def lifted(self, hits: Scored) -> dict[int, float] | None:
        """The deep list's scores (``hits``) with the :attr:`liftable` chunks at its best
        (``fusion.convex``'s ``overrides``: the list's ranks stay its own); None when no chunk
        is lifted or the list is empty."""
        lift = self.liftable
        if not lift or not hits:
            return None
        return {**dict(hits), **dict.fromkeys(lift, max(score for _item, score in hits))}


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


def named_chunks(store: Store, bm25: Scored, held: int, words: int) -> frozenset[int]:
    """The lexical list's chunks that hold every word of the query (its first ``held``) when
    the query's ``words`` name them (:func:`named_by`); else none. (Halving the deep weight
    when BM25 and the static list put the same note first instead gained 0.007 on English
    PowerShell questions and cost MEDLINE 0.011: not kept.)"""
    return named_by(store, [item for item, _s in bm25[:held]], words)


def named_by(store: Store, chunks: list[int], words: int) -> frozenset[int]:
    """``chunks``, the chunks that hold every word of a query of ``words`` words, when the
    query names them: :func:`names_few` of them, or :func:`one_notes`; else none."""
    return frozenset(chunks) if names_few(chunks, words) else one_notes(store, chunks)


def names_few(chunks: list[int], words: int) -> bool:
    """Whether a query of ``words`` words names ``chunks``, the chunks that hold all its words,
    whichever notes they are in: at most :data:`NAMING_WORDS` words, held by at most
    :data:`SOLE_CHUNKS` chunks."""
    return words <= NAMING_WORDS and 0 < len(chunks) <= SOLE_CHUNKS


def one_notes(store: Store, chunks: list[int]) -> frozenset[int]:
    """``chunks`` when there are some, no more than :data:`SOLE_CHUNKS`, all of one note; else
    none: the chunks that hold every word of a query, read as that note's alone."""
    if not 0 < len(chunks) <= SOLE_CHUNKS:
        return frozenset()
    return frozenset(chunks) if len(set(store.chunk_paths(chunks).values())) == 1 else frozenset()
