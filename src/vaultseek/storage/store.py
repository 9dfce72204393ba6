"""All SQL vaultseek runs, behind methods named for what they mean.

Nothing above this module writes SQL (the condition a search filter becomes is built beside
it, in ``scope``). Every write that changes a file's rows happens in one
transaction (``with self.conn``), so a crash or ``kill -9`` leaves either the old rows or the
new ones, never a mix, and the FTS and vector stores always agree with ``chunks``.

:class:`Store` is put together from one class per theme, each in the module named for what it
owns: ``files`` (files, skips, OCR checkpoints), ``static_vectors`` and ``deep_vectors``,
``lexical`` (FTS5), ``scope_masks`` (what lies inside a search's scope), ``links``, ``chunks``
(chunk lookups), all on ``base`` (the connection, transactions, meta, change counters). This
module holds the store's state and its status, and names the records callers import.
"""

from __future__ import annotations

import numpy as np

from ..records import SearchFilter
from .chunks import ChunkLookups, ChunkRow
from .db import Connection, FTS5Tokenizer
from .deep_vectors import DeepVectors, PendingTexts, deep_table
from .files import FileState, FileTables, PreparedChunk, utc_now
from .lexical import BM25_WEIGHTS, FREQUENCY_CACHE_LIMIT, LexicalSearch
from .links import LinkRow, LinkTables
from .scope_masks import SCOPES_KEPT, ScopeMask, Scopes
from .static_vectors import StaticVectors, decode_codes, decode_vectors
from .static_vectors import _vector_blob as _vector_blob

__all__ = [
    "BM25_WEIGHTS",
    "FREQUENCY_CACHE_LIMIT",
    "REEMBEDDING",
    "SCOPES_KEPT",
    "ChunkRow",
    "FileState",
    "LinkRow",
    "PendingTexts",
    "PreparedChunk",
    "ScopeMask",
    "Store",
    "decode_codes",
    "decode_vectors",
    "deep_table",
    "utc_now",
]

REEMBEDDING = "reembedding:"
"""Stored in place of the model fingerprint while a model change is half done, so nothing
trusts a table that mixes two models' vectors, and the next run starts the re-embed over."""


class Store(FileTables, StaticVectors, DeepVectors, LexicalSearch, Scopes, LinkTables, ChunkLookups):
    """The index's tables, over one apsw connection.

    Rows are read by iterating the cursor (``list(cursor)`` is apsw's ``fetchall()``), or with
    ``cursor.get`` for the one value of an aggregate: apsw types those as Any, since SQLite's
    types are the schema's, and each method's signature states what the schema promises."""

    backend = "sqlite"

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._tokenize: FTS5Tokenizer | None = None
        self._temp_changes = 0
        self._excluding: tuple[tuple[str, int, int] | None, int] = (None, 0)
        """What ``temp.excluded_chunks`` holds: (expression, data version, changes) and the
        number of files (:meth:`_exclude`)."""
        self._frequencies: dict[str, int] = {}
        self._frequencies_as_of: tuple[int, int] | None = None
        self._chunks: tuple[tuple[int, int], int] | None = None
        """The chunk count and the (data version, changes) it was read at."""
        self._owners: tuple[tuple[int, int], np.ndarray, np.ndarray] | None = None
        """Every chunk's id (ascending) and its file's id, and the (data version, changes)
        they were read at (:meth:`_chunk_owners`)."""
        self._scopes: dict[tuple[SearchFilter, int, int], ScopeMask] = {}
        """The last few scopes' masks, by (scope, data version, changes) (:meth:`scope_mask`)."""
        self._scope_masks: dict[int, bytes] = {}
        """Each kept mask's chunks as bytes, by its key: what ``vaultseek_in_scope`` reads."""
        self._scope_function_added = False
        self._scope_serial = 0

    def close(self) -> None:
        self.conn.close()

    # -- status -------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        return {
            "files": int(self.conn.execute("SELECT count(*) FROM files WHERE status = 'indexed'").get),
            "chunks": int(self.conn.execute("SELECT count(*) FROM chunks").get),
            "vectors": int(self.conn.execute("SELECT count(*) FROM vectors").get),
            "fts_rows": int(self.conn.execute("SELECT count(*) FROM chunks_fts_docsize").get),
        }

    def integrity_problems(self) -> list[str]:
        """Ways the three stores disagree (empty when consistent); used by tests and status."""
        problems = []
        counts = self.counts()
        if counts["chunks"] != counts["vectors"]:
            problems.append(f"{counts['chunks']} chunks but {counts['vectors']} vectors")
        if counts["chunks"] != counts["fts_rows"]:
            problems.append(f"{counts['chunks']} chunks but {counts['fts_rows']} FTS rows")
        try:
            self.conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
        except Exception as exc:  # noqa: BLE001 - apsw.CorruptError and kin: the FTS index does not match its content
            problems.append(f"FTS integrity check failed: {exc}")
        return problems

    def optimize(self) -> None:
        """Merge FTS segments and refresh planner statistics after a large write."""
        with self.conn:
            self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
        self.conn.execute("PRAGMA incremental_vacuum")
        self.conn.execute("PRAGMA optimize")
