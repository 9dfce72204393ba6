"""Reranking: the hybrid's best sections re-scored by a reranker the user runs, fused with
the hybrid's own scores.

The reranker (``llm/rerankers.py``: llama.cpp's ``/v1/rerank``, TEI's ``/rerank``, or the chat
model asked pointwise) scores the fused list's first ``depth`` sections against the query.
Its scores do not replace the hybrid's: over that head both are min-max normalised and
mixed, ``(1 − weight) × hybrid + weight × reranker``, and the mix is mapped back onto the
head's own score range, so the head stays above the rest of the list and a section the
reranker gave no score keeps its hybrid standing.

One guarantee holds whatever the reranker says: the lexical list's best section (BM25 #1:
the exact match for a name, an error code, an identifier) that the hybrid ranked in its top
:data:`KEPT_TOP` stays there. A reranker that misreads a code cannot bury it.

A failure — no server, a slow one, an error status, a reply without scores — leaves the
hybrid's ranking as it was and becomes a notice naming the problem and its fix.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from ..errors import VaultseekError
from ..records import Reranking
from ..storage.store import Store
from .fusion import Fused

KEPT_TOP = 3
"""BM25's best section, when the hybrid ranks it this high, is never reranked below it."""
DEFAULT_DEPTH = 20
DEFAULT_WEIGHT = 0.5


def fuse_reranked(
    fused: Sequence[Fused], scores: Mapping[int, float | None], weight: float
) -> list[Fused]:
    """``fused`` with the items ``scores`` holds (its head) re-scored by the mix the module
    docstring describes and re-ordered; every other item keeps its score and place after
    them. Each re-scored item's ``signals["rerank"]`` is its normalised reranker score."""
    head = [f for f in fused if f.item in scores]
    if not head:
        return list(fused)
    rest = [f for f in fused if f.item not in scores]
    hybrid = _normalised({f.item: f.score for f in head})
    given = {item: score for item, score in scores.items() if score is not None}
    reranked = _normalised(given)
    low, high = min(f.score for f in head), max(f.score for f in head)
    out = []
    for f in head:
        mine = reranked.get(f.item, hybrid[f.item])  # no score: its hybrid standing
        mixed = (1 - weight) * hybrid[f.item] + weight * mine
        signals = (
            {**f.signals, "rerank": round(reranked[f.item], 6)} if f.item in reranked else f.signals
        )
        out.append(replace(f, score=low + (high - low) * mixed, signals=signals))
    out.sort(key=lambda f: -f.score)
    return keep_exact_match(list(fused), out) + rest


def keep_exact_match(before: Sequence[Fused], after: list[Fused]) -> list[Fused]:
    """``after`` with BM25's best item moved back to place :data:`KEPT_TOP` when ``before``
    had it in its top :data:`KEPT_TOP` and ``after`` dropped it lower (it takes the score of
    the item it goes before, so the scores stay in order)."""
    top = next((f for f in before[:KEPT_TOP] if f.ranks.get("bm25") == 1), None)
    if top is None:
        return after
    at = next((i for i, f in enumerate(after) if f.item == top.item), None)
    if at is None or at < KEPT_TOP:
        return after
    moved = after.pop(at)
    after.insert(KEPT_TOP - 1, replace(moved, score=after[KEPT_TOP - 1].score))
    return after


def _normalised(values: Mapping[int, float]) -> dict[int, float]:
    """Min-max over the values (all 1.0 when they are equal)."""
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    span = high - low
    return {item: (value - low) / span if span > 0 else 1.0 for item, value in values.items()}


class RerankerLike(Protocol):
    """What :func:`rerank` needs of a reranker (``llm.rerankers.Blocking``): its name, and a
    synchronous call from query and passages to one score per passage (None: no score)."""

    name: str

    def __call__(self, query: str, passages: Sequence[str]) -> list[float | None]: ...


def rerank(
    store: Store,
    fused: list[Fused],
    query: str,
    reranker: RerankerLike,
    *,
    depth: int,
    weight: float,
) -> tuple[list[Fused], Reranking | None, str | None]:
    """The fused list reranked (its first ``depth`` items re-scored), what was done, and a
    notice — or, when the reranker fails, the list as it was, None and the notice saying why
    and what fixes it."""
    head = fused[:depth]
    if not head:
        return fused, None, None
    rows = store.chunks_by_id([f.item for f in head])
    items = [f.item for f in head if f.item in rows]
    passages = [f"{rows[i].heading_context}\n{rows[i].text}".strip() for i in items]
    started = time.perf_counter()
    try:
        scores = reranker(query, passages)
    except VaultseekError as exc:
        return fused, None, skipped("reranking", exc)
    ms = (time.perf_counter() - started) * 1000
    if len(scores) != len(items):
        return (
            fused,
            None,
            f"reranking skipped: {reranker.name} gave {len(scores)} scores for {len(items)} passages",
        )
    reranked = fuse_reranked(fused, dict(zip(items, scores, strict=True)), weight)
    return reranked, Reranking(reranker.name, len(items), ms), None


def skipped(what: str, exc: VaultseekError) -> str:
    """The notice for a model step a search answered without."""
    hint = f" ({exc.hint})" if exc.hint else ""
    return f"{what} skipped, showing the hybrid's results: {exc.message}{hint}"
