"""A large collection's HNSW index on its vectors: building it, and searching by it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ...records import SearchFilter
from ..scope import scope_where
from .base import PgStoreBase
from .static_vectors import _vector_text

HNSW_MIN_CHUNKS = 100_000
"""A collection this large gets an HNSW index on its vectors, and searches them in
PostgreSQL; below it the vectors are loaded and searched exactly in memory, as the SQLite
index does. (Every searching process loads the matrix: 256 bytes a chunk, ~260 MB at a
million chunks, where HNSW reads a small part of its graph; ``benchmarks/postgres.py scale``
measures both.)"""
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 200
"""The HNSW graph's links a node (pgvector's default: 16) and its build-time search width
(default: 64). On 100,000 synthetic chunks, with a search's width of 200, the defaults found
91% of the exact nearest ten and these 97%, for a build five times as long and a graph a
quarter larger (``benchmarks/postgres.py scale`` measures it at a million)."""


class PgHnsw(PgStoreBase):
    """pgvector's HNSW index on ``chunks.embedding``, built once a collection is large."""

    def ensure_hnsw(self, *, force: bool = False) -> bool:
        """Build the HNSW index on the vectors once the collection has
        :data:`HNSW_MIN_CHUNKS` chunks (or now, ``force``); True when it exists."""
        if self.vector_index_exists():
            return True
        if not force and self.chunk_count() < HNSW_MIN_CHUNKS:
            return False
        dim = self._one("SELECT vector_dims(embedding) FROM chunks LIMIT 1")
        if dim is None:
            return False
        # CONCURRENTLY: searches and other writers carry on while it builds (minutes at a
        # million chunks). A build that was interrupted leaves an invalid index: drop it first.
        self.pg.execute("DROP INDEX IF EXISTS chunks_embedding_hnsw")
        self.pg.execute(
            f"CREATE INDEX CONCURRENTLY chunks_embedding_hnsw ON chunks USING hnsw "
            f"((embedding::halfvec({int(dim)})) halfvec_ip_ops) WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
        )
        self.set_meta({"hnsw_dim": str(int(dim))})
        return True

    def vector_index_exists(self) -> bool:
        """Whether the HNSW index exists and is usable (a build still running or cut short
        leaves it invalid)."""
        return bool(self._one(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = 'chunks_embedding_hnsw'",
            (self.schema,),
        ))  # fmt: skip

    def hnsw_vectors(self, connect: Callable[[], Any]) -> HnswVectors | None:
        """The collection's vectors as searched by its HNSW index (on a connection of their
        own, from ``connect``, so a hybrid search runs them beside BM25), or None while the
        collection has no such index (it is searched in memory)."""
        dim = self.get_meta("hnsw_dim")
        if dim is None or not self.vector_index_exists():
            return None
        return HnswVectors(connect, self.schema, int(dim), self.chunk_count())


class HnswVectors:
    """A collection's vectors searched by pgvector's HNSW index
    (:class:`~vaultseek.search.candidates.NearestVectors`)."""

    def __init__(self, connect: Callable[[], Any], schema: str, dim: int, chunks: int) -> None:
        self._connect = connect
        self.ef_search: int | None = None
        """pgvector's search width; None: twice the limit, at least 40 (:meth:`nearest`)."""
        self._conn: Any = None
        self._lock = threading.Lock()
        self.schema = schema
        self.dim = dim
        self.chunks = chunks

    def __len__(self) -> int:
        return self.chunks

    def nearest(
        self, query: np.ndarray, limit: int, scope: SearchFilter | None, *,
        chunks: np.ndarray | None = None, excluded_chunks: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:  # fmt: skip
        """(chunk id, cosine) of the ``limit`` chunks nearest ``query`` (a unit vector), best
        first. The search width (``hnsw.ef_search``) is :attr:`ef_search` when set, else twice
        the limit, at least 40 and at most 1,000: a search's pool of 100 reads 200 candidates,
        which found 96% of the exact nearest ten at a million synthetic chunks (97% at 400, for
        ~14 ms more: docs/postgres.md#measured);
        pgvector's iterative scan keeps reading the graph until ``limit`` rows inside
        ``scope`` are found. ``chunks`` and ``excluded_chunks`` (ids) narrow the rows further:
        a query's required phrases and exclusions (``search.restriction``)."""
        join, conditions, params = "", [], []
        if scope is not None and not scope.unrestricted:
            condition, scoped = scope_where(scope, dialect="postgresql")
            join, conditions, params = " JOIN files f ON f.id = c.file_id", [condition], list(scoped)
        if chunks is not None:
            conditions.append("c.id = ANY(%s::bigint[])")
            params.append(chunks.tolist())
        if excluded_chunks is not None and len(excluded_chunks):
            conditions.append("c.id NOT IN (SELECT unnest(%s::bigint[]))")
            params.append(excluded_chunks.tolist())
        where = " WHERE " + " AND ".join(conditions) if conditions else ""
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
                self._conn.execute(f'SET search_path = "{self.schema}", public')
                self._conn.execute("SET hnsw.iterative_scan = relaxed_order")
            width = self.ef_search or max(40, min(limit * 2, 1000))
            self._conn.execute(f"SET hnsw.ef_search = {int(width)}")
            rows = self._conn.execute(
                f"SELECT c.id, (c.embedding::halfvec({self.dim})) <#> %s::halfvec({self.dim}) AS distance "
                f"FROM chunks c{join}{where} ORDER BY distance LIMIT %s",
                (_vector_text(query), *params, limit),
            ).fetchall()
        return sorted(((int(cid), -float(d)) for cid, d in rows), key=lambda hit: (-hit[1], hit[0]))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
