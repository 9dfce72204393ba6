"""The SQL condition a search filter (:class:`~vaultseek.records.SearchFilter`) becomes.

Part of the storage layer beside ``store``, which runs it: every store query that searches
within a scope (the BM25 join, the vector side's file list, title matches) asks this module
for the condition on ``files f`` and its parameters, so all of them filter alike. The
matching rules themselves are ``filters``'; this module only says them in SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from .filters import field_key, field_value, tag_key
from .records import SearchFilter


def scope_where(scope: SearchFilter, *, per_row: bool = True) -> tuple[str, tuple[object, ...]]:
    """The condition on ``files f`` that holds for files inside ``scope``, and its
    parameters. Folders are path ranges rather than LIKE, so ``_`` and ``%`` in names are
    never wildcards; tags and frontmatter values are compared as ``filters`` normalises them
    (applied here too, so a hand-built filter matches as a parsed one does).

    ``per_row``: the condition is tested on a few given files (a join per search hit), so a
    tag or frontmatter test looks up that file's rows; otherwise it lists every file in
    scope, and the matching files of each such test are collected once instead."""
    conditions: list[str] = []
    params: list[object] = []

    def any_of(values: tuple[str, ...], test: Callable[[str], tuple[str, list[object]]]) -> None:
        parts = [test(value) for value in values]
        conditions.append("(" + " OR ".join(p[0] for p in parts) + ")" if parts else "0")
        for _sql, values_ in parts:
            params.extend(values_)

    def files_with(table: str, column: str, test: str, values: list[object]) -> None:
        # Per row, "+" keeps the planner on the by-file index: seeking by the key or tag
        # instead would scan every row of it for each file (measured: 100× slower).
        conditions.append(
            f"EXISTS (SELECT 1 FROM {table} m WHERE m.file_id = f.id AND +m.{column} {test})"
            if per_row
            else f"f.id IN (SELECT m.file_id FROM {table} m WHERE m.{column} {test})"
        )
        params.extend(values)

    if scope.paths is not None:
        any_of(scope.paths, lambda p: ("f.path = ?", [p]))
    if scope.folders is not None:  # a range on the path index: "a/" ≤ path < "a0" ('0' follows '/')
        any_of(
            scope.folders,
            lambda d: ("1", []) if not d else ("(f.path >= ? AND f.path < ?)", [d + "/", d + "0"]),
        )
    if scope.tags is not None:
        keys = sorted({tag_key(t) for t in scope.tags})
        if keys:
            files_with("file_tags", "tag", f"IN ({','.join('?' * len(keys))})", list(keys))
        else:
            conditions.append("0")
    if scope.kinds is not None:
        conditions.append(f"f.kind IN ({','.join('?' * len(scope.kinds))})" if scope.kinds else "0")
        params.extend(scope.kinds)
    if scope.where is not None:
        if not scope.where:
            conditions.append("0")
        wanted: dict[str, set[str | None]] = {}
        for key, value in scope.where:
            wanted.setdefault(field_key(key), set()).add(None if value is None else field_value(value))
        for key, values in wanted.items():
            if None in values:  # "has the key" takes in every value of it
                files_with("frontmatter_fields", "key", "= ?", [key])
            else:
                chosen = sorted(v for v in values if v is not None)
                files_with("frontmatter_fields", "key", f"= ? AND m.value IN ({','.join('?' * len(chosen))})", [key, *chosen])
    if scope.modified_after is not None:
        conditions.append("f.mtime_ns >= ?")
        params.append(_epoch_ns(scope.modified_after))
    if scope.modified_before is not None:
        conditions.append("f.mtime_ns < ?")
        params.append(_epoch_ns(scope.modified_before))
    return " AND ".join(conditions) or "1", tuple(params)


def _epoch_ns(moment: datetime) -> int:
    """Nanoseconds since the epoch, clamped to SQLite's 64-bit integers (years ~1678–2262)."""
    return max(-(2**63), min(2**63 - 1, int(moment.timestamp() * 1_000_000) * 1000))
