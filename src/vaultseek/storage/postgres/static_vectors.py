"""Each chunk's static vector in PostgreSQL, as pgvector's ``halfvec``, written and read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from ..vectors import quantize
from .base import PgStoreBase


class PgStaticVectors(PgStoreBase):
    """The static model's vectors, in each chunk's ``embedding`` column, as the index is
    written and re-embedded, and as a searching process loads them (int8 codes)."""

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
