"""The SQL condition a search filter (:class:`~vaultseek.records.SearchFilter`) becomes.

Part of the storage layer beside ``store``, which runs it: every store query that searches
within a scope (the BM25 join, the vector side's file list, title matches) asks this module
for the condition on ``files f`` and its parameters, so all of them filter alike. The
matching rules themselves are ``filters``'; this module only says them in SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from ..errors import QueryError
from ..records import FieldComparison, SearchFilter
from ..text.keys import field_key, field_value, tag_key

_AS_NUMBER = (
    "(CASE WHEN m.value GLOB '[0-9-]*' AND json_valid(m.value)"
    " AND abs(CAST(m.value AS REAL)) <= 1.7976931348623157e308 THEN CAST(m.value AS REAL) END)"
)
"""A stored value as a number, else NULL. ``field_value`` stores every number in Python's
shortest form (``3``, ``4.5``, ``1e+16``), which is JSON's number grammar, and nothing else
that starts with a digit or ``-`` is valid JSON: so ``2024-03-05`` or ``3 apples`` (which
``CAST`` alone would read as 2024 and 3) are not numbers, and ``1e400`` (text to
``field_value``, infinite to SQLite) is not one either."""
_AS_TIME = (
    "(CASE WHEN m.value GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]*' THEN unixepoch(CASE WHEN"
    " length(m.value) = 7 THEN m.value || '-01' ELSE upper(m.value) END, 'utc', 'subsec') END)"
)
"""A stored value as epoch seconds, else NULL: ``YYYY-MM`` (the first of the month),
``YYYY-MM-DD`` (midnight), ``YYYY-MM-DD[T ]HH:MM[:SS[.fff]]``, each in local time, or with an
offset (``+01:00``, ``Z``) at that offset — the absolute forms of ``filters.parse_time``, and
every form a YAML date or time is stored in. Values are stored case-folded, hence ``upper``
(SQLite reads ``T`` and ``Z`` only); ``'utc'`` reads a time without an offset as local and
leaves one with an offset alone. The pattern keeps out bare numbers, which SQLite would
read as Julian day numbers. Computed from the stored text rather than kept in a typed
column: a few C functions per compared row, and no migration or re-index. Where SQLite and
Python part (``test_filters`` checks the rest): SQLite keeps milliseconds, not microseconds,
and a local time that does not exist (inside a daylight-saving gap) lands an hour apart."""
_ORDER = {"<": "<", "<=": "<=", ">": ">", ">=": ">="}


@dataclass(frozen=True, slots=True)
class _Dialect:
    """The few words the condition is said in differently by SQLite and PostgreSQL."""

    true: str
    false: str
    hint: str
    """Prefix that keeps SQLite's planner off an index (``+m.key``); PostgreSQL needs none."""
    same: str
    """Null-safe equality."""
    any: str
    """An aggregate: whether the test held for any row."""
    row_id: str
    number: str
    time: str
    path_has: str
    """Whether the path, its ASCII letters lower-cased, holds the parameter."""
    name_has: str
    """The same of the file name (the path after its last ``/``)."""


_DIALECTS = {
    "sqlite": _Dialect(
        "1", "0", "+", "IS", "max", "rowid", _AS_NUMBER, _AS_TIME, "instr(lower(f.path), ?) > 0",
        "instr(lower(substr(f.path, length(rtrim(f.path, replace(f.path, '/', ''))) + 1)), ?) > 0",
    ),
    "postgresql": _Dialect(
        "true", "false", "", "IS NOT DISTINCT FROM", "bool_or", "id", "value_number(m.value)", "value_epoch(m.value)",
        'strpos(lower(f.path COLLATE "C"), ?) > 0', "strpos(lower(regexp_replace(f.path, '^.*/', '') COLLATE \"C\"), ?) > 0",
    ),
}
"""SQLite's ``lower`` changes ASCII letters only, and so does PostgreSQL's under the ``C``
collation: the two backends compare paths alike (``Ä`` and ``ä`` stay different)."""
Dialect = Literal["sqlite", "postgresql"]


