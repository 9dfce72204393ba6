"""JSON that arrives from outside — an HTTP body, a hook's stdin, a daemon request, an MCP
line — read within a size and a depth limit, so that no input can make a reader recurse until
Python gives up (``RecursionError``) or hold more than it means to.

Python's parser recurses once per level and fails at about 1,000; the code that walks a value
afterwards (a hook quoting a tool's output, a request's checks) recurses too. No request any
surface takes nests beyond a few levels, and the tool outputs a hook quotes rarely beyond a few
dozen, so :data:`MAX_DEPTH` refuses only what no client sends. Standard library only: the agent
hooks import this on every prompt.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import QueryError

MAX_DEPTH = 128
"""The deepest nesting of arrays and objects read; deeper input is refused."""


def load_json(data: bytes | str, *, max_bytes: int, what: str = "the request") -> Any:
    """The JSON value in ``data``; raises :class:`QueryError` (naming ``what``) when it is
    larger than ``max_bytes``, not JSON (or not UTF-8), or nested deeper than
    :data:`MAX_DEPTH`."""
    if len(data) > max_bytes:
        raise QueryError(f"{what} is larger than {shown_size(max_bytes)}", hint="send less")
    try:
        value = json.loads(data)
    except RecursionError:
        raise QueryError(f"{what} is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # UnicodeDecodeError included
        raise QueryError(f"{what} is not valid JSON ({exc})") from None
    if _nested_deeper(value, data):
        raise QueryError(f"{what} is nested more than {MAX_DEPTH} levels deep")
    return value


def encodable(value: Any) -> Any:
    """``value`` with each lone surrogate in its text (and in its objects' keys) replaced by
    ``?``. JSON may escape one (``"\\ud83d"``, half an emoji) and a command-line argument holds
    one for each byte that is not UTF-8; no database, file or UTF-8 output can take it, so text
    that is stored or searched is made encodable where it comes in."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {encodable(key): encodable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [encodable(item) for item in value]
    return value


def shown_size(count: int) -> str:
    """A byte count as people write it: ``1 MB``, ``64 KB``, ``512 bytes`` (powers of 1,024)."""
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count:,} bytes"


def _nested_deeper(value: Any, text: bytes | str) -> bool:
    """Whether ``value`` nests more than :data:`MAX_DEPTH` levels (walked without recursion;
    skipped when its text does not hold that many brackets at all)."""
    if isinstance(text, bytes):
        brackets = text.count(b"[") + text.count(b"{")
    else:
        brackets = text.count("[") + text.count("{")
    if brackets <= MAX_DEPTH or not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
