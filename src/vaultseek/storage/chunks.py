"""Chunk lookups in SQLite: chunks by id and by file, their files, paths and openings."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..records import Location
from .base import StoreBase, _batches, _marks


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str
    position: int
    section: str
    heading_context: str
    text: str
    location: Location | None = None


class ChunkLookups(StoreBase):
    """Chunks read back by id or by file, and what a search asks of them: their file, its
    modification time and path, its opening chunk, whether they have a place in a document."""

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


def _location(stored: str | None) -> Location | None:
    return Location.from_dict(json.loads(stored)) if stored else None
