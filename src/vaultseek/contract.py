"""The search contract: what a search request may ask, and how it is checked.

Every surface — ``vaultseek search`` (its flags and ``--batch`` lines), the daemon's ``search``
op, MCP's ``search`` tool and HTTP ``/api/search`` — turns its input into one
:class:`SearchRequest` and answers with :meth:`SearchResponse.to_dict
<vaultseek.records.SearchResponse.to_dict>`, so one search is one JSON object in and one out,
and a request one surface refuses, every surface refuses in the same words.

A request as JSON (only ``query`` is required; ``null`` means "not given")::

    {"query": "rotate refresh tokens", "mode": "hybrid", "view": "notes", "k": 10,
     "max_tokens": null,
     "filters": {"folders": ["work"], "where": ["status:done"], "modified_after": "7d"},
     "syntax": true, "title_match": true, "recency_half_life_days": 30, "intent": false,
     "term_match": 0.3, "link_boost": 0, "link_signal": "backlinks",
     "fusion": "convex", "candidates": 100, "deep_weight": 1.0, "rerank": false, "expand": false}

``query`` holds 1 to :data:`MAX_QUERY_CHARS` characters, not all blank or control characters (a
query of only NULs, escapes or zero-width spaces is empty), and its operators (``"phrase"``,
``-word``, ``tag:x``; :mod:`~vaultseek.search.syntax`) are read when the request is made, unless
``syntax`` is false; ``view`` is ``notes`` (the default: one result per file, with its best
sections) or ``chunks`` (every ranked section on its own); ``k`` is 1 to :data:`MAX_K` results
of the view; ``filters`` is the shape :func:`~vaultseek.search.filters.parse_filter` reads. The
ranking options left out (or ``null``) take the index's configuration. ``fusion``,
``candidates`` and ``deep_weight`` exist for the evaluation harness, which compares them.
``rerank`` and ``expand`` turn the configured reranker and query expansion (``rerank``,
``expand`` settings) on or off for one search.

This module sits just above the read path's packages (it reads filters with their parser)
and below the engine, which takes a :class:`SearchRequest`.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .config import FUSION_METHODS
from .errors import QueryError
from .payload import encodable
from .records import SEARCH_MODES, SEARCH_VIEWS, SearchFilter, SearchMode, SearchView
from .search.filters import FIELDS as FILTER_FIELDS
from .search.filters import parse_filter
from .search.linkgraph import LINK_SIGNALS
from .search.syntax import may_have_operators, parse_syntax

MAX_K = 100
"""The most results one search returns. Enough for an evaluation at depth 100 and for any
agent; a larger k would only make the ranked lists longer than their candidates."""
MAX_QUERY_CHARS = 8_000
"""The longest query, in characters: a whole prompt or chat question fits (the study app's
questions stop at the same length); the lexical side reads at most 64 distinct words of it."""
MAX_CANDIDATES = 1_000
"""The deepest list (BM25, vector, deep) one search may ask each side for."""

REQUEST_FIELDS = (
    "query", "mode", "view", "k", "max_tokens", "filters", "syntax", "title_match", "recency_half_life_days",
    "intent", "term_match", "link_boost", "link_signal", "fusion", "candidates", "deep_weight", "rerank", "expand",
)  # fmt: skip
"""Every key a request mapping may hold, in the order the schema and the hints list them."""

_WHOLE = ("k", "max_tokens", "candidates")
_NUMBERS = ("recency_half_life_days", "term_match", "link_boost", "deep_weight")
_FLAGS = ("syntax", "title_match", "intent", "rerank", "expand")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search, checked: constructing one (directly, or through :meth:`from_mapping` or
    :meth:`create`) raises :class:`QueryError` with a hint for anything out of range or of the
    wrong type. ``None`` leaves an option to the index's configuration."""

    query: str
    mode: SearchMode = "hybrid"
    view: SearchView = "notes"
    """``notes``: one result per file with its best sections; ``chunks``: every ranked section
    on its own (what the agent hooks and the study chat's passages read)."""
    k: int | None = None
    """How many results of the view — notes or sections — 1 to :data:`MAX_K` (None: the
    configured ``top_k``)."""
    max_tokens: int | None = None
    """Keep results, best first, while they fit in this many tokens (4 characters each)."""
    filters: SearchFilter | None = None
    """Which files may be returned, applied before ranking (None: all)."""
    syntax: bool | None = None
    """Read the query's operators (None: yes); false for text that is not a typed query (an
    agent's prompt, a chat question), where every word is text."""
    title_match: bool | None = None
    recency_half_life_days: float | None = None
    """0 turns recency off."""
    intent: bool | None = None
    term_match: float | None = None
    """0 to 1; 0 turns term matching off."""
    link_boost: float | None = None
    link_signal: str | None = None
    fusion: str | None = None
    candidates: int | None = None
    deep_weight: float | None = None
    rerank: bool | None = None
    """Re-score the best results with the configured reranker (None: the ``rerank`` setting,
    on unless it is "off"); true with none configured answers with a notice."""
    expand: bool | None = None
    """Search the chat model's sub-queries too (None: the ``expand`` setting)."""
    now: float | None = None
    """The moment (epoch seconds) recency counts from and relative filter dates were read at
    (None: the index's clock). Not part of the JSON request."""

    def __post_init__(self) -> None:
        query = self.query
        if not isinstance(query, str):
            raise QueryError(f"the query must be text (got {shown(query)})", hint=_QUERY_HINT)
        object.__setattr__(self, "query", encodable(query))  # a broken terminal's half characters
        if not _searchable(query):
            raise QueryError("the query is empty", hint=_QUERY_HINT)
        if len(query) > MAX_QUERY_CHARS:
            raise QueryError(
                f"the query is longer than {MAX_QUERY_CHARS} characters ({len(query)})",
                hint="its most telling words are enough",
            )
        if self.mode not in SEARCH_MODES:
            raise QueryError(f"unknown search mode {shown(self.mode)}", hint=f"use one of {', '.join(SEARCH_MODES)}")
        if self.view not in SEARCH_VIEWS:
            raise QueryError(
                f"unknown search view {shown(self.view)}",
                hint="use notes (one result per file, with its best sections) or chunks (every section on its own)",
            )
        _whole("k", self.k, 1, MAX_K, "how many results to return")
        _whole("max_tokens", self.max_tokens, 1, None, "the token budget of the whole answer, e.g. 500")
        _whole("candidates", self.candidates, 1, MAX_CANDIDATES, "how deep each ranked list goes before fusion")
        for name in _FLAGS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                raise QueryError(f"{name} must be true or false (got {shown(value)})")
        _number("recency_half_life_days", self.recency_half_life_days, "a half-life in days, at least 0",
                upper=None, hint="e.g. 30; 0 turns recency off")  # fmt: skip
        _number("term_match", self.term_match, "a number from 0 to 1", upper=1.0, hint="0 turns term matching off")
        _number("link_boost", self.link_boost, "at least 0", upper=None, hint="e.g. 0.5; 0 turns it off")
        _number("deep_weight", self.deep_weight, "at least 0", upper=None, hint="the deep list's weight in fusion; 0 leaves it out")
        _choice("link_signal", self.link_signal, LINK_SIGNALS)
        _choice("fusion", self.fusion, FUSION_METHODS)
        if self.filters is not None and not isinstance(self.filters, SearchFilter):
            raise QueryError("filters must be a SearchFilter (use SearchRequest.create for the JSON shape)")
        if self.now is not None and (isinstance(self.now, bool) or not isinstance(self.now, (int, float))):
            raise QueryError(f"now must be epoch seconds (got {shown(self.now)})")
        if self.syntax is not False and may_have_operators(self.query):  # refused here, before any search
            parse_syntax(self.query, now=self.now)

    @classmethod
    def create(
        cls,
        query: str,
        *,
        filters: SearchFilter | Mapping[str, Any] | None = None,
        now: float | None = None,
        **options: Any,
    ) -> SearchRequest:
        """A request from keyword options (the fields of this class), with ``filters`` as a
        :class:`SearchFilter` or the JSON shape; relative dates in it count back from ``now``
        (default: the current time). An unknown option is a TypeError: a programming error."""
        scope = None if filters is None else parse_filter(filters, now=now)
        return cls(query, filters=scope, now=now, **options)

    @classmethod
    def from_mapping(cls, data: Any, *, now: float | None = None) -> SearchRequest:
        """The request a JSON object describes (the module docstring's shape). Raises
        :class:`QueryError` for a key it does not know, a missing or empty query, a value of
        the wrong type or out of range — never anything else."""
        if not isinstance(data, Mapping):
            raise QueryError("a search request must be a JSON object", hint='e.g. {"query": "rotate tokens", "k": 5}')
        unknown = sorted(str(key) for key in data if key not in REQUEST_FIELDS)
        if unknown:
            raise QueryError(f"unknown search field(s): {', '.join(unknown)}", hint=f"known fields: {', '.join(REQUEST_FIELDS)}")
        if data.get("query") is None:
            raise QueryError('a search needs a "query"', hint=_QUERY_HINT)
        options = {key: value for key, value in data.items() if value is not None}
        return cls.create(options.pop("query"), now=now, **options)

    def to_mapping(self) -> dict[str, Any]:
        """The JSON request :meth:`from_mapping` reads back to an equal request (options left
        to the configuration are left out; relative filter dates are written as the moments
        they were read as, so a request forwarded later means the same files)."""
        out: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "now" or value is None:
                continue
            out[item.name] = value.to_dict() if isinstance(value, SearchFilter) else value
        return out


