"""The ranked lists a search fuses, each of its candidates: BM25's (all words first, topped up
from any word), and the vectors' — a query's embedding scanned against the in-memory matrix,
or searched where the vectors live (PostgreSQL), within the query's scope and operators."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Protocol

import numpy as np

from ..records import SearchFilter
from ..storage.store import Store
from ..storage.vectors import Scan, VectorIndex
from ..text.lexical import LexicalQuery
from .restriction import Restriction

ANY_TERM_POSTINGS = 8_000
"""The any-term fallback may rank at most about this many chunks: the commonest words of a
long question are left out of it until their postings fit. Ranking every chunk that holds
"example" or "file" costs 10–20 ms at 50k chunks and adds little, since BM25's IDF discounts
such words anyway. (Budgeted in postings, not as a share: the cost is absolute.)"""


Scored = list[tuple[int, float]]
"""(chunk id, score) best first; higher scores are better."""
ScanResult = tuple[np.ndarray | None, Scan | None, Scored]
"""A query's vector (None: all zero), its scan (None: nothing to scan, or vectors searched where
they live) and, when no scope needs SQL, its best hits."""


def lexical_hits(
    store: Store, query: LexicalQuery, limit: int, scope: SearchFilter | None = None,
    restriction: Restriction | None = None,
) -> Scored:  # fmt: skip
    """BM25 hits: all terms first (precise), topped up from any-term matches when that
    finds fewer than ``limit`` (a long question rarely has every word in one chunk). Top-up
    scores are capped at the last all-terms score, so the list stays in score order. The
    query's required phrases hold in both; the ``restriction``'s excluded notes are left out."""
    return lexical_list(store, query, limit, scope, restriction)[0]


def lexical_list(
    store: Store, query: LexicalQuery, limit: int, scope: SearchFilter | None = None,
    restriction: Restriction | None = None,
) -> tuple[Scored, int]:  # fmt: skip
    """:func:`lexical_hits`, and how many of them hold every word of the query (they come
    first)."""
    if query.empty:
        return [], 0
    excluding = restriction.excluding if restriction is not None else None
    hits = store.bm25(query.match_all(), limit, scope, excluding=excluding)
    held = len(hits)
    if len(hits) >= limit or len(query.phrases) < 2:
        return hits, held
    phrases = affordable_phrases(store, query.phrases)
    if not phrases:  # no word of the query occurs anywhere
        return hits, held
    seen = {i for i, _s in hits}
    ceiling = hits[-1][1] if hits else float("inf")
    for item, score in store.bm25(replace(query, phrases=phrases).match_any(), limit, scope, excluding=excluding):
        if len(hits) >= limit:
            break
        if item not in seen:
            ceiling = min(score, ceiling)
            hits.append((item, ceiling))
    return hits, held


SCOPE_PROBE = 1_000
"""A scoped vector search first takes this many of the whole index's best rows (at least ten
times the pool) and keeps those whose files are inside the scope: one indexed lookup per
distinct file, whatever the scope's size. Only when fewer than the pool are inside (a narrow
scope) does it list the scope's files and mask every row by them; listing all 17k files of
the benchmark vault costs ~2 ms, more than the probe, while a narrow scope's list is short."""


def vector_hits(
    store: Store, index: VectorIndex, query: np.ndarray, limit: int, scope: SearchFilter | None
) -> Scored:
    """The ``limit`` chunks most similar to ``query`` inside ``scope`` — the exact masked
    ranking either way, since an in-scope row outside the probe scores below all of it."""
    if not np.any(query) or not len(index):
        return []
    return scan_hits(store, index, index.scan(query), limit, scope)


