"""Term matching: how well the words of a chunk match the words of the query, one by one.

BM25 credits a query word only where the chunk holds that exact (stemmed) word; the chunk's
vector credits the chunk as a whole. Term matching sits between them: each query word gets
the cosine of its *best-matching* word in the chunk, with static word vectors from the same
Model2Vec model (``StaticEmbedder.word_rows``), and the chunk's match is their IDF-weighted
mean. An exact word scores 1, "tumour" for "cancer" scores part of it, an unrelated chunk
little — a soft coverage of the query, a late interaction in the manner of ColBERT's MaxSim
over words instead of contextual tokens.

It re-ranks the head of the fused list: the :data:`RERANK_DEPTH` best chunks' lexical score
becomes ``(1 − w) × BM25 / best BM25 + w × match / best match`` and the lists are fused again.
On SciFact it is the only change in five sessions of screening that beat the default fusion
on both splits: nDCG@10 train 0.706 → 0.716, test 0.695 → 0.711 through the engine
(docs/quality.md, "Fifth session"). Off by default (``term_match = 0``): it costs ~2.5 ms a
search with its words cached and ~5 ms with fresh ones, and the default has a 5 ms budget.
Exact matches alone (a cosine of 1 or 0) gain nothing; neither does partial credit without
them: the gain needs both.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from .fusion import Fused
from .lexical import STOPWORDS, WORD, index_text

RERANK_DEPTH = 20
"""How many of the fused list's best chunks are re-scored. Rescoring the top 20 keeps the whole
gain on SciFact train (+0.0083 vs +0.0086 for all 200 candidates) at a tenth of the work."""
DEFAULT_WEIGHT = 0.5
"""The term match's share of the lexical score when turned on (``term_match = 0.5``; the
configuration's default is 0, off, until it fits the 5 ms budget). Train nDCG@10 by weight:
0.3 0.712, 0.4 0.713, 0.45 0.715, 0.5 0.715, 0.6 0.713, 0.7 0.711 — a flat ridge; 0.5 is its
middle."""
MIN_IDF = 0.05
"""A word in more than half the chunks still counts a little (BM25's IDF would go negative)."""

WordRows = Callable[[Sequence[str]], tuple[np.ndarray, np.ndarray]]
"""Words → (each word's row, a matrix of unit word vectors) (``StaticEmbedder.word_rows``)."""


def content_words(text: str) -> list[str]:
    """The distinct words of ``text`` worth matching, lower-cased, in order of appearance: the
    full-text index's word split (``lexical.index_text``), without stopwords, numbers and
    one-letter words — those match everywhere and would blur every chunk's score."""
    return [w for w in dict.fromkeys(_words(text)) if _is_content(w)]


def chunk_words(text: str) -> list[str]:
    """:func:`content_words` in no particular order: a set is ~40% cheaper, and a chunk's
    score (a maximum per query word) does not depend on the order."""
    return [w for w in set(_words(text)) - STOPWORDS if len(w) > 1 and not w.isdigit()]


def _words(text: str) -> list[str]:
    low = text.lower()
    return WORD.findall(low if low.isascii() else index_text(low))


def _is_content(word: str) -> bool:
    return len(word) > 1 and not word.isdigit() and word not in STOPWORDS


def idf(document_frequency: int, chunks: int) -> float:
    """BM25's inverse document frequency, floored at :data:`MIN_IDF`."""
    df = max(0, document_frequency)
    return max(math.log((chunks - df + 0.5) / (df + 0.5)), MIN_IDF)


def match_scores(
    query_words: Sequence[str],
    weights: Sequence[float],
    chunk_words: Mapping[int, Sequence[str]],
    word_rows: WordRows,
) -> dict[int, float]:
    """For each chunk, ``Σ weight × best cosine`` over the query words, divided by the weights'
    sum: in [0, 1] (negative cosines count as 0), 1 when every query word occurs in it.
    Each distinct word's similarities are computed once for all the chunks, and the per-chunk
    maxima are one segmented reduction."""
    chunks = [c for c, words in chunk_words.items() if words]
    out = dict.fromkeys(chunk_words, 0.0)
    if not query_words or not chunks:
        return out
    rows, matrix = word_rows([*query_words, *(w for c in chunks for w in chunk_words[c])])
    distinct, inverse = np.unique(rows[len(query_words) :], return_inverse=True)
    similarity = matrix[distinct] @ matrix[rows[: len(query_words)]].T
    starts = np.cumsum([0] + [len(chunk_words[c]) for c in chunks[:-1]])
    best = np.maximum.reduceat(similarity[inverse], starts, axis=0)
    weight = np.asarray(weights, dtype=np.float32)
    scores = np.clip(best, 0.0, 1.0) @ weight / (float(weight.sum()) or 1.0)
    out.update(zip(chunks, scores.tolist(), strict=True))
    return out


def rescore(
    fused: Sequence[Fused],
    lexical: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    matches: Mapping[int, float],
    share: float,
    weights: Mapping[str, float],
) -> list[Fused]:
    """``fused`` (the convex fusion of ``lexical`` and ``vector``) fused again with each
    lexical score replaced by ``(1 − share) × score / best score + share × match / best
    match`` — the matched chunks may come from the vector list alone. Same normalisation,
    weights and tie-breaks as ``fusion.convex``; ranks stay those of the original lists."""
    top_score = max((s for _c, s in lexical), default=0.0)
    top_match = max(matches.values(), default=0.0)
    scale = (1.0 - share) / top_score if top_score > 0 else 0.0
    bonus = share / top_match if top_match > 0 else 0.0
    blended = {chunk: score * scale for chunk, score in lexical}
    for chunk, match in matches.items():
        blended[chunk] = blended.get(chunk, 0.0) + match * bonus
    low, high = _span(blended.values())
    lex_weight = weights.get("bm25", 1.0) / (high - low) if high > low else 0.0
    lex_flat = weights.get("bm25", 1.0) if high <= low else 0.0
    v_low, v_high = _span(s for _c, s in vector)
    vec_weight = weights.get("vector", 1.0) / (v_high - v_low) if v_high > v_low else 0.0
    vec_flat = weights.get("vector", 1.0) if v_high <= v_low else 0.0
    cosine = dict(vector)
    scored = []
    for f in fused:
        score = 0.0
        if f.item in blended:
            score += (blended[f.item] - low) * lex_weight + lex_flat
        if f.item in cosine:
            score += (cosine[f.item] - v_low) * vec_weight + vec_flat
        scored.append((-score, min(f.ranks.values(), default=0), f.item, f))
    scored.sort(key=lambda entry: entry[:3])
    return [Fused(f.item, -negative, f.ranks, f.signals) for negative, _r, _i, f in scored]


def _span(values: Iterable[float]) -> tuple[float, float]:
    listed = list(values)
    return (min(listed), max(listed)) if listed else (0.0, 0.0)
