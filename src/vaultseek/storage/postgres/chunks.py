"""Chunk lookups in PostgreSQL: chunks by id and by file, their files, paths and openings."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..chunks import ChunkRow, _location
from .base import PgStoreBase


class PgChunkLookups(PgStoreBase):
    """Chunks read back by id or by file, and what a search asks of them: their file, its
    modification time and path, its opening chunk, whether they have a place in a document."""

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