def scan_hits(
    store: Store, index: VectorIndex, scan: Scan, limit: int, scope: SearchFilter | None,
    restriction: Restriction | None = None,
) -> Scored:  # fmt: skip
    """:func:`vector_hits` from a query's scan; with a ``restriction``, the best of the rows
    it allows (inside ``scope``), however few."""
    if restriction is not None:
        return index.top(scan, limit, rows=restriction.rows(store, index, scope))
    if scope is None:
        return index.top(scan, limit)
    if store.backend == "sqlite":  # the scope's chunks, marked once per scope and index version
        return index.top(scan, limit, rows=np.flatnonzero(store.scope_mask(scope).inside(index.ids)))
    if index.files is None:  # once per matrix
        index.files = store.file_ids_of(index.ids)
    probe, floor = index.best_rows(scan, max(SCOPE_PROBE, limit * 10))
    if len(probe) < len(index):
        files = index.files[probe]
        inside = store.files_inside(np.unique(files).tolist(), scope)
        kept = probe[np.isin(files, np.fromiter(inside, dtype=np.int64, count=len(inside)))]
        if len(kept) >= limit:
            hits = index.top(scan, limit, rows=kept)
            if hits[-1][1] >= floor:  # no row outside the probe can beat the last of them
                return hits
    allowed = store.file_ids_in(scope)
    if not len(allowed):
        return []
    lookup = np.zeros(max(int(allowed[-1]), int(index.files.max())) + 1, dtype=bool)
    lookup[allowed] = True
    return index.top(scan, limit, rows=np.flatnonzero(lookup[index.files]))


def affordable_phrases(store: Store, phrases: tuple[str, ...]) -> tuple[str, ...]:
    """The rarest phrases whose postings fit :data:`ANY_TERM_POSTINGS` (the rarest one that
    occurs at all is always kept), in their original order. Prefix phrases and groups of a
    word's forms (``vocabulary.refine_query``) are kept too: their reach is not known cheaply."""
    exact = [p for p in phrases if p.endswith('"')]
    frequencies = dict(zip(exact, store.document_frequencies([p.strip('"') for p in exact])))  # noqa: B905 - per query: a keyword makes zip() ~0.5 µs slower
    kept = {p for p in phrases if p not in frequencies}
    used = 0
    for phrase in sorted((p for p in exact if frequencies[p]), key=lambda p: frequencies[p]):
        if used and used + frequencies[phrase] > ANY_TERM_POSTINGS:
            break
        kept.add(phrase)
        used += frequencies[phrase]
    return tuple(p for p in phrases if p in kept)


class QueryModel(Protocol):
    """What search needs of the embedding model: a query vector, and its name (the relevance
    judgment is calibrated per model)."""

    name: str

    def embed_one(self, text: str) -> np.ndarray: ...


class StaticQueryModel(QueryModel, Protocol):
    """The fast tier's model, which also says how much of a query it can read."""

    def legible_share(self, text: str) -> float: ...

    def kin(self, word: str, limit: int = 5) -> list[tuple[str, float]]: ...

    def spellings(self) -> Mapping[str, tuple[str, ...]]: ...


class NearestVectors(Protocol):
    """Vectors searched where they live — PostgreSQL's HNSW index — rather than in memory:
    the ``limit`` chunks nearest a unit query vector inside ``scope``, best first."""

    def __len__(self) -> int: ...

    def nearest(
        self, query: np.ndarray, limit: int, scope: SearchFilter | None, *,
        chunks: np.ndarray | None = None, excluded_chunks: np.ndarray | None = None,
    ) -> Scored: ...  # fmt: skip


DEEP_QUERY_CHARS = 4_096
"""What a deep model without its own :meth:`~vaultseek.embeddings.deep.DeepModel.query_window`
is sent of a query."""


def deep_window(model: QueryModel, text: str) -> str:
    """What the deep list embeds of a query: the part its model reads in one window (a model
    reading more would average windows, ~1 s of CPU each for the bundled one). The static list
    takes the query whole: its model cuts it at its own 512 tokens, in about a millisecond."""
    window = getattr(model, "query_window", None)
    return str(window(text)) if callable(window) else text[:DEEP_QUERY_CHARS]


def scan_query(
    index: VectorIndex | NearestVectors, model: QueryModel, text: str, pool: int, scope: SearchFilter | None,
    restriction: Restriction | None = None,
) -> ScanResult:  # fmt: skip
    """The query's embedding and scan (None for an all-zero query or an empty index), and,
    when there is no scope or restriction (so no SQL is needed), its ``pool`` best chunks.
    Vectors searched where they live take the scope and the restriction along and need no
    scan."""
    query = model.embed_one(text)
    if not np.any(query) or not len(index):
        return None, None, []
    if not isinstance(index, VectorIndex):
        if restriction is None:
            return query, None, index.nearest(query, pool, scope)
        return query, None, index.nearest(query, pool, scope, chunks=restriction.chunks, excluded_chunks=restriction.excluded_chunks)
    scan = index.scan(query)
    return query, scan, (index.top(scan, pool) if scope is None and restriction is None else [])

