"""The deep vectors in PostgreSQL: both generations, what the deep job has left, promotion."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..deep_vectors import PendingTexts, deep_table
from .static_vectors import PgStaticVectors, _vector_text


class PgDeepVectors(PgStaticVectors):
    """The deep model's vectors, by embed hash, and the deep job's progress through them
    (loaded as the static ones are: :meth:`_ids_and_codes`)."""

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
