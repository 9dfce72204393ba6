"""Search filters as people write them, and the matching rules they follow.

A filter (:class:`~vaultseek.records.SearchFilter`) limits a search to some files before
ranking. This module reads one from the JSON shape every surface shares — the CLI builds it
from flags, MCP and HTTP receive it — and raises :class:`QueryError` with a hint on anything it
cannot read::

    {"folders": ["work"], "tags": ["project/alpha"], "kinds": ["note", "pdf"],
     "where": ["status:done", "priority=1", "due<2026-03"], "modified_after": "7d",
     "modified_before": "2026-02-01", "paths": ["inbox.md"], "path_contains": ["meetings/"],
     "name_contains": ["2026-01"]}

It also owns the rule by which a frontmatter value matches: the sync stores each value through
:func:`field_value` and a query's value goes through the same function, so the two sides can
only disagree if the rule changes (which bumps ``sync.PIPELINE_VERSION``).

The rules, as docs/search.md states them:

* **Frontmatter** ``key:value`` (or ``key=value``; the key ends at the first operator).
  Keys are case-insensitive; a nested mapping's keys are joined with dots (``author.name``).
  Values compare case-insensitively with whitespace collapsed; numbers compare as numbers
  (``2`` = ``2.0`` = ``"2"``); booleans are ``true`` / ``false``; a list matches when any of
  its items does (``tags:project``); YAML dates compare as written (``2026-01-31``). A bare
  ``key`` matches notes that have the key with a non-empty value. Conditions on the same key
  are alternatives (OR); conditions on different keys must all hold (AND).
* **Comparisons** ``key>value``, ``key>=value``, ``key<value``, ``key<=value``: the key
  ends at the first operator (``:``, ``=``, ``<``, ``>``, ``!=``). The value is a number
  (compared as a number) or a date in the grammar of *modified* below (compared as a point in
  time; ``created>=30d`` is "created in the last 30 days"); a bare year such as ``2024`` is
  both, so it compares with numbers as a number and with dates as 1 January. A frontmatter
  value compares only with its own kind: numbers with numbers, dates (YAML dates, ISO text
  ``2024-03-05``, ``2024-03-05T10:00``, ``…+01:00``, ``2024-03``) with dates; a date without
  an offset is local time and ``YYYY-MM`` the first of the month — on both sides, as in
  ``after`` / ``before``, so ``created>=2024-01, created<2024-02`` is exactly January. A note
  whose value is a list, text, or the other kind, or that lacks the key, does not match. Text
  is refused rather than compared: nothing in a note says which order its words have (is
  ``high`` above ``low``? ``10`` above ``9`` as text?), and a misspelt date (``2024-13-01``,
  ``last week``) would otherwise compare as text and quietly find the wrong notes.
  ``key!=value`` is the opposite of ``key:value`` under the same value rules, for notes that
  have the key: none of its values (of a list: none of its items) is ``value``. Every
  comparison must hold, including two on one key (a range).
* **Modified** after / before: ``after`` is inclusive, ``before`` exclusive, so
  ``after 2026-01-01, before 2026-02-01`` is exactly January. A date means its midnight in
  local time; an ISO time may carry an offset (``2026-01-31T14:00+01:00``); ``YYYY-MM`` and
  ``YYYY`` mean the first day of the month / year; an age — ``12h``, ``7d``, ``2w``, ``3mo``,
  ``1y`` (a month is 30 days, a year 365) — counts back from now; ``today`` and
  ``yesterday`` are local midnights. Times are the files' modification times.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, cast

from ..config import FILE_KINDS
from ..errors import QueryError
from ..payload import encodable
from ..records import COMPARISON_OPS, ComparisonOp, FieldComparison, SearchFilter
from ..text.keys import NUMBER, field_key, field_value, number_text, tag_key

FIELDS = (
    "paths", "folders", "tags", "kinds", "where", "modified_after", "modified_before", "path_contains", "name_contains",
)  # fmt: skip
"""The keys of a filter's JSON shape."""
MAX_VALUES = 200
"""More values than this in one filter field are refused (a filter, not a file list)."""
_AGE = re.compile(
    r"(\d+(?:\.\d+)?)\s*(h|hours?|d|days?|w|weeks?|mo|months?|y|years?)", re.IGNORECASE
)
_AGE_UNITS = {"h": 1 / 24, "d": 1, "w": 7, "mo": 30, "y": 365}
_DATE_HINT = "use a date (2026-01-31), a time (2026-01-31T14:00), or an age (12h, 7d, 2w, 3mo, 1y)"
_WHERE_HINT = 'write frontmatter conditions as "key:value" (or key=value), e.g. status:done'
_COMPARE_HINT = (
    "a comparison takes a number or a date: priority<3, rating>=4.5, created>=2024-01, "
    "due<2026-01-31T12:00, created>=30d (the last 30 days); for text use key:value or key!=value"
)
_OPERATOR = re.compile(r"<=|>=|!=|[<>:=]")
"""Where a condition's key ends; ``<=`` is one operator, not ``<`` and a value ``=…``."""
_YEAR = re.compile(r"\d{4}")
_ORDER_OPS: dict[str, ComparisonOp] = {op: op for op in COMPARISON_OPS if op != "!="}


