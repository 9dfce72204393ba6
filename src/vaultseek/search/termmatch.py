"""Term matching: how well the words of a chunk match the words of the query, one by one.

BM25 credits a query word only where the chunk holds that exact (stemmed) word; the chunk's
vector credits the chunk as a whole. Term matching sits between them: each query word gets
the similarity of its *best-matching* word in the chunk, and the chunk's match is their
IDF-weighted mean. Words are compared by their character trigrams (the Jaccard similarity of
``^word$``'s three-letter pieces): an exact word scores 1, *mutations* for *mutation* 0.7,
*oncogenic* for *oncogene* half of it, an unrelated word little — a soft coverage of the query.

It re-ranks the head of the fused list: the :data:`RERANK_DEPTH` best chunks' lexical score
becomes ``(1 − w) × BM25 / best BM25 + w × match / best match``, and the lists are fused with
those scores (``fusion.convex``'s ``overrides``).
On SciFact it is the only change of all those screened that beat the plain fusion on both
splits: nDCG@10 train 0.706 → 0.715, test 0.695 → 0.704 at the default weight
(docs/research/quality-attempts.md, "Term matching by trigrams"). Trigrams replace the
model's word vectors ("Lexical feedback, and term matching by word vectors" there): as much
gain on SciFact, with nothing to embed — the vectors cost ~2.3 ms a search with every word
cached and ~5 ms with a fresh head's rare words, the trigrams ~0.5 ms, in numpy over the
head's text at once. Without IDF weights,
or as exact matches alone, it gains nothing: the gain needs the partial credit and the
weights.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..text.lexical import CJK_RANGES, STOPWORDS, WORD, index_text

RERANK_DEPTH = 20
"""How many of the fused list's best chunks are re-scored. Rescoring the top 20 keeps the whole
gain on SciFact train (+0.0083 vs +0.0086 for all 200 candidates, word vectors) at a tenth of
the work."""
DEFAULT_WEIGHT = 0.3
"""The term match's share of the head's lexical score (``term_match``): the largest SciFact
train gain for which no other judged collection loses more than 0.005 nDCG@10 (the project's
tolerance). Train by weight: 0.2 +0.0036, 0.3 +0.0069, 0.35 +0.0079, 0.4 +0.0080, 0.5
+0.0098; at 0.35 CISI, LISA and NPL lose ~0.005 each, at 0.5 0.011–0.017; at 0.3 the worst
is CISI's −0.003 (docs/research/quality-attempts.md, "Term matching by trigrams")."""
MIN_IDF = 0.05
"""A word in more than half the chunks still counts a little (BM25's IDF would go negative)."""

_PAIR_HASH = 40_503
"""Multiplier hashing a (previous, middle) character pair into 16 bits (a prime near 2¹⁶ × φ)."""
_SHIFT = np.uint64(21)
"""Bits per character in a trigram's code: every Unicode code point fits in 21 bits."""
_ASCII_WORD = np.array([chr(c).isalnum() for c in range(128)], dtype=bool)
_bmp_word: np.ndarray | None = None


def content_words(text: str) -> list[str]:
    """The distinct words of ``text`` worth matching, lower-cased, in order of appearance: the
    full-text index's word split (``lexical.index_text``), without stopwords, numbers and
    one-letter words — those match everywhere and would blur every chunk's score."""
    low = text.lower()
    words = WORD.findall(low if low.isascii() else index_text(low))
    return [w for w in dict.fromkeys(words) if len(w) > 1 and not w.isdigit() and w not in STOPWORDS]


def idf(document_frequency: int, chunks: int) -> float:
    """BM25's inverse document frequency, floored at :data:`MIN_IDF`. A chunk count read a
    moment before a writer added chunks can be below a frequency read after: it counts as the
    frequency then (the word is everywhere)."""
    df = max(0, document_frequency)
    return max(math.log((max(chunks, df) - df + 0.5) / (df + 0.5)), MIN_IDF)


def word_similarity(a: str, b: str) -> float:
    """The similarity :func:`match_scores` gives two words: of ``b``'s padded trigrams, the
    share found in ``a``'s, as a Jaccard index — ``h / (|a| + |b| − h)`` with ``h`` the
    trigrams of ``b`` that ``a`` has and a word of n letters counted as n trigrams, so equal
    words score exactly 1 even when a trigram repeats (*banana*). The reference the vectorised
    scoring is tested against."""
    if not a or not b:
        return 0.0
    ours = {_code(t) for t in _trigrams(a)}
    hits = min(sum(_code(t) in ours for t in _trigrams(b)), len(a), len(b))
    return hits / (len(a) + len(b) - hits)


