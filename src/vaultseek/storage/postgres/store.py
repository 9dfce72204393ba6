"""The index's tables on PostgreSQL: :class:`PgStore`, with the methods of the SQLite
:class:`~vaultseek.storage.store.Store`, so everything above the storage layer works on
either backend unchanged.

Every write runs in one transaction that first takes the collection's advisory lock
(``pg_advisory_xact_lock``): writers — two ``vaultseek index`` runs on two machines, a
watcher, the deep worker — take turns a transaction at a time, so the BM25 totals and term
counts they update together never race, and readers, who take no lock, see a file's old
rows or its new ones, never half of either. A writer killed mid-batch loses its open
transaction only; the next run indexes those files again.

:class:`PgStore` is put together from one class per theme, each in the module named for what
it owns, as the SQLite store is: ``files``, ``static_vectors`` and ``deep_vectors``,
``lexical``, ``scope_masks``, ``links``, ``chunks``, ``hnsw`` (a large collection's vector
index), all on ``base`` (the connection, transactions and locks, meta, change counters).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..store import Store
from . import postings
from .chunks import PgChunkLookups
from .deep_vectors import PgDeepVectors
from .files import PgFileTables
from .hnsw import HNSW_EF_CONSTRUCTION, HNSW_M, HNSW_MIN_CHUNKS, HnswVectors, PgHnsw
from .lexical import PgLexicalSearch
from .links import PgLinkTables
from .schema import migrate, schema_name
from .scope_masks import PgScopes
from .static_vectors import PgStaticVectors

__all__ = ["HNSW_EF_CONSTRUCTION", "HNSW_M", "HNSW_MIN_CHUNKS", "HnswVectors", "PgStore"]


class PgStore(
    PgFileTables,
    PgDeepVectors,
    PgStaticVectors,
    PgLexicalSearch,
    PgScopes,
    PgLinkTables,
    PgChunkLookups,
    PgHnsw,
    Store,
):
    """One collection's tables over one psycopg connection (autocommit; the store opens its
    own transactions).

    A :class:`Store` by type, so the layers above take either; it overrides every public
    method (``tests/test_backends.py`` checks that none is inherited) and never sets the
    SQLite connection ``conn``, so a forgotten one fails loudly rather than running SQLite's
    SQL."""

    backend = "postgresql"

    def __init__(self, conn: Any, collection: str, *, read_only: bool = False) -> None:
        self.pg = conn
        self.collection = collection
        self.schema = schema_name(collection)
        self.read_only = read_only
        self.schema_version = migrate(conn, self.schema, read_only=read_only)
        conn.execute(f'SET search_path = "{self.schema}", public')
        if not read_only:
            # The index is derived from the vault: a server crash may lose its last fraction
            # of a second of commits — never corrupt them — and the next sync redoes those
            # files. Waiting for each commit's fsync made indexing several times slower.
            conn.execute("SET synchronous_commit = off")
        self._lock_key = f"vaultseek:{self.schema}"
        self._writing = False
        self._changes = 0
        self._frequencies: dict[str, int] = {}
        self._pg_frequencies_as_of: int | None = None
        self._note_chunks: tuple[tuple[str, int] | None, np.ndarray, int] = (None, np.zeros(0, dtype=np.int64), 0)

    # -- status -------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        files = int(self._one("SELECT count(*) FROM files WHERE status = 'indexed'"))
        chunks = int(self._one("SELECT count(*) FROM chunks"))
        return {"files": files, "chunks": chunks, "vectors": chunks, "fts_rows": chunks}

    def integrity_problems(self) -> list[str]:
        """Ways the totals disagree with the rows (empty when consistent)."""
        problems = []
        row = self.pg.execute(
            "SELECT s.chunks, s.tokens, (SELECT count(*) FROM chunks), (SELECT coalesce(sum(length), 0) FROM chunks) "
            "FROM stats s"
        ).fetchone()
        assert row is not None
        if row[0] != row[2]:
            problems.append(f"stats count {row[0]} chunks but the table holds {row[2]}")
        if row[1] != row[3]:
            problems.append(f"stats count {row[1]} tokens but the chunks hold {row[3]}")
        return problems + postings.problems(self.pg)

    def optimize(self) -> None:
        """Drop term counts that reached zero, vacuum and analyse the collection's tables (the
        vacuum lets a term's postings be read from the index alone:
        ``schema.p003_covering_postings``), and give a large collection its HNSW index. A role
        that does not own the tables skips them with a server warning; autovacuum does it later."""
        with self._write():
            # A durable commit flushes the writes committed before it without waiting (the
            # writer's default): vacuum marks a page visible to all only once they are.
            self.pg.execute("SET LOCAL synchronous_commit = on")
            self.pg.execute("DELETE FROM terms_df WHERE df <= 0")
        tables = ", ".join(f'"{self.schema}"."{name}"' for name in self._tables())
        self.pg.execute(f"VACUUM (ANALYZE) {tables}")
        self.ensure_hnsw()

    def sizes(self) -> dict[str, int]:
        """Bytes on disk of the collection's tables and indexes."""
        return {
            name: int(size)
            for name, size in self.pg.execute(
                "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
                (self.schema,),
            )
        }

    def _tables(self) -> list[str]:
        """The names of the collection's tables."""
        return list(self.sizes())

    def close(self) -> None:
        self.pg.close()
