"""All SQL vaultseek runs, behind methods named for what they mean.

Nothing above this module writes SQL (the condition a search filter becomes is built beside
it, in ``scope``). Every write that changes a file's rows happens in one
transaction (``with self.conn``), so a crash or ``kill -9`` leaves either the old rows or the
new ones, never a mix, and the FTS and vector stores always agree with ``chunks``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np

from ..records import ChunkDraft, Link, LinkVia, Location, Note, SearchFilter, SkippedFile
from .db import FTS5_TOKENIZE_QUERY, Connection, FTS5Tokenizer
from .migrations import FTS_TOKENIZER
from .scope import scope_where
from .vectors import quantize

BM25_WEIGHTS = (1.0, 0.5, 0.3)
REEMBEDDING = "reembedding:"
"""Stored in place of the model fingerprint while a model change is half done, so nothing
trusts a table that mixes two models' vectors, and the next run starts the re-embed over."""
"""FTS5 column weights for chunk text, section heading and heading context."""
_SCALE_BYTES = 4
"""Vectors are stored as int8 with one float32 scale each (``max|v| / 127``): a quarter of
float32's bytes. On unit vectors the rounding error in a cosine is below 0.005, far under
the gaps that decide a top-30 (the 50k-chunk index shrinks by ~19 MB)."""
FREQUENCY_CACHE_LIMIT = 100_000
"""Term counts a store keeps between searches (see ``Store._term_frequencies``): a few MB."""


SCOPES_KEPT = 8
"""Scopes whose chunk masks a store keeps (:meth:`Store.scope_mask`): 50 KB each at 50k chunks."""


@dataclass(frozen=True, slots=True)
class ScopeMask:
    """The chunks inside a search's scope (:meth:`Store.scope_mask`)."""

    key: int
    """What ``vaultseek_in_scope`` knows the mask by."""
    files: np.ndarray
    """The ids of the files inside the scope, ascending."""
    chunks: np.ndarray
    """By chunk id: True for a chunk inside the scope (ids past its end are not)."""

    @classmethod
    def build(cls, key: int, files: np.ndarray, ids: np.ndarray, owners: np.ndarray) -> ScopeMask:
        """The mask of the scope whose files are ``files`` (ascending), from every chunk's id
        (ascending) and its file's id."""
        size = max(int(owners.max()) if len(owners) else 0, int(files[-1]) if len(files) else 0) + 1
        inside = np.zeros(size, dtype=bool)
        inside[files] = True
        chunks = np.zeros(int(ids[-1]) + 1 if len(ids) else 1, dtype=bool)
        chunks[ids[inside[owners]]] = True
        return cls(key, files, chunks)

    def inside(self, ids: np.ndarray) -> np.ndarray:
        """For each of ``ids`` (chunk ids), whether it is inside the scope."""
        known = (ids >= 0) & (ids < len(self.chunks))
        return known & self.chunks[np.where(known, ids, 0)]


@dataclass(frozen=True, slots=True)
class FileState:
    """What the index knows of a file, to decide whether it changed."""

    id: int
    size: int
    mtime_ns: int
    content_hash: str | None
    status: str
    error: str | None
    kind: str = "note"
    """``note`` or the document type (``pdf``, ``docx``, …)."""
    ocr_pending: int = 0
    """Pages that still need OCR: the file is re-processed until this is 0."""
    indexed_at: str | None = None
    """When the file was last written (ISO 8601, UTC)."""
    ocr_over_limit: int = 0
    """Pages left without OCR by ``ocr_max_pages_per_document``."""
    ocr_limit: int = 0
    """That limit as it was then (0 when no page went past it)."""


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str
    position: int
    section: str
    heading_context: str
    text: str
    location: Location | None = None


@dataclass(frozen=True, slots=True)
class PendingTexts:
    """What the deep job has left, by distinct text (as :meth:`Store.deep_pending` hands
    them out), in all and of the openings among them (which go first): how many texts, the
    characters ``n`` the model will read of them (Σ n) and Σ n·min(n, window), the part of
    the work that grows with a text's length within one window of the model (attention)."""

    texts: int = 0
    chars: int = 0
    squares: int = 0
    opening_texts: int = 0
    opening_chars: int = 0
    opening_squares: int = 0


@dataclass(frozen=True, slots=True)
class LinkRow:
    """A stored link: the file that makes it, the target as written, and where it resolves
    (``resolved`` None when dangling; ``via`` None while not resolved yet)."""

    rowid: int
    source: str
    target: str
    heading: str | None
    alias: str | None
    embed: bool
    syntax: str
    resolved: str | None
    via: LinkVia | None


@dataclass(frozen=True, slots=True)
class PreparedChunk:
    """A chunk ready to store: its draft, the hash of what was embedded, the vector, and the
    (text, section, heading context) the full-text index receives."""

    draft: ChunkDraft
    embed_hash: bytes
    vector: np.ndarray
    searched: tuple[str, str, str]


