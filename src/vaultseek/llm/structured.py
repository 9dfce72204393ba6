"""Model text → JSON data, tolerantly. Small local models wrap their JSON in Markdown fences,
chat around it, wrap an array in an object (or not), leave a trailing comma, or stop half-way
through. Nothing here ever raises on model text: every function returns what it could read
plus a list of problems (plain sentences, kept with the generated material).

The only text repair is ONE narrow one: a comma directly before a closing ``]`` or ``}``
(outside strings) is removed. A truncated array keeps its complete items; nothing is guessed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_FENCE = re.compile(r"^[ \t]*```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)(?:^[ \t]*```|\Z)", re.S | re.M)
"""A Markdown fence opens and closes at the start of a line: three backticks inside a JSON
string (a question about Markdown) are text, not a fence."""
_DECODER = json.JSONDecoder()


@dataclass
class Parsed:
    """What a reply held: the items found (each still to be validated) and what went wrong."""

    items: list[Any] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def strip_fences(text: str) -> str:
    """The inside of the first Markdown code fence, or the text itself when there is none."""
    match = _FENCE.search(text)
    return match.group(1) if match else text


def remove_trailing_commas(text: str) -> str:
    """The one repair: drop a comma followed (after whitespace) by ``]`` or ``}``, outside
    JSON strings."""
    out: list[str] = []
    in_string = escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j < len(text) and text[j] in "]}":
                i += 1
                continue
            out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _decode_at(text: str, pos: int) -> tuple[Any, str | None, bool]:
    """The JSON value starting at ``pos``: as it is, else after the trailing-comma repair,
    else (for an array) its complete leading elements. Returns (value, problem, found)."""
    try:
        return _DECODER.raw_decode(text, pos)[0], None, True
    except (ValueError, RecursionError):
        pass
    tail = text[pos:]
    repaired = remove_trailing_commas(tail)
    if repaired != tail:
        try:
            return _DECODER.raw_decode(repaired)[0], "a trailing comma was removed", True
        except (ValueError, RecursionError):
            pass
    if text[pos] == "[":
        salvaged = _salvage_array(repaired)
        if salvaged:
            return salvaged, f"the reply was cut off; {len(salvaged)} complete entries were kept", True
    return None, None, False


def _useful(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value))


def _salvage_array(text: str) -> list[Any]:
    """The complete elements of a JSON array that was cut off (or broken) part-way: each
    element is decoded in turn until one fails."""
    start = text.find("[")
    items: list[Any] = []
    if start < 0:
        return items
    pos = start + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return items
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return items
        items.append(value)
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos < len(text) and text[pos] == ",":
            pos += 1
        elif pos < len(text) and text[pos] != "]":
            return items


def load_value(text: str) -> tuple[Any, list[str]]:
    """The JSON value a reply meant, or ``None`` with the reason. The first array or object
    that holds objects wins; chatter like "[1]" before it is passed over."""
    if not isinstance(text, str) or not text.strip():
        return None, ["the model returned nothing"]
    problems: list[str] = []
    body = strip_fences(text)
    if body is not text:
        problems.append("the reply was wrapped in a code fence")
    fallback: tuple[Any, str | None] | None = None
    for match in re.finditer(r"[\[{]", body):
        value, problem, found = _decode_at(body, match.start())
        if not found:
            continue
        if _useful(value):
            return value, problems + ([problem] if problem else [])
        if fallback is None:
            fallback = (value, problem)
    if fallback is not None:
        return fallback[0], problems + ([fallback[1]] if fallback[1] else [])
    problems.append("the reply holds no complete JSON")
    return None, problems


def _looks_like_item(value: Any, item_keys: tuple[str, ...]) -> bool:
    return isinstance(value, dict) and any(key in value for key in item_keys)


def parse_items(text: str, wrapper: str, item_keys: tuple[str, ...]) -> Parsed:
    """A list of items from a reply that is a bare array, an object wrapping it (under
    ``wrapper`` or any other key holding a list), a single item, fenced, chatty, with a
    trailing comma, or cut off after some complete items."""
    value, problems = load_value(text)
    parsed = Parsed(problems=problems)
    if value is None:
        return parsed
    for _ in range(3):  # {"data": {"questions": [...]}} and the like
        if isinstance(value, list) or not isinstance(value, dict):
            break
        if _looks_like_item(value, item_keys):
            value = [value]
            parsed.problems.append("the reply held a single entry, not a list")
            break
        inner = value.get(wrapper)
        if inner is None:
            inner = next((v for v in value.values() if isinstance(v, (list, dict))), None)
        if inner is None:
            break
        value = inner
    if not isinstance(value, list):
        parsed.problems.append(f"the reply held no list of {wrapper}")
        return parsed
    parsed.items = list(value)
    return parsed


def parse_object(text: str, required: tuple[str, ...]) -> tuple[dict[str, Any] | None, list[str]]:
    """One object with the ``required`` keys, found at the top or one or two wrappers deep."""
    value, problems = load_value(text)
    for _ in range(3):
        if isinstance(value, dict) and all(key in value for key in required):
            return value, problems
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, dict)), None)
        elif isinstance(value, list) and value:
            value = value[0]
        else:
            break
    if value is not None or not problems:
        problems.append(f"the reply held no object with {', '.join(required)}")
    return None, problems


_FILLER_START = re.compile(
    r"^\s*(?:(?:sure|certainly|of course|absolutely|great question|okay|ok)\b[^\n]*\n|"
    r"(?:here(?: is|'s| are)|below is)\b[^\n]*:\s*\n)",
    re.I,
)
_FILLER_END = re.compile(
    r"\n[^\n]*\b(?:I hope (?:this|that) helps|hope this helps|let me know if|feel free to ask|"
    r"happy (?:learning|studying)|if you have any (?:more |other |further )?questions|"
    r"good luck with)[^\n]*\s*$",
    re.I,
)


def strip_filler(markdown: str) -> str:
    """A lesson without the model's chat around it: an opening "Sure! Here is…" line, a
    closing "I hope this helps!" line, and a fence around the whole text."""
    text = markdown.strip()
    fenced = re.fullmatch(r"```(?:markdown|md)?\s*\n(.*?)\n?```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    for _ in range(3):
        before = text
        text = _FILLER_START.sub("", text, count=1).lstrip()
        text = _FILLER_END.sub("", "\n" + text, count=1).strip()
        if text == before:
            break
    return text