def parse_filter(data: Mapping[str, Any] | SearchFilter | None, *, now: float | None = None) -> SearchFilter:
    """The filter described by ``data`` (the JSON shape above); ``now`` (epoch seconds,
    default the current time) anchors relative dates. Raises :class:`QueryError`."""
    if isinstance(data, SearchFilter):
        return data
    if not data:
        return SearchFilter()
    if not isinstance(data, Mapping):
        raise QueryError("a filter must be an object", hint=f"known fields: {', '.join(FIELDS)}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise QueryError(
            f"unknown filter field(s): {', '.join(map(str, unknown))}",
            hint=f"known fields: {', '.join(FIELDS)}",
        )
    data = cast("Mapping[str, Any]", encodable(dict(data)))  # text no UTF-8 holds: see payload
    clock = time.time() if now is None else now
    values: dict[str, Any] = {}
    for name in ("paths", "folders", "tags", "kinds", "path_contains", "name_contains"):
        raw = _strings(name, data.get(name))
        if raw is not None:
            values[name] = tuple(_CLEAN[name](v) for v in raw)
    unknown = [kind for kind in values.get("kinds", ()) if kind not in FILE_KINDS]
    if unknown:
        raise QueryError(f"unknown kind {unknown[0]!r}", hint=f"use some of {', '.join(FILE_KINDS)}")
    where = data.get("where")
    if where is not None:
        pairs, comparisons = _where(where, now=clock)
        if pairs or not comparisons:  # an empty list matches nothing, as an empty category does
            values["where"] = pairs
        if comparisons:
            values["comparisons"] = comparisons
    for name in ("modified_after", "modified_before"):
        raw_time = data.get(name)
        if raw_time not in (None, ""):
            if not isinstance(raw_time, str):
                raise QueryError(f"filter field {name!r} must be text", hint=_DATE_HINT)
            values[name] = parse_time(raw_time, now=clock)
    after, before = values.get("modified_after"), values.get("modified_before")
    if after is not None and before is not None and after >= before:
        raise QueryError(
            f"modified after {after.isoformat(timespec='minutes')} and before "
            f"{before.isoformat(timespec='minutes')}: no time is both",
            hint="after is inclusive and before exclusive; swap them?",
        )
    return SearchFilter(**values)


def _strings(name: str, raw: Any) -> list[str] | None:
    """A field's values as a list of strings (one string is a list of one)."""
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, (list, tuple)) or not all(isinstance(v, str) for v in raw):
        raise QueryError(f"filter field {name!r} must be a list of strings")
    if len(raw) > MAX_VALUES:
        raise QueryError(f"filter field {name!r} has {len(raw)} values; at most {MAX_VALUES}")
    if any("\x00" in v for v in raw):
        raise QueryError(f"filter field {name!r} holds a NUL character")
    return list(raw)


_KIND_ALIASES = {
    "md": "note", "markdown": "note", "notes": "note", "xlsm": "xlsx", "tsv": "csv", "htm": "html",
    "yml": "yaml", "text": "txt",
}  # fmt: skip

_CLEAN = {
    "paths": lambda v: v.strip().replace("\\", "/").lstrip("/"),
    "folders": lambda v: v.strip().replace("\\", "/").strip("/"),
    "tags": lambda v: tag_key(v),
    "kinds": lambda v: _KIND_ALIASES.get(v.strip().lower().lstrip("."), v.strip().lower().lstrip(".")),
    "path_contains": lambda v: v.strip().replace("\\", "/"),
    "name_contains": lambda v: v.strip(),
}  # fmt: skip
"""Per-field clean-up: ``/work/`` is the folder ``work``, ``#a/b`` the tag ``a/b``, ``.PDF`` and
``md`` the kinds ``pdf`` and ``note``, ``a\\b`` in a path ``a/b``."""


def _where(raw: Any, *, now: float) -> tuple[tuple[tuple[str, str | None], ...], tuple[FieldComparison, ...]]:
    """``["status:done", "draft", "priority<3"]`` or ``{"status": "done", "priority": [1, 2]}``
    → (key, value) pairs and comparisons. The object form takes its keys and values literally
    (``{"a>b": "c"}`` is the key ``a>b``), so it holds only equalities."""
    pairs: list[tuple[str, str | None]] = []
    comparisons: list[FieldComparison] = []
    if isinstance(raw, Mapping):
        for key, value in raw.items():
            items = value if isinstance(value, (list, tuple)) else [value]
            if not isinstance(key, str) or not items:
                raise QueryError("each frontmatter condition needs a key and a value", hint=_WHERE_HINT)
            for item in items:
                if item is None or isinstance(item, (dict, list)):
                    raise QueryError(f"frontmatter condition {key!r}: a value must be text, a number or true/false")
                pairs.append((_key(key), field_value(item)))
    else:
        for text in _strings("where", raw) or []:
            condition = parse_where(text, now=now)
            if isinstance(condition, FieldComparison):
                comparisons.append(condition)
            else:
                pairs.append(condition)
    if len(pairs) + len(comparisons) > MAX_VALUES:
        raise QueryError(f"filter field 'where' has {len(pairs) + len(comparisons)} conditions; at most {MAX_VALUES}")
    return tuple(pairs), tuple(comparisons)