def utc_now() -> str:
    """The timestamp format every stored time uses."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
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

    # -- meta ---------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        return self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).get

    def delete_meta(self, key: str) -> None:
        with self.conn:
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def set_meta(self, values: dict[str, str]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                list(values.items()),
            )

    def data_version(self) -> int:
        """Changes whenever another connection commits: the cue to reload cached vectors."""
        return int(self.conn.execute("PRAGMA data_version").get)

    # -- files --------------------------------------------------------------------------
    def file_states(self, paths: Sequence[str] | None = None) -> dict[str, FileState]:
        """What the index knows of every file, or of just ``paths`` (those it knows)."""
        select = ("SELECT id, path, size, mtime_ns, content_hash, status, error, kind, ocr_pending, indexed_at, "
                  "ocr_over_limit, ocr_limit FROM files")  # fmt: skip
        rows = list(self.conn.execute(select)) if paths is None else []
        for batch in _batches(paths or ()):
            rows += self.conn.execute(f"{select} WHERE path IN ({_marks(batch)})", batch)
        return {row[1]: FileState(row[0], *row[2:]) for row in rows}

    def max_file_id(self) -> int:
        """The highest file row id (0 for none): a file written later gets a higher one."""
        highest = self.conn.execute("SELECT coalesce(max(id), 0) FROM files").fetchall()[0][0]
        return highest if isinstance(highest, int) else 0

    def folders(self) -> set[str]:
        """Every folder that holds an indexed file (vault-relative, parents included)."""
        found: set[str] = set()
        for (path,) in self.conn.execute("SELECT path FROM files WHERE status = 'indexed'"):
            parts = path.split("/")[:-1]
            found.update("/".join(parts[:end]) for end in range(1, len(parts) + 1))
        return found

    def tag_names(self) -> list[str]:
        """Every tag key an indexed file has (parents of nested tags included)."""
        return [row[0] for row in self.conn.execute("SELECT DISTINCT tag FROM file_tags ORDER BY tag")]

    def has_tag(self, tag: str) -> bool:
        return bool(self.conn.execute("SELECT 1 FROM file_tags WHERE tag = ? LIMIT 1", (tag,)).fetchall())

    def has_kind(self, kind: str) -> bool:
        query = "SELECT 1 FROM files WHERE kind = ? AND status = 'indexed' LIMIT 1"
        return bool(self.conn.execute(query, (kind,)).fetchall())

    def has_files_under(self, folder: str) -> bool:
        """Whether the index holds any file inside the vault-relative ``folder``."""
        low = folder.rstrip("/") + "/"
        high = low[:-1] + chr(ord("/") + 1)  # every path starting with "folder/" sorts in [low, high)
        query = "SELECT 1 FROM files WHERE path >= ? AND path < ? LIMIT 1"
        return bool(self.conn.execute(query, (low, high)).fetchall())

    def total_changes(self) -> int:
        """Rows this connection has written since it opened: equal before and after a step
        means the step wrote nothing (and committed nothing readers would reload for). The
        rows of its own temporary tables (:meth:`_exclude`) are not counted."""
        return int(self.conn.total_changes()) - self._temp_changes

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction around many :meth:`replace_file` calls: all of them or none.

        Indexing committed every file on its own, and each commit (or savepoint) costs about
        half a millisecond whatever the file's size: FTS5 flushes its pending terms into a
        new segment, and every table the file touched writes its pages to the WAL. Batching
        the indexer's ~64 files took the benchmark vault's full index from ~31 s to ~24 s. A
        crash loses at most the open batch, which the next run indexes again."""
        with self.conn:
            yield

    def _atomic(self) -> contextlib.AbstractContextManager[object]:
        """The connection as a transaction — or nothing when a :meth:`batch` (or any caller's
        transaction) is already open: a nested savepoint would flush FTS5 all the same."""
        return contextlib.nullcontext() if self.conn.in_transaction else self.conn

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
        """Store a file's new rows in place of its old ones, atomically (its OCR checkpoints
        go in the same transaction: from now on the chunks hold that text). ``fields`` are its
        normalised frontmatter (key, value) rows, ``tags`` its tag keys (parents included),
        ``names`` its normalised title, aliases and file name (the callers normalise: the store
        keeps what it is given). Inside :meth:`batch` it is part of the batch's transaction."""
        with self._atomic():
            self.conn.execute("DELETE FROM files WHERE path = ?", (path,))
            self.conn.execute("DELETE FROM ocr_checkpoints WHERE path = ?", (path,))
            self.conn.execute(
                "INSERT INTO files(path, size, mtime_ns, content_hash, status, title, type, "
                "tags, aliases, indexed_at, kind, ocr_pages, ocr_pending, ocr_over_limit, ocr_limit) "
                "VALUES (?, ?, ?, ?, 'indexed', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    path,
                    size,
                    mtime_ns,
                    content_hash,
                    note.title,
                    note.type,
                    json.dumps(list(note.tags), ensure_ascii=False),
                    json.dumps(list(note.aliases), ensure_ascii=False),
                    utc_now(),
                    kind,
                    ocr_pages,
                    ocr_pending,
                    ocr_over_limit,
                    ocr_limit,
                ),
            )
            file_id = self.conn.last_insert_rowid()
            for chunk in chunks:
                d = chunk.draft
                location = (
                    json.dumps(d.location.to_dict(), ensure_ascii=False, separators=(",", ":"))
                    if d.location is not None
                    else None
                )
                self.conn.execute(
                    "INSERT INTO chunks(file_id, position, section, heading_context, text, "
                    "embed_hash, location) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (file_id, d.position, d.section, d.heading_context, d.text, chunk.embed_hash, location),
                )
                chunk_id = self.conn.last_insert_rowid()
                self.conn.execute(
                    "INSERT INTO chunks_fts(rowid, text, section, heading_context) "
                    "VALUES (?, ?, ?, ?)",
                    (chunk_id, *chunk.searched),
                )
                self.conn.execute(
                    "INSERT INTO vectors(chunk_id, vector) VALUES (?, ?)",
                    (chunk_id, _vector_blob(chunk.vector)),
                )
            self._insert_links(file_id, note.links)
            self.conn.executemany(
                "INSERT INTO frontmatter_fields(file_id, key, value) VALUES (?, ?, ?)",
                [(file_id, key, value) for key, value in fields],
            )
            self.conn.executemany(
                "INSERT INTO file_tags(file_id, tag) VALUES (?, ?)", [(file_id, tag) for tag in tags]
            )
            self.conn.executemany(
                "INSERT INTO file_names(file_id, name) VALUES (?, ?)", [(file_id, name) for name in names]
            )

    def _insert_links(self, file_id: int, links: Iterable[Link]) -> None:
        self.conn.executemany(
            "INSERT INTO links(file_id, target, heading, alias, embed, syntax) VALUES (?, ?, ?, ?, ?, ?)",
            [(file_id, ln.target, ln.heading, ln.alias, int(ln.embed), ln.syntax) for ln in links],
        )

    def touch_file(self, file_id: int, *, size: int, mtime_ns: int) -> None:
        """Record new stat data for a file whose content did not change."""
        with self.conn:
            self.conn.execute(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id)
            )

    def record_skip(
        self, path: str, *, size: int, mtime_ns: int, reason: str, kind: str = "note"
    ) -> None:
        """Remember a file that could not be indexed (dropping any rows it had before)."""
        with self.conn:
            self.conn.execute("DELETE FROM files WHERE path = ?", (path,))
            self.conn.execute("DELETE FROM ocr_checkpoints WHERE path = ?", (path,))
            self.conn.execute(
                "INSERT INTO files(path, size, mtime_ns, status, error, indexed_at, kind) "
                "VALUES (?, ?, ?, 'skipped', ?, ?, ?)",
                (path, size, mtime_ns, reason, utc_now(), kind),
            )

    def delete_file(self, path: str) -> None:
        """Remove a file and, by cascade and trigger, its chunks, FTS rows, vectors, links."""
        with self.conn:
            self.conn.execute("DELETE FROM files WHERE path = ?", (path,))
            self.conn.execute("DELETE FROM ocr_checkpoints WHERE path = ?", (path,))

    def skipped_files(self, *, documents_only: bool = False) -> list[SkippedFile]:
        where = "status = 'skipped'" + (" AND kind != 'note'" if documents_only else "")
        return [
            SkippedFile(path, error or "")
            for path, error in self.conn.execute(
                f"SELECT path, error FROM files WHERE {where} ORDER BY path"
            )
        ]

    def document_counts(self) -> dict[str, int]:
        """Indexed documents by kind (notes left out)."""
        return dict(
            self.conn.execute(
                "SELECT kind, count(*) FROM files WHERE status = 'indexed' AND kind != 'note' "
                "GROUP BY kind ORDER BY kind"
            )
        )

    def ocr_totals(self) -> tuple[int, int, int]:
        """(pages whose text came from OCR, pages still waiting for OCR, pages left without
        OCR by the per-document limit) over indexed files."""
        done, pending, over = self.conn.execute(
            "SELECT coalesce(sum(ocr_pages), 0), coalesce(sum(ocr_pending), 0), "
            "coalesce(sum(ocr_over_limit), 0) FROM files WHERE status = 'indexed'"
        ).get
        return int(done), int(pending), int(over)

    # -- OCR checkpoints ----------------------------------------------------------------
    def ocr_checkpoints(self, path: str, content_hash: str) -> dict[int, str]:
        """Page number → OCR text saved by an earlier run for exactly these bytes; stale
        checkpoints (an older version of the file) are deleted."""
        with self.conn:
            self.conn.execute(
                "DELETE FROM ocr_checkpoints WHERE path = ? AND content_hash != ?",
                (path, content_hash),
            )
        return dict(
            self.conn.execute(
                "SELECT page, text FROM ocr_checkpoints WHERE path = ? AND content_hash = ?",
                (path, content_hash),
            )
        )

    def save_ocr_checkpoint(self, path: str, content_hash: str, page: int, text: str) -> None:
        """Commit one OCRed page at once, so a crash after it never repeats its OCR."""
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO ocr_checkpoints(path, content_hash, page, text) "
                "VALUES (?, ?, ?, ?)",
                (path, content_hash, page, text),
            )

    def prune_ocr_checkpoints(self, keep: set[str], *, among: Collection[str] | None = None) -> None:
        """Drop checkpoints of files that are no longer in the vault: every path not in
        ``keep``, or only those of ``among`` that are not (a sync of some paths knows
        nothing about the others)."""
        gone = [
            row[0]
            for row in self.conn.execute("SELECT DISTINCT path FROM ocr_checkpoints")
            if row[0] not in keep and (among is None or row[0] in among)
        ]
        if gone:
            with self.conn:
                self.conn.executemany("DELETE FROM ocr_checkpoints WHERE path = ?", [(p,) for p in gone])

    # -- vectors ------------------------------------------------------------------------
    def vectors_by_hash(self, hashes: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """Stored vectors for any chunk whose embedded text had one of ``hashes``."""
        found: dict[bytes, np.ndarray] = {}
        wanted = list(dict.fromkeys(hashes))
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            for digest, blob in self.conn.execute(
                f"SELECT c.embed_hash, v.vector FROM chunks c JOIN vectors v ON v.chunk_id = c.id "
                f"WHERE c.embed_hash IN ({marks})",
                batch,
            ):
                found[digest] = decode_vectors([blob])[0]
        return found

    def load_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """All chunk ids in id order and their vectors' int8 codes, one row each (as
        :class:`~vaultseek.storage.vectors.VectorIndex` keeps them; the scales are not needed)."""
        return _ids_and_codes(self.conn.execute("SELECT chunk_id, vector FROM vectors ORDER BY chunk_id"))

    def vector_paths(self) -> list[tuple[int, str]]:
        """(chunk id, vault-relative file path) of every chunk with a vector, in chunk-id
        order: the same order as :meth:`load_vectors` (intake groups vectors by folder)."""
        return [
            (int(cid), path)
            for cid, path in self.conn.execute(
                "SELECT v.chunk_id, f.path FROM vectors v JOIN chunks c ON c.id = v.chunk_id "
                "JOIN files f ON f.id = c.file_id ORDER BY v.chunk_id"
            )
        ]

    def iter_chunks(self, batch: int = 2048) -> Iterator[list[tuple[int, str, str]]]:
        """(chunk id, heading context, text) in id order and batches (for re-embedding)."""
        last = 0
        while True:
            rows = list(self.conn.execute(
                "SELECT id, heading_context, text FROM chunks WHERE id > ? ORDER BY id LIMIT ?",
                (last, batch),
            ))
            if not rows:
                return
            last = rows[-1][0]
            yield [(cid, ctx, text) for cid, ctx, text in rows]

    def replace_vectors(self, items: Sequence[tuple[int, np.ndarray]]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT INTO vectors(chunk_id, vector) VALUES (?, ?) "
                "ON CONFLICT(chunk_id) DO UPDATE SET vector = excluded.vector",
                [(cid, _vector_blob(vec)) for cid, vec in items],
            )

    # -- deep vectors -------------------------------------------------------------------
    # Two generations: ``deep_vectors`` serves search (its model in meta ``deep_model_*``);
    # after a change of deep model the job fills ``deep_vectors_next`` (meta ``deep_next_*``)
    # and promotes it once it covers every chunk (``index/deepening.py``). ``building``
    # picks the second table.
    def deep_progress(self, *, building: bool = False) -> tuple[int, int]:
        """(chunks that have a deep vector, all chunks)."""
        done = self.conn.execute(
            "SELECT count(*) FROM chunks c WHERE EXISTS "
            f"(SELECT 1 FROM {deep_table(building)} d WHERE d.embed_hash = c.embed_hash)"
        ).get
        return int(done), self.chunk_count()

    def deep_opening_progress(self, *, building: bool = False) -> tuple[int, int]:
        """(files whose opening chunk has a deep vector, files with chunks): the opening is a
        file's first chunk (``position`` 0), what its title and introduction say."""
        total, done = self.conn.execute(
            "SELECT count(*), count(d.embed_hash) FROM chunks c "
            f"LEFT JOIN {deep_table(building)} d ON d.embed_hash = c.embed_hash WHERE c.position = 0"
        ).get
        return int(done), int(total)

    def deep_pending(self, limit: int, *, building: bool = False) -> list[tuple[bytes, str, str]]:
        """Up to ``limit`` texts still without a deep vector, as (embed hash, heading context,
        text), one per distinct hash. Openings first — every file's first chunk before any
        file's later ones, so each note can be found by meaning early — and within each, the
        most recently modified files first (a note saved a moment ago is next; ties: the file
        indexed last), then a file's chunks in order.

        Both passes walk ``files_by_mtime`` backwards and stop at the limit: no sort, ~0 ms
        while the newest files have work left and ~6 ms for a walk of 17k files that finds
        none (a sort of every pending chunk took ~120 ms at 50k)."""
        out: dict[bytes, tuple[bytes, str, str]] = {}
        for which in ("c.position = 0", "c.position > 0"):
            rows = self.conn.execute(
                "SELECT c.embed_hash, c.heading_context, c.text FROM files f "
                f"CROSS JOIN chunks c ON c.file_id = f.id AND {which} "
                f"WHERE NOT EXISTS (SELECT 1 FROM {deep_table(building)} d WHERE d.embed_hash = c.embed_hash) "
                "ORDER BY f.mtime_ns DESC, f.id DESC, c.position LIMIT ?",
                (limit * 4,),  # a text repeated in several chunks is listed once
            )
            for digest, context, text in rows:
                out.setdefault(digest, (digest, context, text))
                if len(out) >= limit:
                    return list(out.values())
        return list(out.values())

    def deep_pending_texts(self, cap: int, window: int, *, building: bool = False) -> PendingTexts:
        """What the deep job has left (:class:`PendingTexts`): each text counted once, as its
        context line, a newline and its text, of at most ``cap`` characters (what the model
        reads of it). One pass over the chunks without a deep vector (its cost on the cmdlet
        reference: ``python -m benchmarks.deepworker eta``)."""
        row = self.conn.execute(
            "SELECT count(*), total(n), total(n * min(n, ?2)), "
            "total(opening), total(opening * n), total(opening * n * min(n, ?2)) FROM ("
            "SELECT min(max(length(c.heading_context) + 1 + length(c.text)), ?1) AS n, max(c.position = 0) AS opening "
            f"FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM {deep_table(building)} d WHERE d.embed_hash = c.embed_hash) "
            "GROUP BY c.embed_hash)",
            (cap, window),
        ).get
        return PendingTexts(*(int(value) for value in row))

    def save_deep_vectors(self, items: Sequence[tuple[bytes, np.ndarray]], *, building: bool = False) -> None:
        """Store deep vectors by embed hash, in one transaction."""
        with self.conn:
            self.conn.executemany(
                f"INSERT INTO {deep_table(building)}(embed_hash, vector) VALUES (?, ?) "
                "ON CONFLICT(embed_hash) DO UPDATE SET vector = excluded.vector",
                [(digest, _vector_blob(vec)) for digest, vec in items],
            )

    def load_deep_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Like :meth:`load_vectors`, for the chunks that have a deep vector (the serving
        generation)."""
        return _ids_and_codes(self.conn.execute(
            "SELECT c.id, d.vector FROM chunks c JOIN deep_vectors d ON d.embed_hash = c.embed_hash ORDER BY c.id"
        ))

    def prune_deep_vectors(self) -> int:
        """Delete deep vectors no chunk uses any more (both generations); returns how many went."""
        pruned = 0
        with self.conn:
            for table in ("deep_vectors", "deep_vectors_next"):
                self.conn.execute(
                    f"DELETE FROM {table} WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.embed_hash = {table}.embed_hash)"
                )
                pruned += int(self.conn.changes())
        return pruned

    def reset_deep_vectors(self, fingerprint: str, name: str, spec: str) -> None:
        """Drop every deep vector, of both generations, and record the model the next ones
        come from (vectors of two models are never mixed in one table)."""
        with self.conn:
            self.conn.execute("DELETE FROM deep_vectors")
            self.conn.execute("DELETE FROM deep_vectors_next")
            self.conn.execute("DELETE FROM meta WHERE key IN ('deep_next_fingerprint', 'deep_next_name', 'deep_next_spec')")
            self.set_meta({"deep_model_fingerprint": fingerprint, "deep_model_name": name, "deep_model_spec": spec})

    def start_deep_generation(self, fingerprint: str, name: str, spec: str) -> None:
        """Begin a new generation of deep vectors beside the serving one: empty
        ``deep_vectors_next`` and record the model it comes from."""
        with self.conn:
            self.conn.execute("DELETE FROM deep_vectors_next")
            self.set_meta({"deep_next_fingerprint": fingerprint, "deep_next_name": name, "deep_next_spec": spec})

    def promote_deep_vectors(self) -> None:
        """The new generation becomes the one search uses, in one transaction; the old one goes."""
        with self.conn:
            self.conn.execute("DELETE FROM deep_vectors")
            self.conn.execute("INSERT INTO deep_vectors(embed_hash, vector) SELECT embed_hash, vector FROM deep_vectors_next")
            self.conn.execute("DELETE FROM deep_vectors_next")
            for key in ("fingerprint", "name", "spec"):
                self.conn.execute(
                    "UPDATE meta SET value = (SELECT value FROM meta WHERE key = ?) WHERE key = ?",
                    (f"deep_next_{key}", f"deep_model_{key}"),
                )
                self.conn.execute(
                    "INSERT OR IGNORE INTO meta(key, value) SELECT ?, value FROM meta WHERE key = ?",
                    (f"deep_model_{key}", f"deep_next_{key}"),
                )
            self.conn.execute("DELETE FROM meta WHERE key IN ('deep_next_fingerprint', 'deep_next_name', 'deep_next_spec')")

    def drop_deep_vectors(self, chunk_ids: Sequence[int]) -> None:
        """Delete the deep vectors of these chunks' texts (every chunk with the same text
        loses its vector too, in both generations): they wait for the deep job again."""
        with self.conn:
            for table in ("deep_vectors", "deep_vectors_next"):
                self.conn.executemany(
                    f"DELETE FROM {table} WHERE embed_hash = (SELECT embed_hash FROM chunks WHERE id = ?)",
                    [(int(i),) for i in chunk_ids],
                )

    # -- search -------------------------------------------------------------------------
    def bm25(
        self, fts_query: str, limit: int, scope: SearchFilter | None = None, *, excluding: str | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score) best first, by FTS5 BM25 with column weights text 1.0,
        section 0.5, heading context 0.3; higher is better (FTS5's own sign is flipped);
        ties broken by id so the order is stable. ``scope`` restricts the rows before the
        limit, so every hit is inside it, and so does ``excluding``, an FTS5 expression: no
        hit comes from a file with a chunk that matches it (:meth:`note_chunks_matching`).

        A scoped query joins each full-text match to its chunk and file (``CROSS JOIN`` keeps
        the full-text index the outer loop): the scope costs a lookup per match, whatever
        its size. (``rowid IN (chunks in scope)`` was measured at seconds on 50k chunks: FTS5
        ran the match once per listed rowid. ``rowid NOT IN`` a table keyed by chunk id is no
        constraint FTS5 can use, so it is one lookup per match: nothing measurable.)"""
        params: tuple[object, ...]
        without = ""
        if excluding is not None:
            self._exclude(excluding)
            without = " AND chunks_fts.rowid NOT IN temp.excluded_chunks"
        if scope is None or scope.unrestricted:
            sql, params = (
                "SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS score FROM chunks_fts "
                f"WHERE chunks_fts MATCH ?{without} ORDER BY score, rowid LIMIT ?"
            ), (*BM25_WEIGHTS, fts_query, limit)
        else:
            mask = self.scope_mask(scope)
            self._scope_function()
            sql, params = (
                "SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS score FROM chunks_fts "
                f"WHERE chunks_fts MATCH ?{without} AND vaultseek_in_scope(?, rowid) ORDER BY score, rowid LIMIT ?"
            ), (*BM25_WEIGHTS, fts_query, mask.key, limit)
        return [(row[0], -row[1]) for row in self.conn.execute(sql, params)]

    def _scope_function(self) -> None:
        """``vaultseek_in_scope(mask, chunk id)``: whether the chunk is inside the scope whose
        mask (:meth:`scope_mask`) has that key — a byte lookup per full-text match, where a join
        to the chunk and its file and the scope's test on them (a subquery per match for a tag
        or a frontmatter field) cost 2–10× more."""
        if self._scope_function_added:
            return
        masks = self._scope_masks

        def in_scope(*args: Any) -> int:
            key, chunk_id = args
            mask = masks.get(key, b"")
            return mask[chunk_id] if 0 <= chunk_id < len(mask) else 0

        self.conn.createscalarfunction("vaultseek_in_scope", in_scope, 2, deterministic=True)
        self._scope_function_added = True

    def chunks_matching(self, fts_query: str, limit: int = -1) -> np.ndarray:
        """The ids of the chunks that match ``fts_query`` (an FTS5 expression), ascending; the
        first ``limit`` of them (-1: all)."""
        found = self.conn.execute(
            "SELECT json_group_array(rowid) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid LIMIT ?)",
            (fts_query, limit),
        ).get
        return np.asarray(json.loads(found), dtype=np.int64)

    def note_chunks_matching(self, fts_query: str) -> tuple[np.ndarray, int]:
        """The ids of every chunk of the files (notes) with a chunk that matches
        ``fts_query``, ascending, and how many such files there are — the chunks
        ``bm25(excluding=fts_query)`` leaves out."""
        self._exclude(fts_query)
        found = self.conn.execute("SELECT json_group_array(id) FROM temp.excluded_chunks").get
        return np.asarray(json.loads(found), dtype=np.int64), self._excluding[1]

    def _exclude(self, fts_query: str) -> None:
        """Fill ``temp.excluded_chunks`` with :meth:`note_chunks_matching`'s chunks, unless it
        holds them for this expression and no connection wrote since: a search asks for the
        set once for its vector lists and once or twice for BM25, and SQL reads it in place.
        (Passed to each statement as JSON instead, 25k ids cost ~5 ms a statement.)"""
        if self._excluding[0] == (fts_query, self.data_version(), self.total_changes()):
            return
        before = int(self.conn.total_changes())
        self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS excluded_chunks (id INTEGER PRIMARY KEY)")
        self.conn.execute("DELETE FROM temp.excluded_chunks")
        self.conn.execute(
            "INSERT INTO temp.excluded_chunks SELECT c.id FROM chunks c WHERE c.file_id IN "
            "(SELECT m.file_id FROM chunks_fts CROSS JOIN chunks m ON m.id = chunks_fts.rowid WHERE chunks_fts MATCH ?)",
            (fts_query,),
        )
        self._temp_changes += int(self.conn.total_changes()) - before
        notes = int(self.conn.execute("SELECT count(DISTINCT c.file_id) FROM temp.excluded_chunks x JOIN chunks c ON c.id = x.id").get)
        self._excluding = ((fts_query, self.data_version(), self.total_changes()), notes)

    def file_ids_in(self, scope: SearchFilter) -> np.ndarray:
        """The ids of every file inside ``scope``, ascending. (Collected as one JSON array in
        SQLite: a row per id costs Python more than the query does.)"""
        where, params = scope_where(scope, per_row=False)
        found = self.conn.execute(
            f"SELECT json_group_array(id) FROM (SELECT f.id FROM files f WHERE {where} ORDER BY f.id)", params
        ).get
        return np.asarray(json.loads(found), dtype=np.int64)

    def file_ids_of(self, chunk_ids: np.ndarray) -> np.ndarray:
        """The file id of each of ``chunk_ids`` (ascending), 0 for a chunk that is gone."""
        known, owners = self._chunk_owners()
        if not len(known) or not len(chunk_ids):
            return np.zeros(len(chunk_ids), dtype=np.int64)
        at = np.minimum(np.searchsorted(known, chunk_ids), len(known) - 1)
        return np.where(known[at] == chunk_ids, owners[at], 0)

    def _chunk_owners(self) -> tuple[np.ndarray, np.ndarray]:
        """Every chunk's id (ascending) and its file's id, read once while the index is
        unchanged (~10 ms for 50k chunks): the vector side and each scope's mask use them."""
        version = (self.data_version(), self.total_changes())
        if self._owners is None or self._owners[0] != version:
            ids, files = self.conn.execute(
                "SELECT json_group_array(id), json_group_array(file_id) FROM (SELECT id, file_id FROM chunks ORDER BY id)"
            ).get
            self._owners = (version, np.asarray(json.loads(ids), dtype=np.int64), np.asarray(json.loads(files), dtype=np.int64))
        return self._owners[1], self._owners[2]

    def scope_mask(self, scope: SearchFilter) -> ScopeMask:
        """Which chunks are inside ``scope``: its files listed once (:meth:`file_ids_in`) and
        marked on every chunk, kept for the last :data:`SCOPES_KEPT` scopes while the index is
        unchanged — a session, a daemon or an agent asks for the same filter again, and then
        BM25 tests a match with one lookup (:meth:`bm25`) and the vector lists mask their
        rows without SQL."""
        key = (scope, self.data_version(), self.total_changes())
        found = self._scopes.get(key)
        if found is None:
            self._scope_serial += 1
            found = ScopeMask.build(self._scope_serial, self.file_ids_in(scope), *self._chunk_owners())
            while len(self._scopes) >= SCOPES_KEPT and (oldest := next(iter(self._scopes), None)) is not None:
                self._scopes.pop(oldest, None)
            self._scopes[key] = found
            self._scope_masks[found.key] = found.chunks.tobytes()
            # A dropped scope's bytes stay a while longer: a search on another thread may be
            # between asking for its mask and BM25 reading it.
            self._scope_masks.pop(found.key - 2 * SCOPES_KEPT, None)
        return found

    def files_inside(self, file_ids: Sequence[int], scope: SearchFilter) -> set[int]:
        """Which of the files ``file_ids`` are inside ``scope``."""
        where, params = scope_where(scope)
        return {
            row[0]
            for row in self.conn.execute(
                f"SELECT f.id FROM json_each(?) j CROSS JOIN files f ON f.id = j.value WHERE {where}",
                (json.dumps([int(i) for i in file_ids]), *params),
            )
        }

    def files_named(self, name: str, scope: SearchFilter | None = None) -> list[int]:
        """Ids of the files inside ``scope`` with ``name`` (already normalised) among their
        title, aliases and file name, ascending."""
        if scope is not None and not scope.unrestricted and self.backend == "sqlite":
            named = np.asarray(self.files_named(name), dtype=np.int64)  # a few files at most
            return named[np.isin(named, self.scope_mask(scope).files)].tolist()
        where, params = ("1", ()) if scope is None or scope.unrestricted else scope_where(scope)
        return [
            row[0]
            for row in self.conn.execute(
                "SELECT DISTINCT f.id FROM file_names n JOIN files f ON f.id = n.file_id "
                f"WHERE n.name = ? AND {where} ORDER BY f.id",
                (name, *params),
            )
        ]

    def chunk_files(self, ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """Chunk id → (its file's id, the file's modification time in ns)."""
        out: dict[int, tuple[int, int]] = {}
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            for cid, file_id, mtime_ns in self.conn.execute(
                "SELECT c.id, f.id, f.mtime_ns FROM chunks c JOIN files f ON f.id = c.file_id "
                f"WHERE c.id IN ({','.join('?' * len(batch))})",
                batch,
            ):
                out[cid] = (file_id, mtime_ns)
        return out

    def first_chunks(self, file_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """File id → (the id of its first chunk, its modification time in ns); files without
        chunks are left out."""
        if not file_ids:
            return {}
        marks = ",".join("?" * len(file_ids))
        return {
            file_id: (cid, mtime_ns)
            for file_id, cid, mtime_ns in self.conn.execute(
                "SELECT f.id, (SELECT c.id FROM chunks c WHERE c.file_id = f.id ORDER BY c.position "
                f"LIMIT 1) AS first, f.mtime_ns FROM files f WHERE f.id IN ({marks}) AND first IS NOT NULL",
                list(file_ids),
            )
        }

    def file_rows(self) -> list[dict[str, object]]:
        """Every file the index knows: path, kind, status, size, chunk count, title, tags,
        error and when it was indexed (for the study app's knowledge base)."""
        return [
            {
                "path": path, "kind": kind, "status": status, "size": size, "chunks": chunks,
                "title": title, "tags": json.loads(tags or "[]"), "error": error,
                "indexed_at": indexed_at,
            }
            for path, kind, status, size, chunks, title, tags, error, indexed_at in self.conn.execute(
                "SELECT f.path, f.kind, f.status, f.size, "
                "(SELECT count(*) FROM chunks c WHERE c.file_id = f.id), f.title, f.tags, "
                "f.error, f.indexed_at FROM files f ORDER BY f.path"
            )
        ]  # fmt: skip

    def note_facts(self) -> list[tuple[str, str | None, list[str], int]]:
        """(path, title, tags, mtime_ns) of every file: what the vault map shows of a note,
        without :meth:`file_rows`' chunk counts."""
        return [
            (path, title, json.loads(tags or "[]"), int(mtime_ns or 0))
            for path, title, tags, mtime_ns in self.conn.execute("SELECT path, title, tags, mtime_ns FROM files")
        ]

    def document_frequencies(self, texts: Sequence[str]) -> list[int]:
        """For each text, how many chunks contain its rarest index term (0 if it has none).

        Texts go through the index's own tokenizer (stemming included), so the terms are
        exactly those FTS5 stores; counts come from an ``fts5vocab`` view of the index."""
        term_sets = [set(self._index_terms(text)) for text in texts]
        counts = self._term_frequencies(set().union(*term_sets))
        return [min((counts[term] for term in terms), default=0) for terms in term_sets]

    def word_frequencies(self, words: Sequence[str]) -> list[int]:
        """For each single word (letters and digits only), how many chunks contain it: one
        tokenizer call for all of them, where :meth:`document_frequencies` takes one a text."""
        if not words:
            return []
        terms = self._index_terms(" ".join(words))
        if len(terms) != len(words):  # a word the tokenizer split or dropped: ask one by one
            return self.document_frequencies(words)
        counts = self._term_frequencies(set(terms))
        return [counts[term] for term in terms]

    def _term_frequencies(self, terms: Collection[str]) -> dict[str, int]:
        """How many chunks hold each index term. ``fts5vocab`` counts a term by walking its
        postings (~0.1 ms for a common one), and queries ask for the same words again and
        again, so counts are kept until the index changes — a commit by any connection, this
        one's included — or :data:`FREQUENCY_CACHE_LIMIT` terms are kept."""
        as_of = (self.data_version(), self.total_changes())
        if as_of != self._frequencies_as_of or len(self._frequencies) > FREQUENCY_CACHE_LIMIT:
            self._frequencies.clear()
            self._frequencies_as_of = as_of
        known = self._frequencies
        missing = [term for term in terms if term not in known]
        if missing:
            known.update(dict.fromkeys(missing, 0))
            for batch in _batches(missing):
                known.update(self.conn.execute(
                    f"SELECT term, doc FROM temp.chunks_vocab WHERE term IN ({_marks(batch)})", batch
                ))  # fmt: skip
        return {term: known[term] for term in terms}

    def terms_starting(self, prefix: str, limit: int = -1) -> list[tuple[str, int]]:
        """The index terms that start with ``prefix`` (as stored: stemmed, folded), in order,
        at most ``limit`` of them (-1: all), each with how many chunks hold it. ``fts5vocab``
        reads the term range in order, counting each term's postings: ~5 ms for one letter's
        terms at 7k chunks (1,500 terms), well under 1 ms for two letters'."""
        self._index_terms("")  # creates the vocabulary view
        return [
            (term, doc)
            for term, doc in self.conn.execute(
                "SELECT term, doc FROM temp.chunks_vocab WHERE term >= ? AND term < ? LIMIT ?",
                (prefix, prefix + "\U0010ffff", limit),
            )
        ]

    def index_terms(self, text: str) -> list[str]:
        """``text``'s terms as the full-text index stores them (stemmed, folded)."""
        return self._index_terms(text)

    def _index_terms(self, text: str) -> list[str]:
        """``text``'s terms as the full-text index stores them (its own tokenizer, stemming
        included). Creates the tokenizer and the ``fts5vocab`` view the counts come from, once
        per connection."""
        if self._tokenize is None:
            name, *args = FTS_TOKENIZER.split()
            self._tokenize = self.conn.fts5_tokenizer(name, args)
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab "
                "USING fts5vocab(main, chunks_fts, 'row')"
            )
        # With offsets (the default) each token is (start, end, text, *colocated); apsw's stub
        # types the result for every flag combination, so it allows a 2-tuple.
        tokens = self._tokenize(text.encode("utf-8"), FTS5_TOKENIZE_QUERY, None)
        return [t[2] for t in tokens]  # type: ignore[misc]

    def chunk_count(self) -> int:
        """How many chunks the index holds; counted again only after a write (a count walks
        the table: ~1 ms at 50k chunks, and every search asks for it)."""
        as_of = (self.data_version(), self.total_changes())
        if self._chunks is None or self._chunks[0] != as_of:
            self._chunks = (as_of, int(self.conn.execute("SELECT count(*) FROM chunks").get))
        return self._chunks[1]

    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        out: dict[int, ChunkRow] = {}
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            marks = ",".join("?" * len(batch))
            for cid, path, pos, section, ctx, text, location in self.conn.execute(
                "SELECT c.id, f.path, c.position, c.section, c.heading_context, c.text, "
                f"c.location FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
                batch,
            ):
                out[cid] = ChunkRow(cid, path, pos, section, ctx, text, _location(location))
        return out

    def chunks_of_file(self, path: str) -> list[ChunkRow]:
        return [
            ChunkRow(cid, path, pos, section, ctx, text, _location(location))
            for cid, pos, section, ctx, text, location in self.conn.execute(
                "SELECT c.id, c.position, c.section, c.heading_context, c.text, c.location "
                "FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ? "
                "ORDER BY c.position",
                (path,),
            )
        ]

    # -- links --------------------------------------------------------------------------
    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """One transaction holding the write lock from its first read (``BEGIN IMMEDIATE``),
        for steps that read, decide and write back and must not interleave with a writer."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def link_changes(self) -> tuple[int, list[str]]:
        """(the last change id, the paths) of the file rows inserted, deleted or renamed since
        links were last resolved (recorded by triggers, see ``m004_links``)."""
        rows = list(self.conn.execute("SELECT id, path FROM link_changes ORDER BY id"))
        return (rows[-1][0] if rows else 0), list(dict.fromkeys(path for _i, path in rows))

    def link_rows(self, *, pending: bool = False, keys: Sequence[str] = ()) -> list[LinkRow]:
        """Stored links to (re)resolve: all of them, those not resolved yet (``pending``),
        or those whose ``key`` is one of ``keys``."""
        select = (
            "SELECT l.rowid, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, "
            "l.via FROM links l JOIN files f ON f.id = l.file_id"
        )
        if pending:
            return [LinkRow(*row) for row in self.conn.execute(f"{select} WHERE l.via IS NULL")]
        if not keys:
            return [LinkRow(*row) for row in self.conn.execute(select)]
        out: list[LinkRow] = []
        wanted = sorted(set(keys))
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            out.extend(LinkRow(*row) for row in self.conn.execute(f"{select} WHERE l.key IN ({marks})", batch))
        return out

    def link_targets(self, paths: Sequence[str] | None = None) -> dict[str, list[str]]:
        """Path → aliases of the indexed files (all, or those among ``paths``): what a link
        can point at."""
        found: list[tuple[str, str]] = []
        if paths is None:
            found = list(self.conn.execute("SELECT path, aliases FROM files WHERE status = 'indexed'"))
        for batch in _batches(paths or ()):
            found += self.conn.execute(
                f"SELECT path, aliases FROM files WHERE status = 'indexed' AND path IN ({_marks(batch)})", batch
            )
        return {path: json.loads(aliases) if aliases and aliases != "[]" else [] for path, aliases in found}

    def link_names(self, keys: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        """(key, path, alias) rows of ``link_names`` (all, or those under ``keys``)."""
        if keys is None:
            return list(self.conn.execute("SELECT key, path, alias FROM link_names"))
        out: list[tuple[str, str, str]] = []
        for batch in _batches(sorted(set(keys))):
            out += self.conn.execute(
                f"SELECT key, path, alias FROM link_names WHERE key IN ({_marks(batch)})", batch
            )
        return out

    def link_names_of(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        """(key, path, alias) rows of the given files."""
        out: list[tuple[str, str, str]] = []
        for batch in _batches(paths):
            out += self.conn.execute(
                f"SELECT key, path, alias FROM link_names WHERE path IN ({_marks(batch)})", batch
            )
        return out

    def replace_link_names(self, paths: Sequence[str] | None, rows: Iterable[tuple[str, str, str]]) -> None:
        """Replace the names of ``paths`` (None: of every file) by ``rows`` (key, path, alias).
        Call inside :meth:`write_lock`."""
        if paths is None:
            self.conn.execute("DELETE FROM link_names")
        for batch in _batches(paths or ()):
            self.conn.execute(f"DELETE FROM link_names WHERE path IN ({_marks(batch)})", batch)
        self.conn.executemany("INSERT OR IGNORE INTO link_names(key, path, alias) VALUES (?, ?, ?)", rows)

    def save_link_resolutions(self, rows: Sequence[tuple[str, str | None, str, int]], *, through: int) -> None:
        """Store (key, resolved path, via, link rowid) and forget the file changes up to id
        ``through`` (they are accounted for). Call inside :meth:`write_lock`."""
        self.conn.executemany("UPDATE links SET key = ?, resolved = ?, via = ? WHERE rowid = ?", rows)
        self.conn.execute("DELETE FROM link_changes WHERE id <= ?", (through,))

    def links_pending(self) -> bool:
        """Whether some links or file changes wait for resolution."""
        return bool(self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM links WHERE via IS NULL) "
            "OR EXISTS (SELECT 1 FROM link_changes)"
        ).fetchall()[0][0])  # fmt: skip

    def links_from(self, path: str) -> list[LinkRow]:
        """The links a file makes, in the order they appear in it."""
        return [
            LinkRow(*row)
            for row in self.conn.execute(
                "SELECT l.rowid, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, "
                "l.via FROM links l JOIN files f ON f.id = l.file_id WHERE f.path = ? ORDER BY l.rowid",
                (path,),
            )
        ]

    def links_to(self, path: str) -> list[LinkRow]:
        """The links other files make to ``path``, by linking file."""
        return [
            LinkRow(*row)
            for row in self.conn.execute(
                "SELECT l.rowid, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, "
                "l.via FROM links l JOIN files f ON f.id = l.file_id WHERE l.resolved = ? "
                "AND f.path != ? ORDER BY f.path, l.rowid",
                (path, path),
            )
        ]

    def links_out(self, paths: Sequence[str]) -> list[LinkRow]:
        """The resolved links the files ``paths`` make to other files, in document order."""
        out: list[LinkRow] = []
        for batch in _batches(sorted(set(paths))):
            out += [LinkRow(*row) for row in self.conn.execute(
                "SELECT l.rowid, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, "
                f"l.via FROM links l JOIN files f ON f.id = l.file_id WHERE f.path IN ({_marks(batch)}) "
                "AND l.resolved IS NOT NULL AND l.resolved != f.path ORDER BY l.rowid",
                batch,
            )]  # fmt: skip
        return out

    def link_edges(self) -> list[tuple[str, str]]:
        """Every distinct (linking file, linked file) pair between two different files."""
        return list(self.conn.execute(
            "SELECT DISTINCT f.path, l.resolved FROM links l JOIN files f ON f.id = l.file_id "
            "WHERE l.resolved IS NOT NULL AND l.resolved != f.path"
        ))

    def link_count(self) -> int:
        """How many stored links resolve to a file (a cheap cue that the link graph changed)."""
        return int(self.conn.execute("SELECT count(*) FROM links WHERE resolved IS NOT NULL").get)

    def indexed_path(self, path: str) -> str | None:
        """``path`` if it is an indexed file, else None."""
        return self.conn.execute("SELECT path FROM files WHERE path = ? AND status = 'indexed'", (path,)).get

    def titles(self, paths: Sequence[str]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        wanted = list(dict.fromkeys(paths))
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            out.update(self.conn.execute(f"SELECT path, title FROM files WHERE path IN ({marks})", batch))
        return out

    def chunk_ids_of_files(self, paths: Sequence[str]) -> np.ndarray:
        """The ids of every chunk of the given files, ascending."""
        ids: list[int] = []
        for batch in _batches(paths):
            ids += [row[0] for row in self.conn.execute(
                f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path IN ({_marks(batch)})",
                batch,
            )]  # fmt: skip
        return np.asarray(sorted(ids), dtype=np.int64)

    def chunk_paths(self, ids: Sequence[int]) -> dict[int, str]:
        """Chunk id → the vault-relative path of its file."""
        out: dict[int, str] = {}
        wanted = list(ids)
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            out.update(self.conn.execute(
                f"SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
                batch,
            ))  # fmt: skip
        return out

    def openings(self, ids: Sequence[int]) -> dict[int, int]:
        """Chunk id → the id of its file's opening chunk (its first, ``position`` 0), for the
        chunks of ``ids`` that are not openings themselves."""
        out: dict[int, int] = {}
        for batch in _batches(list(ids)):
            out.update(self.conn.execute(
                f"SELECT c.id, o.id FROM chunks c JOIN chunks o ON o.file_id = c.file_id AND o.position = 0 "
                f"WHERE c.id IN ({_marks(batch)}) AND c.position > 0",
                batch,
            ))  # fmt: skip
        return out

    def located(self, ids: Sequence[int]) -> set[int]:
        """The chunks of ``ids`` that have a place in a document (a page, a slide, rows)."""
        out: set[int] = set()
        for batch in _batches(list(ids)):
            out.update(cid for (cid,) in self.conn.execute(
                f"SELECT id FROM chunks WHERE id IN ({_marks(batch)}) AND location IS NOT NULL", batch
            ))  # fmt: skip
        return out

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

    # -- the study app's knowledge base -------------------------------------------------
    def file_listing(self) -> list[tuple[str, str, str, int, int, str | None, str | None, str, int, int, int, str | None]]:
        """Every file the index knows, one compact row each, in no particular order: (path,
        kind, status, size, chunks, title, error, indexed_at, ocr_pending, ocr_over_limit,
        ocr_limit, content_hash). The study app's paged list reads this; no tags or JSON to
        decode, so 20k files come back in a few tens of milliseconds."""
        return list(self.conn.execute(
            "SELECT f.path, f.kind, f.status, f.size, (SELECT count(*) FROM chunks c WHERE c.file_id = f.id), "
            "f.title, f.error, f.indexed_at, f.ocr_pending, f.ocr_over_limit, f.ocr_limit, f.content_hash "
            "FROM files f"
        ))  # fmt: skip

    def file_listing_version(self) -> tuple[int, int, int, int, str, int]:
        """A value that changes whenever :meth:`file_listing` would (a file added, removed,
        re-read or skipped: each rewrites its row, with a new ``indexed_at``), read in one pass
        over ``files`` without building a row: the study app keeps its list while it holds."""
        row = self.conn.execute(
            "SELECT count(*), coalesce(max(id), 0), coalesce(sum(id), 0), coalesce(sum(size), 0), "
            "coalesce(max(indexed_at), ''), coalesce(sum(ocr_pending), 0) FROM files"
        ).get  # one row: its tuple
        return int(row[0]), int(row[1]), int(row[2]), int(row[3]), str(row[4]), int(row[5])

    def paths_with_hash(self, content_hash: str) -> list[str]:
        """Indexed files whose bytes have this sha256 (hex), by path: an upload's duplicates."""
        return [row[0] for row in self.conn.execute(
            "SELECT path FROM files WHERE content_hash = ? AND status = 'indexed' ORDER BY path", (content_hash,)
        )]  # fmt: skip


T = TypeVar("T")


def _batches(items: Sequence[T], size: int = 500) -> Iterator[list[T]]:
    """``items`` in lists small enough for one ``IN (…)``."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _marks(batch: Sequence[object]) -> str:
    return ",".join("?" * len(batch))


def _location(stored: str | None) -> Location | None:
    return Location.from_dict(json.loads(stored)) if stored else None


def _ids_and_codes(rows: Iterable[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """(chunk id, vector blob) rows → the ids and the int8 codes, as VectorIndex keeps them."""
    ids: list[int] = []
    blobs: list[bytes] = []
    for chunk_id, blob in rows:
        ids.append(chunk_id)
        blobs.append(blob)
    if not blobs:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int8)
    if len({len(b) for b in blobs}) != 1:
        raise ValueError("stored vectors differ in dimension")
    return np.asarray(ids, dtype=np.int64), decode_codes(blobs)


def _vector_blob(vector: np.ndarray) -> bytes:
    """int8 codes followed by the float32 scale that restores them."""
    codes, scales = quantize(vector)
    return codes[0].tobytes() + scales[0].tobytes()


def decode_codes(blobs: Sequence[bytes]) -> np.ndarray:
    """Stored blobs (all of one dimension) → their int8 codes, one row each: what
    :class:`~vaultseek.storage.vectors.VectorIndex` searches. Every fresh search process pays this
    for the whole index, so it is one copy of the codes (~20–25 ms at 50k × 256, mostly
    joining the blobs; decoding to unit float32 rows took ~75 ms)."""
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), -1)
    return np.ascontiguousarray(raw[:, : raw.shape[1] - _SCALE_BYTES]).view(np.int8)


def decode_vectors(blobs: Sequence[bytes]) -> np.ndarray:
    """Stored blobs (all of one dimension) → float32 rows, re-normalised to unit length."""
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), -1)
    dim = raw.shape[1] - _SCALE_BYTES
    codes = raw[:, :dim].view(np.int8).astype(np.float32)
    scales = np.ascontiguousarray(raw[:, dim:]).view(np.float32)
    matrix = codes * scales
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def deep_table(building: bool) -> str:
    """The deep vectors' table: the serving generation, or the one being built."""
    return "deep_vectors_next" if building else "deep_vectors"
