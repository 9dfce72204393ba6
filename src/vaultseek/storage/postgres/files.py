"""The PostgreSQL store's files: their rows, stat data, tags and names, skips, OCR checkpoints."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from ...records import Note, SkippedFile
from ..files import FileState, PreparedChunk, utc_now
from . import fulltext, postings
from .base import PgStoreBase
from .static_vectors import _vector_text

_FILE_COLUMNS = (
    "id, path, size, mtime_ns, content_hash, status, error, kind, ocr_pending, indexed_at, "
    "ocr_over_limit, ocr_limit"
)


class PgFileTables(PgStoreBase):
    """The files the collection knows (indexed or skipped) and the rows written with each,
    their postings and the BM25 totals among them; and the OCR text saved page by page."""

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

    def textless_documents(self) -> list[str]:
        return [
            path
            for (path,) in self.pg.execute(
                "SELECT f.path FROM files f WHERE f.status = 'indexed' AND f.kind NOT IN ('note', 'image') "
                "AND coalesce(f.ocr_pending, 0) = 0 AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.file_id = f.id) "
                "ORDER BY f.path"
            )
        ]

    def ocr_totals(self) -> tuple[int, int, int]:
        row = self.pg.execute(
            "SELECT coalesce(sum(ocr_pages), 0), coalesce(sum(ocr_pending), 0), coalesce(sum(ocr_over_limit), 0) "
            "FROM files WHERE status = 'indexed'"
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1]), int(row[2])

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

    def indexed_path(self, path: str) -> str | None:
        found = self._one("SELECT path FROM files WHERE path = %s AND status = 'indexed'", (path,))
        return None if found is None else str(found)

    def titles(self, paths: Sequence[str]) -> dict[str, str | None]:
        rows = self.pg.execute("SELECT path, title FROM files WHERE path = ANY(%s)", (list(dict.fromkeys(paths)),))
        return dict(rows.fetchall())

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


def _location_json(draft: Any) -> str | None:
    if draft.location is None:
        return None
    return json.dumps(draft.location.to_dict(), ensure_ascii=False, separators=(",", ":"))
