"""Which files and chunks lie inside a search's scope in SQLite, and the masks kept of them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..records import SearchFilter
from .base import StoreBase
from .scope import scope_where

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


class Scopes(StoreBase):
    """A search filter's files and chunks: listed in SQL (the condition ``scope`` builds),
    or marked in a mask kept for the last few scopes, which BM25 reads through the SQL
    function ``vaultseek_in_scope``."""

    _owners: tuple[tuple[int, int], np.ndarray, np.ndarray] | None
    _scopes: dict[tuple[SearchFilter, int, int], ScopeMask]
    _scope_masks: dict[int, bytes]
    _scope_function_added: bool
    _scope_serial: int

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