def _searchable(query: str) -> bool:
    """Whether ``query`` holds anything to look for: a character that is neither blank nor a
    control or format character (NUL, escape, a zero-width space, a bidi mark), which the
    search would drop — a query of only those is empty, on every surface."""
    return any(not char.isspace() and unicodedata.category(char) not in _UNSEARCHABLE for char in query)


_UNSEARCHABLE = ("Cc", "Cf")
_QUERY_HINT = 'give the words to look for, e.g. {"query": "rotate refresh tokens"}'


def text_fields(values: Mapping[str, str]) -> dict[str, Any]:
    """Request fields given as text (a URL's query string) as JSON values: whole numbers for
    ``k``, ``max_tokens`` and ``candidates``, numbers for the weights and the half-life,
    ``1``/``true``/``yes``/``on`` and ``0``/``false``/``no``/``off`` for the flags; an empty
    value is "not given". Text that does not read as its type stays text, so the request
    refuses it with the message a JSON caller would get."""
    return {name: _text_value(name, raw) for name, raw in values.items()}


def _text_value(name: str, raw: str) -> Any:
    if name not in (*_WHOLE, *_NUMBERS, *_FLAGS):
        return raw
    text = raw.strip()
    if not text:
        return None
    if name in _FLAGS:
        word = text.lower()
        return word in _TRUE if word in (*_TRUE, *_FALSE) else text
    try:
        return int(text) if name in _WHOLE else float(text)
    except ValueError:
        return text


