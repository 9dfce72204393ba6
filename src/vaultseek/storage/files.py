"""The SQLite store's files: their rows, stat data, tags and names, skips and OCR checkpoints."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from ..records import ChunkDraft, Link, Note, SkippedFile
from .base import StoreBase, _batches, _marks
from .static_vectors import _vector_blob


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


class FileTables(StoreBase):
    """The files the index knows (indexed or skipped) and the rows written with each: its
    chunks, their full-text rows and vectors, links, frontmatter fields, tags and names; and
    the OCR text saved page by page while a document is read."""

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

    def textless_documents(self) -> list[str]:
        """Indexed documents (pictures left out) that hold no chunk and wait for no OCR: read
        without error, and no text found in them."""
        return [
            path
            for (path,) in self.conn.execute(
                "SELECT f.path FROM files f WHERE f.status = 'indexed' AND f.kind NOT IN ('note', 'image') "
                "AND coalesce(f.ocr_pending, 0) = 0 AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.file_id = f.id) "
                "ORDER BY f.path"
            )
        ]

    def ocr_totals(self) -> tuple[int, int, int]:
        """(pages whose text came from OCR, pages still waiting for OCR, pages left without
        OCR by the per-document limit) over indexed files."""
        done, pending, over = self.conn.execute(
            "SELECT coalesce(sum(ocr_pages), 0), coalesce(sum(ocr_pending), 0), "
            "coalesce(sum(ocr_over_limit), 0) FROM files WHERE status = 'indexed'"
        ).get
        return int(done), int(pending), int(over)

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
