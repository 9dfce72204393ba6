"""What one search is asked to do: :class:`SearchParams`, checked where it was asked for
(``contract.SearchRequest``, the configuration) and read by every step of :mod:`.hybrid`."""

from __future__ import annotations

from dataclasses import dataclass

from ..records import SearchFilter, SearchMode, SearchView
from .rerank import DEFAULT_DEPTH, DEFAULT_WEIGHT


@dataclass(frozen=True, slots=True)
class SearchParams:
    mode: SearchMode = "hybrid"
    k: int = 10
    """How many results: notes in the note view, chunks in the chunk view."""
    view: SearchView = "notes"
    """``notes``: the fused chunks grouped into notes (``grouping.py``); ``chunks``: as ranked."""
    candidates: int = 100
    fusion: str = "convex"
    rrf_k: int = 60
    bm25_weight: float | None = None
    """None: the fusion method's own default (fusion.DEFAULT_WEIGHTS)."""
    vector_weight: float | None = None
    deep_weight: float | None = None
    """The deep list's weight (None: the fusion method's own default)."""
    max_tokens: int | None = None
    scope: SearchFilter | None = None
    """Only chunks of files inside it are ranked (None: the whole index)."""
    title_match: bool = False
    """A note whose title, alias or file name is the query goes first (``signals.py``)."""
    recency_half_life_days: float | None = None
    """Decay scores by the age of their file with this half-life (None or 0: off)."""
    recency_weight: float = 0.5
    """The share of a score recency can take away (``signals.recency_factor``)."""
    intent: bool = False
    """Shift the list weights for identifier-like queries and long questions (``intent.py``)."""
    now: float | None = None
    """The clock recency reads (epoch seconds); None: the current time."""
    link_boost: float = 0.0
    """Post-fusion link signal weight (0: off); see :mod:`linkgraph`."""
    link_signal: str = "backlinks"
    judge: bool = True
    """Judge each result's relevance (:mod:`relevance`) and say when nothing matches."""
    term_match: float = 0.0
    """Hybrid convex search: the term match's share of the head's lexical score (0: off;
    ``termmatch.DEFAULT_WEIGHT`` is the measured best); see :mod:`termmatch`."""
    syntax: bool = True
    """Read the query's operators (``"phrase"``, ``-word``, ``tag:x``, …; :mod:`syntax`);
    off, every word is text."""
    rerank_depth: int = DEFAULT_DEPTH
    """How many of the fused list's best sections a reranker re-scores (:mod:`rerank`)."""
    rerank_weight: float = DEFAULT_WEIGHT
    """The reranker's share of a re-scored section's score."""
