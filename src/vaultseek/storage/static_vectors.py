"""Each chunk's static vector in SQLite, and the int8 blob a vector is stored as."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from .base import StoreBase
from .vectors import quantize

_SCALE_BYTES = 4
"""Vectors are stored as int8 with one float32 scale each (``max|v| / 127``): a quarter of
float32's bytes. On unit vectors the rounding error in a cosine is below 0.005, far under
the gaps that decide a top-30 (the 50k-chunk index shrinks by ~19 MB)."""


class StaticVectors(StoreBase):
    """The static model's vectors, one a chunk (``vectors``), as the index is written and
    re-embedded, and as every search process loads them."""

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
