"""Query intent: does a query name an identifier, or ask a question in words?

An identifier — ``_rrf_fuse``, ``HttpClient``, ``os.path.join``, ``src/cli.py``, ``v1.2.3``,
``E0425``, ``HTTP 404``, ``0x80070005`` — is found by its exact characters, which BM25 matches
and an embedding blurs; a long question in plain words is the opposite. With the ``intent``
search option on, fusion shifts its list weights by :data:`LEANS` accordingly; a query that is
neither keeps the configured weights. Off by default until the evaluation harness shows it
helps (docs/signals.md).

Detection is a handful of regular expressions over whitespace-separated tokens: cheap (a few
microseconds), predictable, and easy to test. A query with any identifier-like token leans
lexical even when it is phrased as a question ("why does E0425 happen"): the identifier is the
part only BM25 can match.
"""

from __future__ import annotations

import re
from typing import Literal

Intent = Literal["identifier", "question"]

LEANS: dict[str, dict[str, float]] = {
    "identifier": {"bm25": 1.5, "vector": 0.5},
    "question": {"bm25": 0.75, "vector": 1.5},
}
"""Multipliers on the fusion's list weights per intent. With the convex default (0.75 / 0.25)
an identifier query fuses at 0.9 / 0.1 of the total, a question at 0.6 / 0.4."""

QUESTION_WORDS = frozenset(
    "how what why when where which who whom whose can could should would is are does do did "
    "will explain describe wie was warum wann wo welche welcher wer kann".split()
)
LONG_QUERY_WORDS = 6
"""A query of at least this many plain words reads as a question even without a question word."""

_STRIP = "\"'`()[]{}<>,;!?"
_TOKEN_PATTERNS = (
    re.compile(r"_*[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)+_*|_+[A-Za-z0-9]\w*"),  # snake_case, _private, __init__
    re.compile(r"[A-Za-z]*[a-z][A-Z]\w*"),  # camelCase, PascalCase, HTTPServer's inner humps
    re.compile(r"[A-Z]{2,}[a-z]+[A-Za-z0-9]*"),  # HTTPServer, XMLParser
    re.compile(r"[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+(?:\(\))?"),  # os.path.join, config.toml, a.b()
    re.compile(r"\w+\([^()\s]*\)"),  # call(), fn(x)
    re.compile(r"(?:~|\.{1,2})?/[\w.\-/~]+|\w+(?:[/\\][\w.\-]+)*[/\\][\w\-]+\.\w+|[A-Za-z]:\\\S+"),  # paths
    re.compile(r"[vV]?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?"),  # v1.2.3, 3.11, 1.0.0-beta
    re.compile(r"[A-Z]{1,6}-?\d{3,}(?:-\d+)?"),  # E0425, ORA-00942, CVE-2021-44228
    re.compile(r"0[xX][0-9A-Fa-f]{2,}"),  # 0x80070005
    re.compile(r"--?[A-Za-z][\w-]*(?:=\S*)?"),  # --max-tokens, -k
)
_CODE_SPAN = re.compile(r"`[^`]+`")
_STATUS_CODE = re.compile(r"\b(?:https?|status|errno|error|exit(?:\s+code)?|code)\s*[-:#]?\s*\d{2,}\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")


def is_identifier(token: str) -> bool:
    """Whether one token (surrounding quotes and punctuation ignored) looks like code."""
    candidates = {token.strip("\"'`,;!?").rstrip(".:"), token.strip(_STRIP).rstrip(".:")}
    return any(p.fullmatch(c) for c in candidates if c for p in _TOKEN_PATTERNS)


def detect_intent(query: str) -> Intent | None:
    """``"identifier"``, ``"question"``, or None when the query is neither (short words)."""
    text = query.strip()
    if not text:
        return None
    if _CODE_SPAN.search(text) or _STATUS_CODE.search(text):
        return "identifier"
    tokens = text.split()
    if any(is_identifier(token) for token in tokens):
        return "identifier"
    words = _WORD.findall(text)
    if len(words) >= LONG_QUERY_WORDS:
        return "question"
    if len(words) >= 3 and (words[0].casefold() in QUESTION_WORDS or text.endswith("?")):
        return "question"
    return None
