"""The keys notes are stored under and queries are compared by, one rule for both sides.

The indexer stores a note's frontmatter values, tags and names through these functions and
a search normalises what it is given through the same ones, so the two can only disagree
when a rule here changes (which bumps ``index.sync.PIPELINE_VERSION``). The rules are those
of :mod:`vaultseek.search.filters` (frontmatter and tags) and :mod:`vaultseek.search.signals`
(names).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from pathlib import PurePosixPath
from typing import Any

MAX_VALUE_CHARS = 200
"""Frontmatter values longer than this are stored as present but never equal to anything:
a filter compares short values (status, project, a date), not paragraphs."""
MAX_FIELDS_PER_NOTE = 500
"""At most this many (key, value) rows are stored for one note's frontmatter."""

WHITESPACE = re.compile(r"\s+")
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SEPARATORS = re.compile(r"[\s_\-]+")
_EDGE_PUNCTUATION = " \t\"'`[](){}<>?!.,:;#*|"



def field_key(key: str) -> str:
    """A frontmatter key as stored and compared: trimmed, case-folded."""
    return WHITESPACE.sub(" ", key).strip().casefold()


def field_value(value: Any) -> str:
    """A frontmatter value as stored and compared (see the module docstring)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number_text(value) if math.isfinite(value) else str(value).casefold()
    text = unicodedata.normalize("NFC", WHITESPACE.sub(" ", str(value)).strip()).casefold()
    if NUMBER.fullmatch(text):
        number = float(text)
        if math.isfinite(number):
            return number_text(number)
    return text


def number_text(number: float) -> str:
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)


def tag_key(tag: str) -> str:
    """A tag as stored and compared: without ``#`` and trailing ``/``, case-folded."""
    return unicodedata.normalize("NFC", tag.strip().lstrip("#").rstrip("/")).casefold()


def tag_keys(tags: Iterable[str]) -> list[str]:
    """The keys a note's tags are stored as: each tag and each of its parents (``a/b`` gives
    ``a`` and ``a/b``), so the filter ``a`` finds ``#a/b`` by equality."""
    keys: dict[str, None] = {}
    for tag in tags:
        parts = [p for p in tag_key(tag).split("/") if p]
        for end in range(1, len(parts) + 1):
            keys["/".join(parts[:end])] = None
    return list(keys)


def frontmatter_fields(meta: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """The (key, value) rows a note's frontmatter is stored as: one per scalar (each item of
    a list), nested keys joined with dots; a value too long to match is stored as ``None``
    (the key is still present), empty ones not at all. Duplicates are dropped."""
    rows: dict[tuple[str, str | None], None] = {}
    for key, value in _leaves(meta, ""):
        if value is None or value == "" or len(rows) >= MAX_FIELDS_PER_NOTE:
            continue
        text = field_value(value)
        rows[(key, text if len(text) <= MAX_VALUE_CHARS else None)] = None
    return list(rows)


def _leaves(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = field_key(str(key))
            if name:
                yield from _leaves(item, f"{prefix}.{name}" if prefix else name)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item, prefix)
    elif prefix:
        yield prefix, value


def name_key(text: str) -> str:
    """A title, alias, file name or query in the form names are compared in: case, accents,
    runs of spaces, ``-`` and ``_``, and surrounding punctuation (``[[…]]``, quotes, a
    trailing ``?``) do not count; inner punctuation does (``C++``, ``node.js``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SEPARATORS.sub(" ", bare.casefold().strip(_EDGE_PUNCTUATION)).strip(_EDGE_PUNCTUATION)


def note_names(title: str, aliases: tuple[str, ...], path: str) -> list[str]:
    """The distinct name keys a file is known by: title, aliases, file name without suffix."""
    names = [title, *aliases, PurePosixPath(path).stem]
    return [key for key in dict.fromkeys(name_key(n) for n in names) if key]