def scope_where(
    scope: SearchFilter, *, per_row: bool = True, dialect: Dialect = "sqlite"
) -> tuple[str, tuple[object, ...]]:
    """The condition on ``files f`` that holds for files inside ``scope``, and its
    parameters. Folders are path ranges rather than LIKE, so ``_`` and ``%`` in names are
    never wildcards; tags and frontmatter values are compared as ``filters`` normalises them
    (applied here too, so a hand-built filter matches as a parsed one does).

    ``per_row``: the condition is tested on a few given files (a join per search hit), so a
    tag or frontmatter test looks up that file's rows; otherwise it lists every file in
    scope, and the matching files of each such test are collected once instead.

    ``dialect`` says it for SQLite (``?`` parameters) or PostgreSQL (``%s`` parameters and the
    ``value_number``/``value_epoch`` functions of ``postgres/schema.py``)."""
    sql = _DIALECTS[dialect]
    conditions: list[str] = []
    params: list[object] = []

    def any_of(values: tuple[str, ...], test: Callable[[str], tuple[str, list[object]]]) -> None:
        parts = [test(value) for value in values]
        conditions.append("(" + " OR ".join(p[0] for p in parts) + ")" if parts else sql.false)
        for _sql, values_ in parts:
            params.extend(values_)

    def files_with(table: str, column: str, test: str, values: list[object]) -> None:
        # Per row, "+" keeps the planner on the by-file index: seeking by the key or tag
        # instead would scan every row of it for each file (measured: 100× slower).
        conditions.append(
            f"EXISTS (SELECT 1 FROM {table} m WHERE m.file_id = f.id AND {sql.hint}m.{column} {test})"
            if per_row
            else f"f.id IN (SELECT m.file_id FROM {table} m WHERE m.{column} {test})"
        )
        params.extend(values)

    if scope.paths is not None:
        any_of(scope.paths, lambda p: ("f.path = ?", [p]))
    if scope.folders is not None:  # a range on the path index: "a/" ≤ path < "a0" ('0' follows '/')
        any_of(
            scope.folders,
            lambda d: (sql.true, []) if not d else ("(f.path >= ? AND f.path < ?)", [d + "/", d + "0"]),
        )
    if scope.tags is not None:
        keys = sorted({tag_key(t) for t in scope.tags})
        if keys:
            files_with("file_tags", "tag", f"IN ({','.join('?' * len(keys))})", list(keys))
        else:
            conditions.append(sql.false)
    if scope.kinds is not None:
        conditions.append(f"f.kind IN ({','.join('?' * len(scope.kinds))})" if scope.kinds else sql.false)
        params.extend(scope.kinds)
    if scope.path_contains is not None:
        any_of(scope.path_contains, lambda text: (sql.path_has, [ascii_lower(text)]))
    if scope.name_contains is not None:
        any_of(scope.name_contains, lambda text: (sql.name_has, [ascii_lower(text)]))
    if scope.where is not None:
        if not scope.where:
            conditions.append(sql.false)
        wanted: dict[str, set[str | None]] = {}
        for key, value in scope.where:
            wanted.setdefault(field_key(key), set()).add(None if value is None else field_value(value))
        for key, values in wanted.items():
            if None in values:  # "has the key" takes in every value of it
                files_with("frontmatter_fields", "key", "= ?", [key])
            else:
                chosen = sorted(v for v in values if v is not None)
                files_with("frontmatter_fields", "key", f"= ? AND m.value IN ({','.join('?' * len(chosen))})", [key, *chosen])
    ranges: dict[str, list[FieldComparison]] = {}
    for comparison in scope.comparisons or ():
        if comparison.op == "!=":
            test, bound = _differs(comparison, per_row=per_row, sql=sql)
            conditions.append(test)
            params.extend(bound)
        else:
            ranges.setdefault(field_key(comparison.key), []).append(comparison)
    for key, comparisons in ranges.items():
        test, bound = _in_range(key, comparisons, per_row=per_row, sql=sql)
        conditions.append(test)
        params.extend(bound)
    if scope.modified_after is not None:
        conditions.append("f.mtime_ns >= ?")
        params.append(_epoch_ns(scope.modified_after))
    if scope.modified_before is not None:
        conditions.append("f.mtime_ns < ?")
        params.append(_epoch_ns(scope.modified_before))
    where = " AND ".join(conditions) or sql.true
    where = where.replace("?", "%s") if dialect == "postgresql" else where
    if scope.inside is not None:
        inner, inner_params = scope_where(scope.inside, per_row=per_row, dialect=dialect)
        where, params = f"{where} AND ({inner})", [*params, *inner_params]
    return where, tuple(params)


