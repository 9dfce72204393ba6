"""Full text on PostgreSQL with SQLite's terms: documents as postings, FTS5 queries as phrase
lists and the boolean shape that joins them.

The terms come from SQLite's own FTS5 tokenizer (``db.fts5_tokens``), so a chunk is indexed,
and a query is matched, exactly as the SQLite index does it. A row's three columns (text,
section, heading context) are laid out one after the other, with a gap of one position
between columns so no phrase spans two of them; each term of the row becomes one posting —
how often it occurs in each column and its positions, ascending — which ``postings.py``
stores and ranks.

The queries handled are those ``text.lexical`` and ``search.vocabulary`` write: quoted
phrases, each optionally followed by `` *`` (a prefix on its last token), joined by ``AND``
or ``OR``, and parenthesised groups of phrases joined by ``OR``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..db import fts5_tokens

COLUMNS = 3
"""Text, section, heading context: the order of the columns in a row and in a posting."""
MAX_LEXEME_BYTES = 2_000
"""A longer token (a pasted blob) is counted in the row's length but not stored: no query
could name it, and a B-tree entry holds at most about 2,700 bytes."""


@dataclass(frozen=True, slots=True)
class Posting:
    """One term of one chunk: its count in each column and its positions, ascending (the
    first ``counts[0]`` in the text, the next ``counts[1]`` in the section, the rest in the
    heading context)."""

    term: str
    counts: tuple[int, int, int]
    positions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Document:
    """A chunk's postings and its token count (FTS5's row length)."""

    postings: tuple[Posting, ...]
    length: int


def document(columns: tuple[str, str, str]) -> Document:
    """The postings of a chunk's (text, section, heading context) as searched."""
    found: dict[str, tuple[list[int], list[int]]] = {}
    position = 0
    length = 0
    for column, text in enumerate(columns):
        tokens = fts5_tokens(text, query=False)
        length += len(tokens)
        for token in tokens:
            position += 1
            entry = found.get(token)
            if entry is None:
                if len(token) * 4 > MAX_LEXEME_BYTES and len(token.encode("utf-8")) > MAX_LEXEME_BYTES:
                    continue
                entry = found[token] = ([0] * COLUMNS, [])
            entry[0][column] += 1
            entry[1].append(position)
        position += 1  # the gap between columns
    postings = tuple(Posting(term, (n[0], n[1], n[2]), tuple(at)) for term, (n, at) in found.items())
    return Document(postings, length)


@dataclass(frozen=True, slots=True)
class Phrase:
    """One phrase of a query: its tokens as the index stores them, and whether the last one
    is a prefix."""

    tokens: tuple[str, ...]
    prefix: bool


Shape = tuple[str | int, ...]
"""A query's boolean form: phrase numbers (0-based, into :attr:`Query.phrases`) and the words
``(``, ``)``, ``AND``, ``OR`` and ``FALSE`` (a phrase no token is left of), with FTS5's
precedence (``AND`` before ``OR``), which is SQL's too."""


@dataclass(frozen=True, slots=True)
class Query:
    """An FTS5 query as PostgreSQL runs it: every phrase, which BM25 scores one by one as
    FTS5 does (alternatives in a group included), and the boolean shape a row must fit."""

    phrases: tuple[Phrase, ...]
    shape: Shape

    @property
    def empty(self) -> bool:
        return not self.phrases

    @property
    def operators(self) -> frozenset[str]:
        """The words of the shape (``AND``, ``OR``, ``FALSE``, parentheses)."""
        return frozenset(part for part in self.shape if isinstance(part, str))


_PIECE = re.compile(r'\s*(?:(?P<open>\()|(?P<close>\))|(?P<op>AND|OR)\b|"(?P<phrase>[^"]*)"(?P<star>\s*\*)?)')


def parse(fts_query: str) -> Query:
    """Translate an FTS5 query of the shape described in the module docstring. A phrase
    with no token left (punctuation only) matches nothing, as in FTS5."""
    shape: list[str | int] = []
    phrases: list[Phrase] = []
    at = 0
    text = fts_query.strip()
    while at < len(text):
        match = _PIECE.match(text, at)
        if match is None:
            raise ValueError(f"unsupported full-text query near {text[at:at + 20]!r}")
        at = match.end()
        if match.group("open"):
            shape.append("(")
        elif match.group("close"):
            shape.append(")")
        elif match.group("op"):
            shape.append(match.group("op"))
        else:
            prefix = match.group("star") is not None
            tokens = tuple(fts5_tokens(match.group("phrase"), query=True, prefix=prefix))
            if not tokens:
                shape.append("FALSE")
                continue
            shape.append(len(phrases))
            phrases.append(Phrase(tokens, prefix))
        while at < len(text) and text[at] == " ":
            at += 1
    return Query(tuple(phrases), tuple(shape))
