"""The deep vectors in SQLite: both generations, what the deep job has left, and promotion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .base import StoreBase
from .static_vectors import _ids_and_codes, _vector_blob


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


class DeepVectors(StoreBase):
    """The deep model's vectors, by embed hash, and the deep job's progress through them."""

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


def deep_table(building: bool) -> str:
    """The deep vectors' table: the serving generation, or the one being built."""
    return "deep_vectors_next" if building else "deep_vectors"
