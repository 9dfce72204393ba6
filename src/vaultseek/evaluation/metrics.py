"""Retrieval-quality metrics over one ranked list of documents and its relevance judgments.

The definitions follow trec_eval as BEIR runs it (through pytrec_eval), so the figures in
``docs/quality.md`` compare with published BEIR and TREC numbers:

- **nDCG@k**: gain = the judged grade (linear, not ``2^grade - 1``), discount = ``log2(rank + 1)``
  with 1-based ranks; the ideal DCG sorts *all* the query's relevant documents by grade, not
  only the retrieved ones, so a relevant document that is never found costs score.
- **Recall@k**: relevant documents in the first k / all relevant documents of the query.
- **Answer@k**: 1 when a document of the query's highest grade is in the first k (success@k
  over the best-graded documents); with binary judgments, success@k.
- **MRR@k** (reciprocal rank): ``1 / rank`` of the first relevant document within k, else 0.
- **Hit@k**: 1 when a relevant document (any grade above 0, not only the highest) is in the
  first k, else 0. Hit@1 asks whether the first result is a relevant page at all — what a
  reader or an agent that takes only the top result gets; Answer@1 would also ask that it be
  a page of the query's highest grade.

A document is relevant when its grade is above 0; grades of 0 or below are judged
non-relevant. A query with no relevant document has no defined nDCG or recall: callers drop
such queries before averaging (as BEIR does) — :func:`has_relevant` says which — and the
functions here raise rather than return a number that would silently drag a mean down.

A ranking is taken as given. Ties in score were already broken by whoever ranked (the engine
breaks them deterministically), and a document listed twice counts once, at its first rank: a
search returns chunks, and several chunks of one document must not earn its gain twice.

Latency figures use :func:`percentile`, with numpy's default definition.

Everything here is pure: no I/O, no engine, no numpy.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = [
    "Judgments",
    "answer_at_k",
    "first_occurrences",
    "has_relevant",
    "hit_at_k",
    "mean",
    "ndcg_at_k",
    "percentile",
    "recall_at_k",
    "reciprocal_rank_at_k",
]

Judgments = Mapping[str, float]
"""Document id → relevance grade for one query (graded, e.g. Cranfield 1–4; binary is 1)."""

T = TypeVar("T", bound=Hashable)


def first_occurrences(items: Iterable[T]) -> list[T]:
    """``items`` in order with repeats removed, each kept at its first (best) position.

    This is how chunk-level results become a document ranking: the best chunk of a document
    decides the document's rank."""
    seen: set[T] = set()
    out: list[T] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def has_relevant(judgments: Judgments) -> bool:
    """Whether the query has at least one relevant (grade > 0) document, i.e. can be scored."""
    return any(grade > 0 for grade in judgments.values())


def _check(judgments: Judgments, k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if not has_relevant(judgments):
        raise ValueError("the query has no relevant document; leave it out of the evaluation")


def _top(ranking: Sequence[str], k: int) -> list[str]:
    """The first k distinct documents of the ranking."""
    return first_occurrences(ranking)[:k]


def _dcg(gains: Iterable[float]) -> float:
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


def ndcg_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """Normalised discounted cumulative gain of the first k documents (0.0 … 1.0)."""
    _check(judgments, k)
    gains = [max(judgments.get(doc, 0.0), 0.0) for doc in _top(ranking, k)]
    ideal = sorted((g for g in judgments.values() if g > 0), reverse=True)[:k]
    return _dcg(gains) / _dcg(ideal)


def recall_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """Share of the query's relevant documents found in the first k (0.0 … 1.0)."""
    _check(judgments, k)
    relevant = {doc for doc, grade in judgments.items() if grade > 0}
    found = sum(1 for doc in _top(ranking, k) if doc in relevant)
    return found / len(relevant)


def answer_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """1.0 when a document of the query's highest grade is in the first k, else 0.0.

    Averaged over queries this is the share of questions whose answer a reader sees on the
    first page — "did I find the note I meant" — where Recall@k also asks for every other
    document judged relevant. With one relevant document per query the two are equal."""
    _check(judgments, k)
    best = max(grade for grade in judgments.values() if grade > 0)
    answers = {doc for doc, grade in judgments.items() if grade == best}
    return 1.0 if any(doc in answers for doc in _top(ranking, k)) else 0.0


def hit_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """1.0 when any relevant document is in the first k, else 0.0.

    Averaged over queries this is the share of questions with something useful in the first k;
    Hit@1 is the share whose first result is a relevant page."""
    _check(judgments, k)
    return 1.0 if any(judgments.get(doc, 0.0) > 0 for doc in _top(ranking, k)) else 0.0


def reciprocal_rank_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """``1 / rank`` of the first relevant document within the first k, else 0.0.

    Averaged over queries this is MRR@k."""
    _check(judgments, k)
    for rank, doc in enumerate(_top(ranking, k), start=1):
        if judgments.get(doc, 0.0) > 0:
            return 1.0 / rank
    return 0.0


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean over queries. No values is an error, not 0: a mean over nothing would
    read as "everything failed" in a results table."""
    items = list(values)
    if not items:
        raise ValueError("mean of no values")
    return math.fsum(items) / len(items)


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0–100) by linear interpolation between closest ranks.

    Same definition as numpy's default (Hyndman & Fan type 7), so latency figures compare
    with any numpy-based report; with few samples it does not jump the way
    nearest-rank does."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 <= p <= 100.0:
        raise ValueError(f"percentile must be within 0..100, not {p}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
