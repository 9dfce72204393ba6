"""The most relevant passages of a long text, ranked in memory against a query.

An agent's tool output (a 4,000-line log, a long web page, a big file) is split into
passages: paragraphs, with long ones cut into windows of a few lines and very long lines cut
into pieces. Each passage is scored by BM25 over the passages themselves (IDF from this text
alone) and by cosine similarity to the query under the same static model the index uses; the
two lists are fused exactly as a search fuses them (:func:`fusion.convex`). The best
passages that fit the budget are returned in their original order, with line numbers.

Pure and deterministic: the same text, query and model give the same extract. The vector
side is a callable, so this module needs no model, numpy or database of its own.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..search.fusion import DEFAULT_WEIGHTS, convex
from ..text.lexical import WORD, index_text, parse_query

WINDOW_LINES = 6
"""A paragraph longer than this many lines is cut into windows of this many lines."""
PIECE_CHARS = 400
"""A line longer than this (minified JSON, a one-line HTML page) is cut into pieces."""
MAX_INPUT_CHARS = 400_000
"""Only this much of an enormous output is read: the work stays bounded (~100 ms)."""
CHARS_PER_TOKEN = 4
_K1, _B = 1.2, 0.75

Similarity = Callable[[str, Sequence[str]], Sequence[float]]
"""(query, passages) → the cosine similarity of each passage to the query."""


@dataclass(frozen=True, slots=True)
class Passage:
    first_line: int
    """1-based line number of the passage's first line in the original text."""
    last_line: int
    text: str
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class Extract:
    passages: tuple[Passage, ...]
    """The chosen passages, in their original order."""
    total_lines: int
    total_chars: int
    considered: int
    """How many passages were ranked."""


def split_passages(text: str) -> list[Passage]:
    """Paragraphs (blank-line separated) cut into windows of :data:`WINDOW_LINES` lines;
    long lines cut into :data:`PIECE_CHARS`-character pieces."""
    passages: list[Passage] = []
    block: list[tuple[int, str]] = []

    def flush() -> None:
        for start in range(0, len(block), WINDOW_LINES):
            window = block[start : start + WINDOW_LINES]
            passages.append(Passage(window[0][0], window[-1][0], "\n".join(t for _n, t in window)))
        block.clear()

    for number, line in enumerate(text[:MAX_INPUT_CHARS].splitlines(), start=1):
        line = line.rstrip()
        if not line.strip():
            flush()
        elif len(line) > PIECE_CHARS:
            flush()
            for at in range(0, len(line), PIECE_CHARS):
                passages.append(Passage(number, number, line[at : at + PIECE_CHARS]))
        else:
            block.append((number, line))
    flush()
    return passages


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in WORD.findall(index_text(text))]


def bm25_scores(query_terms: Sequence[str], documents: Sequence[list[str]]) -> list[float]:
    """Okapi BM25 (k1 = 1.2, b = 0.75) of each tokenised document for the query terms, with
    document frequencies taken from ``documents`` themselves. Terms match by prefix of at
    least 4 characters on either side (``rotate`` ~ ``rotating``), a stand-in for stemming."""
    if not documents or not query_terms:
        return [0.0] * len(documents)
    average = sum(len(d) for d in documents) / len(documents) or 1.0
    stems = {t: t[: max(4, len(t) - 2)] if len(t) > 4 else t for t in query_terms}
    matches: dict[str, list[str]] = {}  # word → the query terms it counts for
    for word in {w for doc in documents for w in doc}:
        hit = [t for t, s in stems.items() if word == t or (len(s) >= 4 and word.startswith(s))]
        if hit:
            matches[word] = hit
    counts: list[Counter[str]] = []
    for doc in documents:
        count: Counter[str] = Counter()
        for word, n in Counter(doc).items():
            for term in matches.get(word, ()):
                count[term] += n
        counts.append(count)
    n = len(documents)
    scores = [0.0] * n
    for term in query_terms:
        df = sum(1 for c in counts if c[term])
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, (doc, c) in enumerate(zip(documents, counts, strict=True)):
            tf = c[term]
            if tf:
                scores[i] += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * len(doc) / average))
    return scores


def extract_relevant(
    text: str,
    query: str,
    *,
    max_tokens: int,
    similarity: Similarity | None = None,
) -> Extract:
    """The passages of ``text`` most relevant to ``query`` that fit in ``max_tokens``
    (4 characters a token), in their original order. Without ``similarity`` (no model) the
    ranking is BM25 alone; with no query words at all, the text's opening passages."""
    passages = split_passages(text)
    total_lines = text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0
    terms = parse_query(query).terms
    ranked: list[tuple[int, float]] = []
    if passages:
        lexical = bm25_scores(terms, [_tokens(p.text) for p in passages])
        lists: dict[str, list[tuple[int, float]]] = {
            "bm25": sorted(((i, s) for i, s in enumerate(lexical) if s > 0), key=lambda x: (-x[1], x[0]))
        }
        if similarity is not None and query.strip():
            cosines = similarity(query, [p.text for p in passages])
            lists["vector"] = sorted(enumerate(float(c) for c in cosines), key=lambda x: (-x[1], x[0]))
        fused = convex(lists, weights=DEFAULT_WEIGHTS["convex"]) if any(lists.values()) else []
        ranked = [(f.item, f.score) for f in fused]
        if not ranked:  # nothing to rank by: the opening passages
            ranked = [(i, 0.0) for i in range(len(passages))]
    budget = max_tokens * CHARS_PER_TOKEN
    chosen: dict[int, float] = {}
    used = 0
    for item, score in ranked:
        cost = len(passages[item].text) + 16  # the line-number header
        if used + cost > budget:
            if chosen:
                continue  # a shorter passage further down may still fit
            room = budget - 17
            if room <= 0:
                break
            passage = passages[item]
            passages[item] = Passage(passage.first_line, passage.last_line, passage.text[:room] + "…")
            cost = budget
        chosen[item] = score
        used += cost
    picked = tuple(
        Passage(passages[i].first_line, passages[i].last_line, passages[i].text, round(chosen[i], 6))
        for i in sorted(chosen)
    )
    return Extract(picked, total_lines, len(text), len(passages))
