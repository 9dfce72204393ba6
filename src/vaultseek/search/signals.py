"""Ranking signals applied after fusion: a query that names a note, and recency.

Both are options of a search (``title_match``, ``recency_half_life_days``) and off by default:
the fused ranking is what the evaluation harness measured, and a signal changes it only when
asked. Each one records what it did in the result's ``signals`` (shown by every surface), so
the explanation is the computation itself, never a second guess at it.

* **Title match**: when the query, normalised by :func:`name_key`, equals a note's title, one
  of its aliases or its file name, that note's best chunk (or its first, if no list found it)
  gets the best fused score added, so it ranks above everything the query did not name. Names
  are stored normalised at index time (``file_names``), so this costs one indexed lookup.
* **Recency**: each candidate's score is multiplied by ``1 − w + w × 0.5^(age / half-life)``
  where age is the time since its file was modified and ``w`` is ``recency_weight`` (0.5 by
  default): a note edited just now keeps its score, one a half-life old keeps 75 %, and
  however old, a note keeps at least ``1 − w`` of it — recency reorders near-ties, it does not
  bury what matches best.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..records import SearchFilter
from ..storage.store import Store
from ..text.keys import name_key
from .fusion import Fused

TITLE = "title"
RECENCY = "recency"
def recency_factor(age_seconds: float, half_life_days: float, weight: float) -> float:
    """The multiplier recency applies to a score (see the module docstring)."""
    decay = math.pow(0.5, max(age_seconds, 0.0) / (half_life_days * 86_400.0))
    return 1.0 - weight + weight * decay


def apply_signals(
    store: Store,
    fused: list[Fused],
    query: str,
    *,
    scope: SearchFilter | None,
    title_match: bool,
    half_life_days: float | None,
    recency_weight: float,
    now: float,
) -> list[Fused]:
    """``fused`` re-scored by the signals that are on, best first (ties: a title match, then
    the better list rank, then the smaller id)."""
    named = store.files_named(key, scope) if title_match and (key := name_key(query)) else []
    if not named and not half_life_days:
        return fused
    files = store.chunk_files([f.item for f in fused])
    out = list(fused)
    if named:  # a named file none of the lists found still shows, by its first chunk
        present = {files[f.item][0] for f in fused if f.item in files}
        for file_id, (chunk_id, mtime_ns) in store.first_chunks([i for i in named if i not in present]).items():
            files[chunk_id] = (file_id, mtime_ns)
            out.append(Fused(chunk_id, 0.0, {}))
    if half_life_days:
        out = [
            _with(f, f.score * factor, RECENCY, factor)
            for f in out
            for factor in [recency_factor(now - files[f.item][1] / 1e9, half_life_days, recency_weight)
                           if f.item in files else 1.0]
        ]  # fmt: skip
    titled: set[int] = set()
    if named:
        top = max((f.score for f in out), default=0.0) or 1.0
        wanted = set(named)
        boosted = []
        for f in sorted(out, key=_order):
            owner = files.get(f.item, (None, 0))[0]
            if owner in wanted:
                wanted.discard(owner)
                titled.add(f.item)
                f = _with(f, f.score + top, TITLE, top)
            boosted.append(f)
        out = boosted
    return sorted(out, key=lambda f: (-f.score, f.item not in titled, *_order(f)[1:]))


def _order(f: Fused) -> tuple[float, float, int]:
    return (-f.score, min(f.ranks.values(), default=math.inf), f.item)


def _with(f: Fused, score: float, name: str, value: float) -> Fused:
    return replace(f, score=score, signals={**f.signals, name: round(value, 6)})
