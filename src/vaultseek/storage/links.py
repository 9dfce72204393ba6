"""The links the SQLite store keeps: each file's links, their resolution, and link names."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..records import LinkVia
from .base import StoreBase, _batches, _marks


@dataclass(frozen=True, slots=True)
class LinkRow:
    """A stored link: the file that makes it, the target as written, and where it resolves
    (``resolved`` None when dangling; ``via`` None while not resolved yet)."""

    rowid: int
    source: str
    target: str
    heading: str | None
    alias: str | None
    embed: bool
    syntax: str
    resolved: str | None
    via: LinkVia | None


class LinkTables(StoreBase):
    """``links`` (one row a link a file makes, with where it resolves), ``link_names`` (the
    names a link can say a file by) and ``link_changes`` (file rows not yet accounted for)."""

    def link_changes(self) -> tuple[int, list[str]]:
        """(the last change id, the paths) of the file rows inserted, deleted or renamed since
        links were last resolved (recorded by triggers, see ``m004_links``)."""
        rows = list(self.conn.execute("SELECT id, path FROM link_changes ORDER BY id"))
        return (rows[-1][0] if rows else 0), list(dict.fromkeys(path for _i, path in rows))

    def link_rows(self, *, pending: bool = False, keys: Sequence[str] = ()) -> list[LinkRow]:
        """Stored links to (re)resolve: all of them, those not resolved yet (``pending``),
        or those whose ``key`` is one of ``keys``."""
        select = (
            "SELECT l.rowid, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, "
            "l.via FROM links l JOIN files f ON f.id = l.file_id"
        )
        if pending:
            return [LinkRow(*row) for row in self.conn.execute(f"{select} WHERE l.via IS NULL")]
        if not keys:
            return [LinkRow(*row) for row in self.conn.execute(select)]
        out: list[LinkRow] = []
        wanted = sorted(set(keys))
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            out.extend(LinkRow(*row) for row in self.conn.execute(f"{select} WHERE l.key IN ({marks})", batch))
        return out

    def link_targets(self, paths: Sequence[str] | None = None) -> dict[str, list[str]]:
        """Path → aliases of the indexed files (all, or those among ``paths``): what a link
        can point at."""
        found: list[tuple[str, str]] = []
        if paths is None:
            found = list(self.conn.execute("SELECT path, aliases FROM files WHERE status = 'indexed'"))
        for batch in _batches(paths or ()):
            found += self.conn.execute(
                f"SELECT path, aliases FROM files WHERE status = 'indexed' AND path IN ({_marks(batch)})", batch
            )
        return {path: json.loads(aliases) if aliases and aliases != "[]" else [] for path, aliases in found}

    def link_names(self, keys: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        """(key, path, alias) rows of ``link_names`` (all, or those under ``keys``)."""
        if keys is None:
            return list(self.conn.execute("SELECT key, path, alias FROM link_names"))
        out: list[tuple[str, str, str]] = []
        for batch in _batches(sorted(set(keys))):
            out += self.conn.execute(
                f"SELECT key, path, alias FROM link_names WHERE key IN ({_marks(batch)})", batch
            )
        return out

    def link_names_of(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        """(key, path, alias) rows of the given files."""
        out: list[tuple[str, str, str]] = []
        for batch in _batches(paths):
            out += self.conn.execute(
                f"SELECT key, path, alias FROM link_names WHERE path IN ({_marks(batch)})", batch
            )
        return out

    def replace_link_names(self, paths: Sequence[str] | None, rows: Iterable[tuple[str, str, str]]) -> None:
        """Replace the names of ``paths`` (None: of every file) by ``rows`` (key, path, alias).
        Call inside :meth:`write_lock`."""
        if paths is None:
            self.conn.execute("DELETE FROM link_names")
        for batch in _batches(paths or ()):
            self.conn.execute(f"DELETE FROM link_names WHERE path IN ({_marks(batch)})", batch)
        self.conn.executemany("INSERT OR IGNORE INTO link_names(key, path, alias) VALUES (?, ?, ?)", rows)

    def save_link_resolutions(self, rows: Sequence[tuple[str, str | None, str, int]], *, through: int) -> None:
        """Store (key, resolved path, via, link rowid) and forget the file changes up to id
        ``through`` (they are accounted for). Call inside :meth:`write_lock`."""
        self.conn.executemany("UPDATE links SET key = ?, resolved = ?, via = ? WHERE rowid = ?", rows)
        self.conn.execute("DELETE FROM link_changes WHERE id <= ?", (through,))

    def links_pending(self) -> bool:
        """Whether some links or file changes wait for resolution."""
        return bool(self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM links WHERE via IS NULL) "
            "OR EXISTS (SELECT 1 FROM link_changes)"
        ).fetchall()[0][0])  # fmt: skip

    def links_from(self, path: str) -> list[LinkRow]:
        """The links a file makes, in the order they appear in it."""
        return [
            LinkRow(*row)
            for row in self.conn.execute(
                "SELECT l.rowid, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, "
                "l.via FROM links l JOIN files f ON f.id = l.file_id WHERE f.path = ? ORDER BY l.rowid",
                (path,),
            )
        ]

    def links_to(self, path: str) -> list[LinkRow]:
        """The links other files make to ``path``, by linking file."""
        return [
            LinkRow(*row)
            for row in self.conn.execute(
                "SELECT l.rowid, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, "
                "l.via FROM links l JOIN files f ON f.id = l.file_id WHERE l.resolved = ? "
                "AND f.path != ? ORDER BY f.path, l.rowid",
                (path, path),
            )
        ]

    def links_out(self, paths: Sequence[str]) -> list[LinkRow]:
        """The resolved links the files ``paths`` make to other files, in document order."""
        out: list[LinkRow] = []
        for batch in _batches(sorted(set(paths))):
            out += [LinkRow(*row) for row in self.conn.execute(
                "SELECT l.rowid, f.path, l.target, l.heading, l.alias, l.embed, l.syntax, l.resolved, "
                f"l.via FROM links l JOIN files f ON f.id = l.file_id WHERE f.path IN ({_marks(batch)}) "
                "AND l.resolved IS NOT NULL AND l.resolved != f.path ORDER BY l.rowid",
                batch,
            )]  # fmt: skip
        return out

    def link_edges(self) -> list[tuple[str, str]]:
        """Every distinct (linking file, linked file) pair between two different files."""
        return list(self.conn.execute(
            "SELECT DISTINCT f.path, l.resolved FROM links l JOIN files f ON f.id = l.file_id "
            "WHERE l.resolved IS NOT NULL AND l.resolved != f.path"
        ))

    def link_count(self) -> int:
        """How many stored links resolve to a file (a cheap cue that the link graph changed)."""
        return int(self.conn.execute("SELECT count(*) FROM links WHERE resolved IS NOT NULL").get)
