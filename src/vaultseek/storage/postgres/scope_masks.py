"""Which files and chunks lie inside a search's scope in PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...records import SearchFilter
from ..scope import scope_where
from ..scope_masks import ScopeMask
from .base import PgStoreBase


class PgScopes(PgStoreBase):
    """A search filter's files and chunks, listed in SQL (the condition ``scope`` builds in
    PostgreSQL's dialect); nothing is kept, as a search here tests its scope in SQL."""

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
