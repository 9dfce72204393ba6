"""The index's tables on PostgreSQL: :class:`PgStore`, with the methods of the SQLite
:class:`~vaultseek.storage.store.Store`, so everything above the storage layer works on
either backend unchanged.

Every write runs in one transaction that first takes the collection's advisory lock
(``pg_advisory_xact_lock``): writers — two ``vaultseek index`` runs on two machines, a
watcher, the deep worker — take turns a transaction at a time, so the BM25 totals and term
counts they update together never race, and readers, who take no lock, see a file's old
rows or its new ones, never half of either. A writer killed mid-batch loses its open
transaction only; the next run indexes those files again.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...errors import IndexBusyError
from ...records import Location, Note, SearchFilter, SkippedFile
from ..db import fts5_tokens
from ..scope import scope_where
from ..store import (
    FREQUENCY_CACHE_LIMIT,
    ChunkRow,
    FileState,
    LinkRow,
    PendingTexts,
    PreparedChunk,
    ScopeMask,
    Store,
    deep_table,
    utc_now,
)
from ..vectors import quantize
from ..writer_lock import LockHolder
from . import fulltext, postings
from .schema import migrate, schema_name

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
SYNC_LOCK_CLASS = 7_405_339
"""First key of the advisory lock a sync holds (the second is the hash of the schema)."""
LOCK_POLL_SECONDS = 0.2
_FILE_COLUMNS = (
    "id, path, size, mtime_ns, content_hash, status, error, kind, ocr_pending, indexed_at, "
    "ocr_over_limit, ocr_limit"
)
_LINK_SELECT = (
    "SELECT l.id, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, l.via "
    "FROM links l JOIN files f ON f.id = l.file_id"
)


class PgStore(Store):
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

    # -- transactions -------------------------------------------------------------------
    @contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction holding the collection's writer lock (nested calls join
        the open one); it bumps ``stats.version`` so readers reload what they cached."""
        if self._writing:
            yield
            return
        with self.pg.transaction():
            self.pg.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self._lock_key,))
            self._writing = True
            try:
                yield
            finally:
                self._writing = False
            self.pg.execute("UPDATE stats SET version = version + 1")
        self._changes += 1

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction around many :meth:`replace_file` calls: all of them or none."""
        with self._write():
            yield

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """A transaction holding the writer lock from its first read."""
        with self._write():
            yield

    @contextmanager
    def sync_lock(
        self,
        *,
        timeout: float | None = None,
        on_wait: Callable[[LockHolder], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[bool]:
        """The collection's one-writer lock for a whole sync (a
        :class:`~vaultseek.storage.writer_lock.WriterLock`): a session advisory lock, which
        the server releases when the holder's connection ends however it ends. A waiter
        hears who holds it (the holder's ``application_name``, address and start) and gives
        up after ``timeout`` seconds with :class:`IndexBusyError`. A connection lost while it
        is held ends the sync with the error that says so, not with the failed unlock's.
        (``connection`` is imported here: it loads psycopg, which a search of an index file,
        importing this module for its classes, must not.)"""
        from .connection import Error, translate

        try:
            key = (SYNC_LOCK_CLASS, self._one("SELECT hashtext(%s)", (self.schema,)))
        except Error as exc:
            raise translate(exc, self.pg) from exc
        started = time.monotonic()
        told: LockHolder | None = None
        while not self._try_lock(key):
            waited = time.monotonic() - started
            holder = self._lock_holder(key)
            if on_wait is not None and (told is None or holder != told):
                told = holder
                on_wait(holder)
            if should_stop is not None and should_stop():
                yield False
                return
            if timeout is not None and waited >= timeout:
                raise IndexBusyError(
                    f"the collection {self.collection!r} is being written by {holder.describe()}; "
                    f"gave up after {timeout:g} s",
                    hint="try again when it is done, or wait longer (`vaultseek index --wait SECONDS`)",
                )
            time.sleep(LOCK_POLL_SECONDS)
        try:
            yield True
        finally:
            self._unlock(key)

    def _try_lock(self, key: tuple[int, int]) -> bool:
        from .connection import Error, translate

        try:
            return bool(self._one("SELECT pg_try_advisory_lock(%s, %s)", key))
        except Error as exc:
            raise translate(exc, self.pg) from exc

    def _unlock(self, key: tuple[int, int]) -> None:
        """Release the sync lock; on a connection that is gone there is nothing to release
        (the server ended the session, and its locks with it)."""
        from .connection import Error, translate

        if self.pg.closed or self.pg.broken:
            return
        try:
            self.pg.execute("SELECT pg_advisory_unlock(%s, %s)", key)
        except Error as exc:
            if self.pg.closed or self.pg.broken:
                return
            raise translate(exc, self.pg) from exc

    def _lock_holder(self, key: tuple[int, int]) -> LockHolder:
        row = self.pg.execute(
            "SELECT a.pid, a.application_name, host(a.client_addr), extract(epoch FROM a.backend_start) "
            "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
            "AND l.granted AND l.classid = %s::oid AND l.objid = (%s::bigint & 4294967295)::oid AND l.objsubid = 2",
            key,
        ).fetchone()
        if row is None:
            return LockHolder()
        where = f" on {row[2]}" if row[2] else ""
        return LockHolder(int(row[0]), f"{row[1] or 'a'} session{where}", float(row[3]))

    def total_changes(self) -> int:
        """Write transactions this store has committed: unchanged across a step means the
        step wrote nothing."""
        return self._changes

    def data_version(self) -> int:
        """Changes whenever any writer commits: the cue to reload cached vectors."""
        return int(self._one("SELECT version FROM stats"))

    def _one(self, sql: str, params: Sequence[object] | None = None) -> Any:
        row = self.pg.execute(sql, params).fetchone()
        return None if row is None else row[0]

    # -- meta ---------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        value = self._one("SELECT value FROM meta WHERE key = %s", (key,))
        return None if value is None else str(value)

    def delete_meta(self, key: str) -> None:
        with self._write():
            self.pg.execute("DELETE FROM meta WHERE key = %s", (key,))

    def set_meta(self, values: dict[str, str]) -> None:
        with self._write(), self.pg.cursor() as cur:
            cur.executemany(
                "INSERT INTO meta(key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                list(values.items()),
            )

    # -- files --------------------------------------------------------------------------
    def file_states(self, paths: Sequence[str] | None = None) -> dict[str, FileState]:
        if paths is None:
            rows = self.pg.execute(f"SELECT {_FILE_COLUMNS} FROM files").fetchall()
        else:
            rows = self.pg.execute(f"SELECT {_FILE_COLUMNS} FROM files WHERE path = ANY(%s)", (list(paths),)).fetchall()
        return {row[1]: FileState(row[0], *row[2:]) for row in rows}

    def max_file_id(self) -> int:
        return int(self._one("SELECT coalesce(max(id), 0) FROM files"))

    def folders(self) -> set[str]:
        found: set[str] = set()
        for (path,) in self.pg.execute("SELECT path FROM files WHERE status = 'indexed'"):
            parts = path.split("/")[:-1]
            found.update("/".join(parts[:end]) for end in range(1, len(parts) + 1))
        return found

    def tag_names(self) -> list[str]:
        return [row[0] for row in self.pg.execute("SELECT DISTINCT tag FROM file_tags ORDER BY tag")]

    def has_tag(self, tag: str) -> bool:
        return self._one("SELECT 1 FROM file_tags WHERE tag = %s LIMIT 1", (tag,)) is not None

    def has_kind(self, kind: str) -> bool:
        return self._one("SELECT 1 FROM files WHERE kind = %s AND status = 'indexed' LIMIT 1", (kind,)) is not None

    def has_files_under(self, folder: str) -> bool:
        low = folder.rstrip("/") + "/"
        high = low[:-1] + chr(ord("/") + 1)
        return self._one("SELECT 1 FROM files WHERE path >= %s AND path < %s LIMIT 1", (low, high)) is not None

    def replace_file(
        self,
        path: str,
        *,
        size: int,
        mtime_ns: int,
        content_hash: str,
        note: Note,
        chunks: Sequence[PreparedChunk],
        kind: str = "note",
        ocr_pages: int = 0,
        ocr_pending: int = 0,
        ocr_over_limit: int = 0,
        ocr_limit: int = 0,
        fields: Sequence[tuple[str, str | None]] = (),
        tags: Sequence[str] = (),
        names: Sequence[str] = (),
    ) -> None:
        """Store a file's new rows in place of its old ones, in one transaction, with the
        BM25 totals and term counts moved by the rows that went and came."""
        new_chunks = [
            postings.NewChunk(
                c.draft.position, c.draft.section, c.draft.heading_context, c.draft.text, c.embed_hash,
                _location_json(c.draft), _vector_text(c.vector), fulltext.document(c.searched),
            )
            for c in chunks
        ]  # fmt: skip
        # One pipeline: every statement names the file by its path (unique), so none waits
        # for an answer before the next is sent — a round trip a statement made indexing
        # several times slower than SQLite's.
        file_id = "(SELECT id FROM files WHERE path = %s)"
        with self._write(), self.pg.pipeline(), self.pg.cursor() as cur:
            self._forget(path)
            cur.execute("DELETE FROM ocr_checkpoints WHERE path = %s", (path,))
            cur.execute(
                "INSERT INTO files(path, size, mtime_ns, content_hash, status, title, type, tags, aliases, "
                "indexed_at, kind, ocr_pages, ocr_pending, ocr_over_limit, ocr_limit) "
                "VALUES (%s, %s, %s, %s, 'indexed', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    path, size, mtime_ns, content_hash, note.title, note.type,
                    json.dumps(list(note.tags), ensure_ascii=False),
                    json.dumps(list(note.aliases), ensure_ascii=False),
                    utc_now(), kind, ocr_pages, ocr_pending, ocr_over_limit, ocr_limit,
                ),
            )  # fmt: skip
            if new_chunks:
                postings.add_chunks(cur, path, new_chunks)
            rows: list[tuple[str, list[tuple[object, ...]]]] = [
                (
                    f"INSERT INTO links(file_id, target, heading, alias, embed, syntax) VALUES ({file_id}, %s, %s, %s, %s, %s)",
                    [(path, ln.target, ln.heading, ln.alias, int(ln.embed), ln.syntax) for ln in note.links],
                ),
                (
                    f"INSERT INTO frontmatter_fields(file_id, key, value) VALUES ({file_id}, %s, %s)",
                    [(path, key, value) for key, value in fields],
                ),
                (f"INSERT INTO file_tags(file_id, tag) VALUES ({file_id}, %s)", [(path, t) for t in tags]),
                (f"INSERT INTO file_names(file_id, name) VALUES ({file_id}, %s)", [(path, n) for n in names]),
            ]
            for sql, values in rows:
                if values:
                    cur.executemany(sql, values)

    def _forget(self, path: str) -> None:
        """Delete the file at ``path`` (if indexed) and its rows — its postings first, the rest
        by cascade — after taking its chunks out of the totals."""
        postings.forget(self.pg, path)
        self.pg.execute("DELETE FROM files WHERE path = %s", (path,))

    def touch_file(self, file_id: int, *, size: int, mtime_ns: int) -> None:
        with self._write():
            self.pg.execute("UPDATE files SET size = %s, mtime_ns = %s WHERE id = %s", (size, mtime_ns, file_id))

    def record_skip(self, path: str, *, size: int, mtime_ns: int, reason: str, kind: str = "note") -> None:
        with self._write():
            self._forget(path)
            self.pg.execute("DELETE FROM ocr_checkpoints WHERE path = %s", (path,))
            self.pg.execute(
                "INSERT INTO files(path, size, mtime_ns, status, error, indexed_at, kind) "
                "VALUES (%s, %s, %s, 'skipped', %s, %s, %s)",
                (path, size, mtime_ns, reason, utc_now(), kind),
            )

    def delete_file(self, path: str) -> None:
        with self._write():
            self._forget(path)
            self.pg.execute("DELETE FROM ocr_checkpoints WHERE path = %s", (path,))

    def skipped_files(self, *, documents_only: bool = False) -> list[SkippedFile]:
        where = "status = 'skipped'" + (" AND kind != 'note'" if documents_only else "")
        return [
            SkippedFile(path, error or "")
            for path, error in self.pg.execute(f"SELECT path, error FROM files WHERE {where} ORDER BY path")
        ]

    def document_counts(self) -> dict[str, int]:
        return {
            kind: int(n)
            for kind, n in self.pg.execute(
                "SELECT kind, count(*) FROM files WHERE status = 'indexed' AND kind != 'note' GROUP BY kind ORDER BY kind"
            )
        }

    def ocr_totals(self) -> tuple[int, int, int]:
        row = self.pg.execute(
            "SELECT coalesce(sum(ocr_pages), 0), coalesce(sum(ocr_pending), 0), coalesce(sum(ocr_over_limit), 0) "
            "FROM files WHERE status = 'indexed'"
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1]), int(row[2])

    # -- OCR checkpoints ----------------------------------------------------------------
    def ocr_checkpoints(self, path: str, content_hash: str) -> dict[int, str]:
        with self._write():
            self.pg.execute(
                "DELETE FROM ocr_checkpoints WHERE path = %s AND content_hash != %s", (path, content_hash)
            )
        return {
            int(page): text
            for page, text in self.pg.execute(
                "SELECT page, text FROM ocr_checkpoints WHERE path = %s AND content_hash = %s", (path, content_hash)
            )
        }

    def save_ocr_checkpoint(self, path: str, content_hash: str, page: int, text: str) -> None:
        with self._write():
            self.pg.execute(
                "INSERT INTO ocr_checkpoints(path, content_hash, page, text) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (path, content_hash, page) DO UPDATE SET text = excluded.text",
                (path, content_hash, page, text),
            )

    def prune_ocr_checkpoints(self, keep: set[str], *, among: Collection[str] | None = None) -> None:
        gone = [
            row[0]
            for row in self.pg.execute("SELECT DISTINCT path FROM ocr_checkpoints").fetchall()
            if row[0] not in keep and (among is None or row[0] in among)
        ]
        if gone:
            with self._write():
                self.pg.execute("DELETE FROM ocr_checkpoints WHERE path = ANY(%s)", (gone,))

    # -- vectors ------------------------------------------------------------------------
    def vectors_by_hash(self, hashes: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        with self.pg.cursor(binary=True) as cur:
            cur.execute(
                "SELECT DISTINCT ON (embed_hash) embed_hash, embedding FROM chunks WHERE embed_hash = ANY(%s)",
                (wanted,),
            )
            rows = cur.fetchall()
        if not rows:
            return {}
        matrix = _unit_rows(_decode_halfvecs([blob for _h, blob in rows]))
        return {bytes(digest): matrix[i] for i, (digest, _b) in enumerate(rows)}

    def load_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """All chunk ids in id order and their vectors as int8 codes (what
        :class:`~vaultseek.storage.vectors.VectorIndex` keeps)."""
        return self._ids_and_codes("SELECT id, embedding FROM chunks ORDER BY id")

    def vector_paths(self) -> list[tuple[int, str]]:
        return [
            (int(cid), path)
            for cid, path in self.pg.execute("SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id")
        ]

    def iter_chunks(self, batch: int = 2048) -> Iterator[list[tuple[int, str, str]]]:
        last = 0
        while True:
            rows = self.pg.execute(
                "SELECT id, heading_context, text FROM chunks WHERE id > %s ORDER BY id LIMIT %s", (last, batch)
            ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [(int(cid), ctx, text) for cid, ctx, text in rows]

    def replace_vectors(self, items: Sequence[tuple[int, np.ndarray]]) -> None:
        with self._write(), self.pg.cursor() as cur:
            cur.executemany(
                "UPDATE chunks SET embedding = %s::halfvec WHERE id = %s",
                [(_vector_text(vec), cid) for cid, vec in items],
            )

    def _ids_and_codes(self, sql: str) -> tuple[np.ndarray, np.ndarray]:
        with self.pg.cursor(binary=True) as cur:
            cur.execute(sql)
            rows = cur.fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int8)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        codes, _scales = quantize(_decode_halfvecs([r[1] for r in rows]))
        return ids, codes

    # -- deep vectors -------------------------------------------------------------------
    # Two generations, as in the SQLite store: ``deep_vectors`` serves, ``deep_vectors_next``
    # is filled after a change of model and promoted once it covers every chunk.
    def deep_progress(self, *, building: bool = False) -> tuple[int, int]:
        done = self._one(
            f"SELECT count(*) FROM chunks c WHERE EXISTS (SELECT 1 FROM {deep_table(building)} d "
            "WHERE d.embed_hash = c.embed_hash)"
        )
        return int(done), self.chunk_count()

    def deep_opening_progress(self, *, building: bool = False) -> tuple[int, int]:
        total, done = self.pg.execute(
            "SELECT count(*), count(d.embed_hash) FROM chunks c "
            f"LEFT JOIN {deep_table(building)} d ON d.embed_hash = c.embed_hash WHERE c.position = 0"
        ).fetchone()
        return int(done), int(total)

    def deep_pending(self, limit: int, *, building: bool = False) -> list[tuple[bytes, str, str]]:
        out: dict[bytes, tuple[bytes, str, str]] = {}
        for which in ("c.position = 0", "c.position > 0"):
            rows = self.pg.execute(
                "SELECT c.embed_hash, c.heading_context, c.text FROM files f "
                f"JOIN chunks c ON c.file_id = f.id AND {which} "
                f"WHERE NOT EXISTS (SELECT 1 FROM {deep_table(building)} d WHERE d.embed_hash = c.embed_hash) "
                "ORDER BY f.mtime_ns DESC, f.id DESC, c.position LIMIT %s",
                (limit * 4,),
            ).fetchall()
            for digest, context, text in rows:
                out.setdefault(bytes(digest), (bytes(digest), context, text))
                if len(out) >= limit:
                    return list(out.values())
        return list(out.values())

    def deep_pending_texts(self, cap: int, window: int, *, building: bool = False) -> PendingTexts:
        row = self.pg.execute(
            "SELECT count(*), coalesce(sum(n), 0), coalesce(sum(n * least(n, %(window)s)), 0), "
            "count(*) FILTER (WHERE opening), coalesce(sum(n) FILTER (WHERE opening), 0), "
            "coalesce(sum(n * least(n, %(window)s)) FILTER (WHERE opening), 0) FROM ("
            "SELECT least(max(length(c.heading_context) + 1 + length(c.text)), %(cap)s)::bigint AS n, "
            "bool_or(c.position = 0) AS opening "
            f"FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM {deep_table(building)} d WHERE d.embed_hash = c.embed_hash) "
            "GROUP BY c.embed_hash) AS pending",
            {"cap": cap, "window": window},
        ).fetchone()
        return PendingTexts(*(int(value) for value in row))

    def save_deep_vectors(self, items: Sequence[tuple[bytes, np.ndarray]], *, building: bool = False) -> None:
        with self._write(), self.pg.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {deep_table(building)}(embed_hash, embedding) VALUES (%s, %s::halfvec) "
                "ON CONFLICT (embed_hash) DO UPDATE SET embedding = excluded.embedding",
                [(digest, _vector_text(vec)) for digest, vec in items],
            )

    def load_deep_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        return self._ids_and_codes(
            "SELECT c.id, d.embedding FROM chunks c JOIN deep_vectors d ON d.embed_hash = c.embed_hash ORDER BY c.id"
        )

    def prune_deep_vectors(self) -> int:
        pruned = 0
        with self._write():
            for table in ("deep_vectors", "deep_vectors_next"):
                cur = self.pg.execute(
                    f"DELETE FROM {table} d WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.embed_hash = d.embed_hash)"
                )
                pruned += int(cur.rowcount)
        return pruned

    def reset_deep_vectors(self, fingerprint: str, name: str, spec: str) -> None:
        with self._write():
            self.pg.execute("DELETE FROM deep_vectors")
            self.pg.execute("DELETE FROM deep_vectors_next")
            self.pg.execute("DELETE FROM meta WHERE key IN ('deep_next_fingerprint', 'deep_next_name', 'deep_next_spec')")
            self.set_meta({"deep_model_fingerprint": fingerprint, "deep_model_name": name, "deep_model_spec": spec})

    def start_deep_generation(self, fingerprint: str, name: str, spec: str) -> None:
        with self._write():
            self.pg.execute("DELETE FROM deep_vectors_next")
            self.set_meta({"deep_next_fingerprint": fingerprint, "deep_next_name": name, "deep_next_spec": spec})

    def promote_deep_vectors(self) -> None:
        with self._write():
            self.pg.execute("DELETE FROM deep_vectors")
            self.pg.execute("INSERT INTO deep_vectors(embed_hash, embedding) SELECT embed_hash, embedding FROM deep_vectors_next")
            self.pg.execute("DELETE FROM deep_vectors_next")
            self.pg.execute(
                "INSERT INTO meta(key, value) SELECT 'deep_model_' || substr(key, 11), value FROM meta "
                "WHERE key IN ('deep_next_fingerprint', 'deep_next_name', 'deep_next_spec') "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            )
            self.pg.execute("DELETE FROM meta WHERE key IN ('deep_next_fingerprint', 'deep_next_name', 'deep_next_spec')")

    def drop_deep_vectors(self, chunk_ids: Sequence[int]) -> None:
        with self._write():
            for table in ("deep_vectors", "deep_vectors_next"):
                self.pg.execute(
                    f"DELETE FROM {table} WHERE embed_hash IN (SELECT embed_hash FROM chunks WHERE id = ANY(%s))",
                    ([int(i) for i in chunk_ids],),
                )

    # -- search -------------------------------------------------------------------------
    def bm25(
        self, fts_query: str, limit: int, scope: SearchFilter | None = None, *, excluding: str | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score) best first, scored as FTS5 scores them (same terms, same
        column weights, same formula) from the postings of the query's terms
        (``postings.bm25``); ties broken by id. ``scope`` and ``excluding`` (the notes with a
        chunk that matches it) restrict the rows before the limit."""
        excluded = [] if excluding is None else self.note_chunks_matching(excluding)[0].tolist()
        return postings.bm25(self.pg, fulltext.parse(fts_query), limit, scope, self._term_frequencies, excluded)

    def chunks_matching(self, fts_query: str, limit: int = -1) -> np.ndarray:
        return np.asarray(postings.matching(self.pg, fulltext.parse(fts_query), limit), dtype=np.int64)

    def note_chunks_matching(self, fts_query: str) -> tuple[np.ndarray, int]:
        """As SQLite's; kept for the expression until any writer commits (a search asks for
        the set for its vector lists and again for BM25)."""
        as_of = (fts_query, self.data_version())
        if self._note_chunks[0] != as_of:
            ids, notes = postings.note_chunks(self.pg, fulltext.parse(fts_query))
            self._note_chunks = (as_of, np.asarray(ids, dtype=np.int64), notes)
        return self._note_chunks[1], self._note_chunks[2]

    def file_ids_in(self, scope: SearchFilter) -> np.ndarray:
        where, params = scope_where(scope, per_row=False, dialect="postgresql")
        ids = self._one(f"SELECT coalesce(array_agg(f.id ORDER BY f.id), '{{}}') FROM files f WHERE {where}", params)
        return np.asarray(ids, dtype=np.int64)

    def file_ids_of(self, chunk_ids: np.ndarray) -> np.ndarray:
        rows = self.pg.execute("SELECT id, file_id FROM chunks ORDER BY id").fetchall()
        if not rows or not len(chunk_ids):
            return np.zeros(len(chunk_ids), dtype=np.int64)
        known = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        owners = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        at = np.minimum(np.searchsorted(known, chunk_ids), len(known) - 1)
        return np.where(known[at] == chunk_ids, owners[at], 0)

    def scope_mask(self, scope: SearchFilter) -> ScopeMask:
        """The chunks inside ``scope``, read each time: a search here tests its scope in the
        database, so nothing asks for this on every search."""
        rows = self.pg.execute("SELECT id, file_id FROM chunks ORDER BY id").fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        owners = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        return ScopeMask.build(0, self.file_ids_in(scope), ids, owners)

    def files_inside(self, file_ids: Sequence[int], scope: SearchFilter) -> set[int]:
        where, params = scope_where(scope, dialect="postgresql")
        return {
            int(row[0])
            for row in self.pg.execute(
                f"SELECT f.id FROM files f WHERE f.id = ANY(%s) AND {where}", ([int(i) for i in file_ids], *params)
            )
        }

    def files_named(self, name: str, scope: SearchFilter | None = None) -> list[int]:
        where, params = ("true", ()) if scope is None or scope.unrestricted else scope_where(scope, dialect="postgresql")
        return [
            int(row[0])
            for row in self.pg.execute(
                "SELECT DISTINCT f.id FROM file_names n JOIN files f ON f.id = n.file_id "
                f"WHERE n.name = %s AND {where} ORDER BY f.id",
                (name, *params),
            )
        ]

    def chunk_files(self, ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        return {
            int(cid): (int(file_id), int(mtime_ns))
            for cid, file_id, mtime_ns in self.pg.execute(
                "SELECT c.id, f.id, f.mtime_ns FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ANY(%s)",
                ([int(i) for i in ids],),
            )
        }

    def first_chunks(self, file_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        if not file_ids:
            return {}
        return {
            int(file_id): (int(cid), int(mtime_ns))
            for file_id, cid, mtime_ns in self.pg.execute(
                "SELECT f.id, c.id, f.mtime_ns FROM files f CROSS JOIN LATERAL "
                "(SELECT id FROM chunks WHERE file_id = f.id ORDER BY position LIMIT 1) c WHERE f.id = ANY(%s)",
                ([int(i) for i in file_ids],),
            )
        }

    def file_rows(self) -> list[dict[str, object]]:
        return [
            {
                "path": path, "kind": kind, "status": status, "size": size, "chunks": chunks,
                "title": title, "tags": json.loads(tags or "[]"), "error": error, "indexed_at": indexed_at,
            }
            for path, kind, status, size, chunks, title, tags, error, indexed_at in self.pg.execute(
                "SELECT f.path, f.kind, f.status, f.size, (SELECT count(*) FROM chunks c WHERE c.file_id = f.id), "
                "f.title, f.tags, f.error, f.indexed_at FROM files f ORDER BY f.path"
            )
        ]  # fmt: skip

    def note_facts(self) -> list[tuple[str, str | None, list[str], int]]:
        return [
            (path, title, json.loads(tags or "[]"), int(mtime_ns or 0))
            for path, title, tags, mtime_ns in self.pg.execute("SELECT path, title, tags, mtime_ns FROM files")
        ]

    def document_frequencies(self, texts: Sequence[str]) -> list[int]:
        """For each text, how many chunks contain its rarest index term (0 if it has none)."""
        term_sets = [set(fts5_tokens(text, query=True)) for text in texts]
        counts = self._term_frequencies(set().union(*term_sets))
        return [min((counts[term] for term in terms), default=0) for terms in term_sets]

    def word_frequencies(self, words: Sequence[str]) -> list[int]:
        if not words:
            return []
        terms = fts5_tokens(" ".join(words), query=True)
        if len(terms) != len(words):
            return self.document_frequencies(words)
        counts = self._term_frequencies(set(terms))
        return [counts[term] for term in terms]

    def _term_frequencies(self, terms: Collection[str]) -> dict[str, int]:
        """How many chunks hold each term, cached until any writer commits."""
        as_of = self.data_version()
        if as_of != self._pg_frequencies_as_of or len(self._frequencies) > FREQUENCY_CACHE_LIMIT:
            self._frequencies.clear()
            self._pg_frequencies_as_of = as_of
        known = self._frequencies
        missing = [term for term in terms if term not in known]
        if missing:
            known.update(dict.fromkeys(missing, 0))
            known.update(
                (term, max(int(df), 0))
                for term, df in self.pg.execute("SELECT term, df FROM terms_df WHERE term = ANY(%s)", (missing,))
            )
        return {term: known[term] for term in terms}

    def terms_starting(self, prefix: str, limit: int = -1) -> list[tuple[str, int]]:
        return [
            (term, int(df))
            for term, df in self.pg.execute(
                "SELECT term, df FROM terms_df WHERE term >= %s AND term < %s AND df > 0 ORDER BY term LIMIT %s",
                (prefix, prefix + "\U0010ffff", None if limit < 0 else limit),
            )
        ]

    def index_terms(self, text: str) -> list[str]:
        return fts5_tokens(text, query=True)

    def chunk_count(self) -> int:
        return int(self._one("SELECT chunks FROM stats"))

    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        return {
            int(cid): ChunkRow(int(cid), path, pos, section, ctx, text, _location(location))
            for cid, path, pos, section, ctx, text, location in self.pg.execute(
                "SELECT c.id, f.path, c.position, c.section, c.heading_context, c.text, c.location "
                "FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ANY(%s)",
                ([int(i) for i in ids],),
            )
        }

    def chunks_of_file(self, path: str) -> list[ChunkRow]:
        return [
            ChunkRow(int(cid), path, pos, section, ctx, text, _location(location))
            for cid, pos, section, ctx, text, location in self.pg.execute(
                "SELECT c.id, c.position, c.section, c.heading_context, c.text, c.location "
                "FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = %s ORDER BY c.position",
                (path,),
            )
        ]

    # -- links --------------------------------------------------------------------------
    def link_changes(self) -> tuple[int, list[str]]:
        rows = self.pg.execute("SELECT id, path FROM link_changes ORDER BY id").fetchall()
        return (int(rows[-1][0]) if rows else 0), list(dict.fromkeys(path for _i, path in rows))

    def link_rows(self, *, pending: bool = False, keys: Sequence[str] = ()) -> list[LinkRow]:
        if pending:
            return [_link(row) for row in self.pg.execute(f"{_LINK_SELECT} WHERE l.via IS NULL")]
        if not keys:
            return [_link(row) for row in self.pg.execute(_LINK_SELECT)]
        return [_link(row) for row in self.pg.execute(f"{_LINK_SELECT} WHERE l.key = ANY(%s)", (sorted(set(keys)),))]

    def link_targets(self, paths: Sequence[str] | None = None) -> dict[str, list[str]]:
        sql = "SELECT path, aliases FROM files WHERE status = 'indexed'"
        rows = self.pg.execute(sql) if paths is None else self.pg.execute(f"{sql} AND path = ANY(%s)", (list(paths),))
        return {path: json.loads(aliases) if aliases and aliases != "[]" else [] for path, aliases in rows}

    def link_names(self, keys: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        if keys is None:
            return [tuple(r) for r in self.pg.execute("SELECT key, path, alias FROM link_names")]
        return [
            tuple(r)
            for r in self.pg.execute("SELECT key, path, alias FROM link_names WHERE key = ANY(%s)", (sorted(set(keys)),))
        ]

    def link_names_of(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        return [
            tuple(r)
            for r in self.pg.execute("SELECT key, path, alias FROM link_names WHERE path = ANY(%s)", (list(paths),))
        ]

    def replace_link_names(self, paths: Sequence[str] | None, rows: Iterable[tuple[str, str, str]]) -> None:
        with self._write(), self.pg.cursor() as cur:
            if paths is None:
                cur.execute("DELETE FROM link_names")
            else:
                cur.execute("DELETE FROM link_names WHERE path = ANY(%s)", (list(paths),))
            cur.executemany(
                "INSERT INTO link_names(key, path, alias) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", list(rows)
            )

    def save_link_resolutions(self, rows: Sequence[tuple[str, str | None, str, int]], *, through: int) -> None:
        with self._write(), self.pg.cursor() as cur:
            cur.executemany("UPDATE links SET key = %s, resolved = %s, via = %s WHERE id = %s", list(rows))
            cur.execute("DELETE FROM link_changes WHERE id <= %s", (through,))

    def links_pending(self) -> bool:
        return bool(self._one(
            "SELECT EXISTS (SELECT 1 FROM links WHERE via IS NULL) OR EXISTS (SELECT 1 FROM link_changes)"
        ))  # fmt: skip

    def links_from(self, path: str) -> list[LinkRow]:
        return [_link(row) for row in self.pg.execute(f"{_LINK_SELECT} WHERE f.path = %s ORDER BY l.id", (path,))]

    def links_out(self, paths: Sequence[str]) -> list[LinkRow]:
        return [
            _link(row)
            for row in self.pg.execute(
                f"{_LINK_SELECT} WHERE f.path = ANY(%s) AND l.resolved IS NOT NULL AND l.resolved != f.path "
                "ORDER BY l.id",
                (sorted(set(paths)),),
            )
        ]

    def links_to(self, path: str) -> list[LinkRow]:
        return [
            _link(row)
            for row in self.pg.execute(
                f"{_LINK_SELECT} WHERE l.resolved = %s AND f.path != %s ORDER BY f.path, l.id", (path, path)
            )
        ]

    def link_count(self) -> int:
        return int(self._one("SELECT count(*) FROM links WHERE resolved IS NOT NULL"))

    def link_edges(self) -> list[tuple[str, str]]:
        return [
            (a, b)
            for a, b in self.pg.execute(
                "SELECT DISTINCT f.path, l.resolved FROM links l JOIN files f ON f.id = l.file_id "
                "WHERE l.resolved IS NOT NULL AND l.resolved != f.path"
            )
        ]

    def indexed_path(self, path: str) -> str | None:
        found = self._one("SELECT path FROM files WHERE path = %s AND status = 'indexed'", (path,))
        return None if found is None else str(found)

    def titles(self, paths: Sequence[str]) -> dict[str, str | None]:
        rows = self.pg.execute("SELECT path, title FROM files WHERE path = ANY(%s)", (list(dict.fromkeys(paths)),))
        return dict(rows.fetchall())

    def chunk_ids_of_files(self, paths: Sequence[str]) -> np.ndarray:
        ids = self._one(
            "SELECT coalesce(array_agg(c.id ORDER BY c.id), '{}') FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ANY(%s)",
            (list(paths),),
        )
        return np.asarray(ids, dtype=np.int64)

    def chunk_paths(self, ids: Sequence[int]) -> dict[int, str]:
        return {
            int(cid): path
            for cid, path in self.pg.execute(
                "SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ANY(%s)",
                ([int(i) for i in ids],),
            )
        }

    def openings(self, ids: Sequence[int]) -> dict[int, int]:
        return {
            int(cid): int(opening)
            for cid, opening in self.pg.execute(
                "SELECT c.id, o.id FROM chunks c JOIN chunks o ON o.file_id = c.file_id AND o.position = 0 "
                "WHERE c.id = ANY(%s) AND c.position > 0",
                ([int(i) for i in ids],),
            )
        }

    def located(self, ids: Sequence[int]) -> set[int]:
        return {
            int(cid)
            for (cid,) in self.pg.execute(
                "SELECT id FROM chunks WHERE id = ANY(%s) AND location IS NOT NULL", ([int(i) for i in ids],)
            )
        }

    # -- the study app's knowledge base -------------------------------------------------
    def file_listing(self) -> list[tuple[str, str, str, int, int, str | None, str | None, str, int, int, int, str | None]]:
        return [
            tuple(row)
            for row in self.pg.execute(
                "SELECT f.path, f.kind, f.status, f.size, (SELECT count(*) FROM chunks c WHERE c.file_id = f.id)::int, "
                "f.title, f.error, f.indexed_at, f.ocr_pending, f.ocr_over_limit, f.ocr_limit, f.content_hash FROM files f"
            )
        ]

    def file_listing_version(self) -> tuple[int, int, int, int, str, int]:
        """Changes whenever :meth:`file_listing` would: any write to the collection."""
        version = self.data_version()
        return version, 0, 0, 0, "", 0

    def paths_with_hash(self, content_hash: str) -> list[str]:
        return [
            row[0]
            for row in self.pg.execute(
                "SELECT path FROM files WHERE content_hash = %s AND status = 'indexed' ORDER BY path", (content_hash,)
            )
        ]

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


def _vector_text(vector: np.ndarray) -> str:
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


def _decode_halfvecs(blobs: Sequence[bytes]) -> np.ndarray:
    """pgvector's binary ``halfvec`` (int16 dimension, int16 unused, big-endian float16s) →
    float32 rows; all of one dimension."""
    dim = int.from_bytes(blobs[0][:2], "big")
    raw = np.frombuffer(b"".join(bytes(b)[4:] for b in blobs), dtype=">f2")
    return raw.reshape(len(blobs), dim).astype(np.float32)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def _location_json(draft: Any) -> str | None:
    if draft.location is None:
        return None
    return json.dumps(draft.location.to_dict(), ensure_ascii=False, separators=(",", ":"))


def _location(stored: str | None) -> Location | None:
    return Location.from_dict(json.loads(stored)) if stored else None


def _link(row: Sequence[Any]) -> LinkRow:
    return LinkRow(int(row[0]), row[1], row[2], row[3], row[4], bool(row[5]), row[6], row[7], row[8])
