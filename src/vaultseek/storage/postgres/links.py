"""The links the PostgreSQL store keeps: each file's links, their resolution, and link names."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..links import LinkRow
from .base import PgStoreBase

_LINK_SELECT = (
    "SELECT l.id, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, l.via "
    "FROM links l JOIN files f ON f.id = l.file_id"
)


class PgLinkTables(PgStoreBase):
    """``links``, ``link_names`` and ``link_changes``, as in the SQLite store."""

    def link_changes(self) -> tuple[int, list[str]]:
        rows = self.pg.execute("SELECT id, path FROM link_changes ORDER BY id").fetchall()
        return (int(rows[-1][0]) if rows else 0), list(dict.fromkeys(path for _i, path in rows))

    def link_rows(self, *, pending: bool = False, keys: Sequence[str] = ()) -> list[LinkRow]:
        if pending:
            return [_link(row) for row in self.pg.execute(f"{_LINK_SELECT} WHERE l.via IS NULL")]
        if not keys:
            return [_link(row) for row in self.pg.execute(_LINK_SELECT)]
        return [_link(row) for row in self.pg.execute(f"{_LINK_SELECT} WHERE l.key = ANY(%s)", (sorted(set(keys)),))]

    def link_targets(self, paths: Sequence[str] | None = None) -> dict[str, list[str]]:
        sql = "SELECT path, aliases FROM files WHERE status = 'indexed'"
        rows = self.pg.execute(sql) if paths is None else self.pg.execute(f"{sql} AND path = ANY(%s)", (list(paths),))
        return {path: json.loads(aliases) if aliases and aliases != "[]" else [] for path, aliases in rows}

    def link_names(self, keys: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        if keys is None:
            return [tuple(r) for r in self.pg.execute("SELECT key, path, alias FROM link_names")]
        return [
            tuple(r)
            for r in self.pg.execute("SELECT key, path, alias FROM link_names WHERE key = ANY(%s)", (sorted(set(keys)),))
        ]

    def link_names_of(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        return [
            tuple(r)
            for r in self.pg.execute("SELECT key, path, alias FROM link_names WHERE path = ANY(%s)", (list(paths),))
        ]

    def replace_link_names(self, paths: Sequence[str] | None, rows: Iterable[tuple[str, str, str]]) -> None:
        with self._write(), self.pg.cursor() as cur:
            if paths is None:
                cur.execute("DELETE FROM link_names")
            else:
                cur.execute("DELETE FROM link_names WHERE path = ANY(%s)", (list(paths),))
            cur.executemany(
                "INSERT INTO link_names(key, path, alias) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", list(rows)
            )

    def save_link_resolutions(self, rows: Sequence[tuple[str, str | None, str, int]], *, through: int) -> None:
        with self._write(), self.pg.cursor() as cur:
            cur.executemany("UPDATE links SET key = %s, resolved = %s, via = %s WHERE id = %s", list(rows))
            cur.execute("DELETE FROM link_changes WHERE id <= %s", (through,))

    def links_pending(self) -> bool:
        return bool(self._one(
            "SELECT EXISTS (SELECT 1 FROM links WHERE via IS NULL) OR EXISTS (SELECT 1 FROM link_changes)"
        ))  # fmt: skip

    def links_from(self, path: str) -> list[LinkRow]:
        return [_link(row) for row in self.pg.execute(f"{_LINK_SELECT} WHERE f.path = %s ORDER BY l.id", (path,))]

    def links_out(self, paths: Sequence[str]) -> list[LinkRow]:
        return [
            _link(row)
            for row in self.pg.execute(
                f"{_LINK_SELECT} WHERE f.path = ANY(%s) AND l.resolved IS NOT NULL AND l.resolved != f.path "
                "ORDER BY l.id",
                (sorted(set(paths)),),
            )
        ]

    def links_to(self, path: str) -> list[LinkRow]:
        return [
            _link(row)
            for row in self.pg.execute(
                f"{_LINK_SELECT} WHERE l.resolved = %s AND f.path != %s ORDER BY f.path, l.id", (path, path)
            )
        ]

    def link_count(self) -> int:
        return int(self._one("SELECT count(*) FROM links WHERE resolved IS NOT NULL"))

    def link_edges(self) -> list[tuple[str, str]]:
        return [
            (a, b)
            for a, b in self.pg.execute(
                "SELECT DISTINCT f.path, l.resolved FROM links l JOIN files f ON f.id = l.file_id "
                "WHERE l.resolved IS NOT NULL AND l.resolved != f.path"
            )
        ]


def _link(row: Sequence[Any]) -> LinkRow:
    return LinkRow(int(row[0]), row[1], row[2], row[3], row[4], bool(row[5]), row[6], row[7], row[8])