def parse_where(text: str, *, now: float | None = None) -> tuple[str, str | None] | FieldComparison:
    """``"Status: Done"`` → ``("status", "done")``; ``"draft"`` → ``("draft", None)`` (has the
    key); ``"priority<3"`` → a :class:`FieldComparison` (rules: the module docstring). The key
    ends at the first operator; ``now`` (epoch seconds, default the current time) anchors an
    age. A value may not start with another operator (``a>>b``, ``a=>3``, ``status:>2``): that
    is a misspelt comparison far more often than a value, and the object form still takes it."""
    match = _OPERATOR.search(text)
    key = _key(text[: match.start()] if match else text)
    if match is None:
        return key, None
    op, value = match.group(), text[match.end() :].strip()
    if not value:
        hint = _WHERE_HINT + "; a bare key means the key is set" if op in ":=" else _COMPARE_HINT
        raise QueryError(f"frontmatter condition {text!r} has no value", hint=hint)
    if value[0] in "<>=" or value.startswith("!="):  # ":rocket:" and "!urgent" are values
        raise QueryError(
            f"frontmatter condition {text!r} has two operators",
            hint="one of : = < <= > >= != between key and value, e.g. status:done, priority>=3, status!=done",
        )
    if op in ":=":
        return key, field_value(value)
    if op == "!=":
        return FieldComparison(key, "!=", field_value(value))
    return _comparison(key, _ORDER_OPS[op], value, text, now=time.time() if now is None else now)


def _comparison(key: str, op: ComparisonOp, value: str, text: str, *, now: float) -> FieldComparison:
    """``key OP value`` with the value read as a number, a date, or (a bare year) both."""
    if NUMBER.fullmatch(value):
        number = float(value)
        if not math.isfinite(number):
            raise QueryError(f"frontmatter condition {text!r}: {value} is too large a number", hint=_COMPARE_HINT)
        year = find_time(value, now=now) if _YEAR.fullmatch(value) else None
        if year is not None:
            return FieldComparison(key, op, value, number=number, moment=year)
        return FieldComparison(key, op, number_text(number), number=number)
    try:
        moment = find_time(value, now=now)
    except QueryError as exc:  # an age reaching back too far: say which condition
        raise QueryError(f"frontmatter condition {text!r}: {exc.message}", hint=exc.hint) from None
    if moment is None:
        raise QueryError(f"frontmatter condition {text!r}: cannot compare with {value!r}, not a number or a date", hint=_COMPARE_HINT)
    return FieldComparison(key, op, moment.isoformat(), moment=moment)


def _key(text: str) -> str:
    key = field_key(text)
    if not key:
        raise QueryError("a frontmatter condition needs a key", hint=_WHERE_HINT)
    return key


def parse_time(text: str, *, now: float) -> datetime:
    """A point in time from a date, an ISO time or an age (see the module docstring), as an
    aware datetime. Raises :class:`QueryError` with the accepted forms as the hint."""
    moment = find_time(text, now=now)
    if moment is None:
        raise QueryError(f"cannot read {text!r} as a date or an age", hint=_DATE_HINT)
    return moment


def find_time(text: str, *, now: float) -> datetime | None:
    """:func:`parse_time`, but None for text that is not a date or an age at all (a
    comparison then says what else it could have been); an age reaching back too far is
    still a :class:`QueryError`."""
    raw = text.strip()
    word = raw.lower()
    local_now = datetime.fromtimestamp(now).astimezone()
    midnight = local_now.replace(hour=0, minute=0, second=0, microsecond=0)
    if word in ("today", "yesterday"):
        return midnight - timedelta(days=1 if word == "yesterday" else 0)
    age = _AGE.fullmatch(raw)
    if age is not None:
        unit = age.group(2).lower()
        unit = "mo" if unit.startswith("mo") else unit[0]
        days = float(age.group(1)) * _AGE_UNITS[unit]
        if days > 365 * 1000:
            raise QueryError(f"{text!r} reaches back too far", hint=_DATE_HINT)
        return local_now - timedelta(days=days)
    expanded = raw
    if re.fullmatch(r"\d{4}", raw):
        expanded = f"{raw}-01-01"
    elif re.fullmatch(r"\d{4}-\d{2}", raw):
        expanded = f"{raw}-01"
    try:
        moment = datetime.fromisoformat(expanded) if re.match(r"\d{4}-\d{2}-\d{2}", expanded) else None
        if moment is not None and moment.tzinfo is None:
            moment = moment.astimezone()  # a time without an offset is local time
    except (ValueError, OverflowError, OSError):
        moment = None
    return moment