def ascii_lower(text: str) -> str:
    """``text`` with its ASCII letters lower-cased, as both backends lower-case a path."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _differs(comparison: FieldComparison, *, per_row: bool, sql: _Dialect) -> tuple[str, list[object]]:
    """``key!=value``: the key is there and none of its rows holds the value (null-safe: a
    NULL, too long to compare, differs)."""
    test = f"count(*) > 0 AND NOT {sql.any}(m.value {sql.same} ?)"
    key, value = field_key(comparison.key), field_value(comparison.value)
    if per_row:
        return f"(SELECT {test} FROM frontmatter_fields m WHERE m.file_id = f.id AND {sql.hint}m.key = ?)", [value, key]
    return f"f.id IN (SELECT m.file_id FROM frontmatter_fields m WHERE m.key = ? GROUP BY m.file_id HAVING {test})", [key, value]


def _in_range(key: str, comparisons: list[FieldComparison], *, per_row: bool, sql: _Dialect) -> tuple[str, list[object]]:
    """The condition for the ordering comparisons on one key, which must all hold for one
    value: a note matches only with exactly one row for the key — a list (several rows) has
    no one value to put in order, and a range must not be met by two different items. (A
    list of one item is stored as that item, so it compares as one.)

    Dates are first tested as text, which is cheap: ISO dates sort as text by their day, and
    an offset moves a time by less than a day, so a value whose month is outside the bounds
    (two days wider than the range) cannot match. Listing every matching file (a narrow
    scope) then reads only the rows between the bounds on the (key, value) index — measured
    on 17k rows of one key, a month's range went from 31 ms to 5 ms — and a test of given
    files skips the time functions for most rows. Numbers have no such order as text."""
    tests: list[str] = []
    values: list[object] = []
    low: str | None = None
    high: str | None = None
    for comparison in comparisons:
        op = _ORDER.get(comparison.op)
        if op is None:
            raise QueryError(f"unknown comparison {comparison.op!r}", hint="use one of < <= > >= !=")
        either: list[str] = []
        if comparison.number is not None:
            either.append(f"{sql.number} {op} ?")
            values.append(float(comparison.number))
        if comparison.moment is not None:
            either.append(f"{sql.time} {op} ?")
            values.append(comparison.moment.timestamp())
        if not either:
            raise QueryError(f"frontmatter comparison {comparison.key!r} has neither a number nor a time to compare with")
        tests.append(either[0] if len(either) == 1 else f"({' OR '.join(either)})")
        if comparison.moment is not None and comparison.number is None:
            low, high = _text_bounds(comparison.moment, op, low, high)
    bounds = [(sql, bound) for sql, bound in (("m.value >= ?", low), ("m.value < ?", high)) if bound is not None]
    test = " AND ".join([*(sql for sql, _ in bounds), *tests])  # the cheap text test first: AND stops early
    params = [*(bound for _, bound in bounds), *values]
    if per_row:  # one aggregate over the file's rows of the key (the by-file index)
        return f"(SELECT count(*) = 1 AND {sql.any}({test}) FROM frontmatter_fields m WHERE m.file_id = f.id AND {sql.hint}m.key = ?)", [*params, key]
    alone = f"NOT EXISTS (SELECT 1 FROM frontmatter_fields o WHERE o.file_id = m.file_id AND o.key = m.key AND o.{sql.row_id} <> m.{sql.row_id})"
    return f"f.id IN (SELECT m.file_id FROM frontmatter_fields m WHERE m.key = ? AND {test} AND {alone})", [key, *params]


def _text_bounds(moment: datetime, op: str, low: str | None, high: str | None) -> tuple[str | None, str | None]:
    """Narrow ``[low, high)``, text bounds on stored values (``YYYY-MM``), by one date
    comparison; unchanged near the ends of the calendar."""
    try:
        if op in (">", ">="):
            day = (moment - timedelta(days=2)).astimezone(UTC)
            start = f"{day.year:04d}-{day.month:02d}"  # not strftime: it drops the zeros of year 1
            return (start if low is None else max(low, start)), high
        day = (moment + timedelta(days=2)).astimezone(UTC)
        end = f"{day.year + day.month // 12:04d}-{day.month % 12 + 1:02d}"  # the month after
        return low, (end if high is None else min(high, end))
    except OverflowError:
        return low, high


def _epoch_ns(moment: datetime) -> int:
    """Nanoseconds since the epoch, clamped to SQLite's 64-bit integers (years ~1678–2262)."""
    return max(-(2**63), min(2**63 - 1, int(moment.timestamp() * 1_000_000) * 1000))