def request_schema() -> dict[str, Any]:
    """The request as a JSON Schema (MCP publishes it as the search tool's input)."""
    text_or_list = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
    filter_fields: dict[str, Any] = {
        name: {"type": "string"} if name.startswith("modified_") else dict(text_or_list) for name in FILTER_FIELDS
    }

    def number(description: str, upper: float | None = None) -> dict[str, Any]:
        bounds = {"minimum": 0} | ({"maximum": upper} if upper is not None else {})
        return {"anyOf": [{"type": "number", **bounds}, {"type": "null"}], "default": None, "description": description}

    def optional(kind: dict[str, Any], description: str) -> dict[str, Any]:
        return {"anyOf": [kind, {"type": "null"}], "default": None, "description": description}

    properties: dict[str, Any] = {
        "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": "what to look for"},
        "mode": {"type": "string", "enum": list(SEARCH_MODES), "default": "hybrid"},
        "view": {
            "type": "string", "enum": list(SEARCH_VIEWS), "default": "notes",
            "description": "notes: one result per file with its best sections; chunks: every ranked section on its own",
        },
        "k": optional({"type": "integer", "minimum": 1, "maximum": MAX_K}, "how many results of the view (default: the server's top_k)"),
        "max_tokens": optional({"type": "integer", "minimum": 1}, "fit the whole answer in about this many tokens"),
        "filters": optional(
            {"type": "object", "properties": filter_fields, "additionalProperties": False},
            "narrow the search before ranking: fields AND, the values of one field OR",
        ),
        "syntax": optional(
            {"type": "boolean"},
            'read the query\'s operators: "exact phrase", -word, -"a phrase", prefix*, tag:x or #x, path:x, '
            "file:x, kind:pdf, after:2w, before:2026-01, [key:value], [key>3] (default true; false: every word is text)",
        ),
        "title_match": optional({"type": "boolean"}, "a note whose title or alias is the query goes first"),
        "recency_half_life_days": number("favour recently modified files (days; 0: off)"),
        "intent": optional({"type": "boolean"}, "lean on exact words for identifiers, on meaning for questions"),
        "term_match": number("re-rank the best results by how well their words match the query's (0: off)", 1.0),
        "link_boost": number("re-rank by the link graph (0: off)"),
        "link_signal": optional({"type": "string", "enum": list(LINK_SIGNALS)}, "the link signal link_boost weighs"),
        "fusion": optional({"type": "string", "enum": list(FUSION_METHODS)}, "how the ranked lists are combined"),
        "candidates": optional({"type": "integer", "minimum": 1, "maximum": MAX_CANDIDATES}, "how deep each list goes"),
        "deep_weight": number("the deep list's weight in fusion (0: leave it out)"),
        "rerank": optional({"type": "boolean"}, "re-score the best results with the reranker the user configured (default: its setting)"),
        "expand": optional({"type": "boolean"}, "also search a chat model's sub-queries of the query (default: the expand setting)"),
    }
    assert tuple(properties) == REQUEST_FIELDS
    return {"type": "object", "properties": properties, "required": ["query"], "additionalProperties": False}


def shown(value: Any) -> str:
    """A value as JSON, cut short: what the caller sent, in the caller's notation."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _whole(name: str, value: Any, lower: int, upper: int | None, hint: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < lower or (upper is not None and value > upper):
        span = f" from {lower} to {upper}" if upper is not None else f", at least {lower}"
        raise QueryError(f"{name} must be a whole number{span} (got {shown(value)})", hint=hint)


def _number(name: str, value: Any, what: str, *, upper: float | None, hint: str) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
        or value < 0 or (upper is not None and value > upper)
    ):  # fmt: skip
        raise QueryError(f"{name} must be {what} (got {shown(value)})", hint=hint)


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        raise QueryError(f"{name} must be one of {', '.join(allowed)} (got {shown(value)})")