def _trigrams(word: str) -> list[tuple[str, str, str]]:
    padded = f"\0{word}\0"
    return [(padded[i], padded[i + 1], padded[i + 2]) for i in range(len(word))]


def _code(trigram: tuple[str, str, str]) -> int:
    a, b, c = trigram
    return (ord(a) << 42) | (ord(b) << 21) | ord(c)


def match_scores(query_words: Sequence[str], weights: Sequence[float], texts: Sequence[str]) -> np.ndarray:
    """For each text, ``Σ weight × best similarity`` over the query words, divided by the
    weights' sum: in [0, 1], 1 when every query word occurs in it as a word."""
    if not query_words or not texts:
        return np.zeros(len(texts), dtype=np.float64)
    weight = np.asarray(weights, dtype=np.float64)
    return word_matches(query_words, texts) @ weight / (float(weight.sum()) or 1.0)


def word_matches(query_words: Sequence[str], texts: Sequence[str]) -> np.ndarray:
    """Texts × query words: each query word's best :func:`word_similarity` among the text's
    words, split as the index splits them (letters and digits; CJK runs as their pairs).

    One pass over all the texts at once: every word character is the middle of one padded
    trigram, coded as an integer; the codes found among the query words' are few, so only
    they are grouped by word, then by text. CJK runs are not rewritten into their pairs
    (``lexical.index_text``, ~2 µs a run in Python): a pair's similarity to a query word is 1
    for the same pair and 0 otherwise, so adjacent CJK characters are simply looked up."""
    if not query_words or not texts:
        return np.zeros((len(texts), len(query_words)), dtype=np.float64)
    blob = "\0".join(t.replace("\0", " ") if "\0" in t else t for t in texts).lower()
    if "ß" in blob:  # as the index folds it
        blob = blob.replace("ß", "ss")
    points = _code_points(blob)
    is_word = _word_characters(points)
    cjk = _cjk_characters(points)
    if cjk is not None:
        is_word &= ~cjk  # a CJK run separates words like a space; its pairs are looked up below
    separators = np.flatnonzero(points == 0)
    best = np.zeros((len(texts), len(query_words)), dtype=np.float64)
    _best_by_trigrams(query_words, points, is_word, separators, best)
    if cjk is not None:
        _best_by_pairs(query_words, points, cjk, separators, best)
    return best


def _best_by_trigrams(
    query_words: Sequence[str], points: np.ndarray, is_word: np.ndarray, separators: np.ndarray, best: np.ndarray
) -> None:
    """Raise ``best[text, query word]`` to the best :func:`word_similarity` of the text's
    words (runs of ``is_word``)."""
    query_codes = [{_code(t) for t in _trigrams(w)} for w in query_words]
    union = np.array(sorted(set().union(*query_codes)), dtype=np.uint64)
    member = np.zeros((len(union), len(query_words)), dtype=np.float64)
    for column, own in enumerate(query_codes):
        member[np.searchsorted(union, np.fromiter(own, np.uint64, len(own))), column] = 1.0
    # Each word character is the middle of one padded trigram (non-word characters are 0).
    # Few of them can be a query trigram: a 64k table of hashed (previous, middle) pairs
    # picks those out first, and only they get their exact code.
    padded = np.zeros(len(points) + 2, dtype=np.uint32)
    np.multiply(points, is_word, out=padded[1:-1], casting="unsafe")
    keys = padded[:-2] * np.uint32(_PAIR_HASH)
    keys += padded[1:-1]
    keys &= np.uint32(0xFFFF)
    table = np.zeros(0x10000, dtype=bool)
    table[[((ord(a) * _PAIR_HASH + ord(b)) & 0xFFFF) for w in query_words for a, b, _c in _trigrams(w)]] = True
    maybe = np.flatnonzero(table[keys])
    codes = padded[maybe].astype(np.uint64) << (_SHIFT + _SHIFT)
    codes |= padded[maybe + 1].astype(np.uint64) << _SHIFT
    codes |= padded[maybe + 2]
    at = np.searchsorted(union, codes)
    np.minimum(at, len(union) - 1, out=at)
    exact = union[at] == codes  # a non-word middle (0) is no query trigram
    found, at = maybe[exact], at[exact]
    if not len(found):
        return
    edges = np.diff(is_word.view(np.int8), prepend=0, append=0)
    starts = np.flatnonzero(edges == 1)
    lengths = (np.flatnonzero(edges == -1) - starts).astype(np.float64)
    # Hits per (word, query word), for the words with any hit (found is in word order).
    word_of_hit = np.searchsorted(starts, found, side="right") - 1
    groups = np.flatnonzero(np.r_[True, word_of_hit[1:] != word_of_hit[:-1]])
    words = word_of_hit[groups]
    hits = np.add.reduceat(member[at], groups, axis=0)
    sizes = np.array([len(w) for w in query_words], dtype=np.float64)
    length = lengths[words][:, None]
    np.minimum(hits, sizes, out=hits)
    np.minimum(hits, length, out=hits)
    similarity = hits / (sizes + length - hits)
    text_of = np.searchsorted(separators, starts[words])
    text_groups = np.flatnonzero(np.r_[True, text_of[1:] != text_of[:-1]])
    best[text_of[text_groups]] = np.maximum.reduceat(similarity, text_groups, axis=0)


