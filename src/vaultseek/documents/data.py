"""JSON and YAML data files, flattened to ``key.path: value`` lines before chunking.

``servers[0].host: db.internal`` is what a person searches for and what an embedding can
place; nested braces are neither. YAML is parsed by :mod:`vaultseek.notes.markdown` (PyYAML's one
owner), with its safe loader.

A data file is parsed whole, so it cannot be read in part: JSON over ``max_document_text_mb``
and YAML over :data:`MAX_YAML_BYTES` are refused, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..notes.markdown import load_yaml_documents
from .encoding import decode_head, decode_text
from .extraction import MB, DocumentError, ExtractContext, Extracted, Segment
from .limits import megabytes

MAX_VALUE_CHARS = 500
"""Longer string values are cut: a data file's blobs (base64, minified text) are not prose."""
MAX_LINES = 500_000
"""YAML aliases can make a small file expand without bound ("billion laughs"): stop there."""
MAX_YAML_BYTES = 4 * MB
"""PyYAML's safe loader takes about 50 times a file's size in memory, and seconds per MB."""


def read_json(data: bytes, context: ExtractContext) -> Extracted:
    text, more = decode_head(data, context.limits.max_text_chars)
    if more:
        raise DocumentError(_too_large("JSON", len(data), "max_document_text_mb", context.limits.max_text_chars))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    return _extracted([value])


def read_yaml(data: bytes, context: ExtractContext) -> Extracted:
    limit = min(MAX_YAML_BYTES, context.limits.max_text_chars)
    if len(data) > limit:
        raise DocumentError(_too_large("YAML", len(data), "the YAML limit", limit))
    try:
        documents = load_yaml_documents(decode_text(data))
    except ValueError as exc:
        raise DocumentError(f"not valid YAML ({exc})") from exc
    return _extracted(documents)


def _too_large(kind: str, size: int, limit_name: str, limit: int) -> str:
    return (
        f"{kind} file too large to parse ({megabytes(size)}, over {limit_name}, {megabytes(limit)}); "
        "a data file is parsed whole, so it is not read in part"
    )


def _extracted(documents: list[Any]) -> Extracted:
    lines: list[str] = []
    for document in documents:
        for line in flatten(document):
            lines.append(line)
            if len(lines) > MAX_LINES:
                raise DocumentError(f"too large once flattened (over {MAX_LINES:,} values)")
    return Extracted(segments=[Segment("\n".join(lines), structured=True)] if lines else [])


def flatten(value: Any, path: str = "") -> Iterator[str]:
    """``key.path: value`` lines, depth first, in the file's order (``list[0]`` for items)."""
    if isinstance(value, dict):
        if not value and path:
            yield f"{path}: {{}}"
        for key, item in value.items():
            yield from flatten(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        if not value and path:
            yield f"{path}: []"
        for index, item in enumerate(value):
            yield from flatten(item, f"{path}[{index}]")
    else:
        text = "null" if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
        text = " ".join(text.split())
        if len(text) > MAX_VALUE_CHARS:
            text = text[:MAX_VALUE_CHARS] + "…"
        yield f"{path}: {text}" if path else text