def _best_by_pairs(
    query_words: Sequence[str], points: np.ndarray, cjk: np.ndarray, separators: np.ndarray, best: np.ndarray
) -> None:
    """Set ``best[text, query word]`` to 1 where a CJK query word (a pair, as the index and
    :func:`content_words` split CJK) occurs in the text as two adjacent CJK characters."""
    pairs = {
        column: (ord(w[0]) << 21) | ord(w[1])
        for column, w in enumerate(query_words)
        if len(w) == 2 and all(_is_cjk(ch) for ch in w)
    }
    if not pairs:
        return
    starts = np.flatnonzero(cjk[:-1] & cjk[1:])
    codes = (points[starts].astype(np.uint64) << _SHIFT) | points[starts + 1]
    for column, code in pairs.items():
        best[np.searchsorted(separators, starts[codes == code]), column] = 1.0


def _is_cjk(character: str) -> bool:
    return any(low <= ord(character) <= high for low, high in CJK_RANGES)


def _cjk_characters(points: np.ndarray) -> np.ndarray | None:
    """Which code points are CJK (``lexical.CJK_RANGES``), or None when none is."""
    if not len(points) or int(points.max()) < CJK_RANGES[0][0]:
        return None
    cjk = np.zeros(len(points), dtype=bool)
    for low, high in CJK_RANGES:
        cjk |= (points >= low) & (points <= high)
    return cjk if cjk.any() else None


def _code_points(text: str) -> np.ndarray:
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _word_characters(points: np.ndarray) -> np.ndarray:
    """Which code points are word characters as :data:`lexical.WORD` sees them (letters and
    digits, ``str.isalnum``): a table lookup, the Basic Multilingual Plane's table made on
    the first non-ASCII text (~10 ms), rarer characters asked one by one."""
    global _bmp_word
    if not len(points) or int(points.max()) < 128:
        return _ASCII_WORD[points]
    if _bmp_word is None:
        _bmp_word = np.array([chr(c).isalnum() for c in range(0x10000)], dtype=bool)
    out = _bmp_word[np.minimum(points, 0xFFFF)]
    astral = np.flatnonzero(points > 0xFFFF)
    if len(astral):
        out[astral] = [chr(int(p)).isalnum() for p in points[astral]]
    return out


def blend(lexical: Sequence[tuple[int, float]], matches: Mapping[int, float], share: float) -> dict[int, float]:
    """The lexical list's scores with the term match blended in: ``(1 − share) × score /
    best score + share × match / best match`` — a matched chunk may come from the vector
    list alone. Fused in place of the BM25 scores (``fusion.convex``'s ``overrides``)."""
    top_score = max((s for _c, s in lexical), default=0.0)
    top_match = max(matches.values(), default=0.0)
    scale = (1.0 - share) / top_score if top_score > 0 else 0.0
    bonus = share / top_match if top_match > 0 else 0.0
    blended = {chunk: score * scale for chunk, score in lexical}
    for chunk, match in matches.items():
        blended[chunk] = blended.get(chunk, 0.0) + match * bonus
    return blended
