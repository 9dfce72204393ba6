"""Full text on PostgreSQL with SQLite's terms: documents as ``tsvector`` values, FTS5 queries
as ``tsquery`` values and BM25 phrase lists.

The terms come from SQLite's own FTS5 tokenizer (``db.fts5_tokens``), so a chunk is indexed,
and a query is matched, exactly as the SQLite index does it. A row's three columns are laid
out one after the other in one ``tsvector``, the column told by each position's weight
(A text, B section, C heading context) and a gap of one position between columns, so no
phrase spans two of them.

The queries handled are those ``text.lexical`` and ``search.vocabulary`` write: quoted
phrases, each optionally followed by `` *`` (a prefix on its last token), joined by ``AND``
or ``OR``, and parenthesised groups of phrases joined by ``OR``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..db import fts5_tokens

WEIGHT_LETTERS = ("A", "B", "C")
MAX_POSITION = 16_383
"""PostgreSQL keeps positions up to this one (later ones are stored as it): chunks are far
shorter, so phrases match as in FTS5."""
MAX_LEXEME_BYTES = 2_000
"""A ``tsvector`` lexeme may hold 2,047 bytes; a longer token (a pasted blob) is counted in
the row's length but not stored: no query could name it."""


@dataclass(frozen=True, slots=True)
class Document:
    """A chunk's ``tsvector`` literal and its token count (FTS5's row length)."""

    terms: str
    length: int


def document(columns: tuple[str, str, str]) -> Document:
    """The ``tsvector`` of a chunk's (text, section, heading context) as searched."""
    positions: dict[str, list[str]] = {}
    position = 0
    length = 0
    for letter, text in zip(WEIGHT_LETTERS, columns, strict=True):
        tokens = fts5_tokens(text, query=False)
        length += len(tokens)
        for token in tokens:
            position += 1
            if len(token.encode("utf-8")) > MAX_LEXEME_BYTES:
                continue
            positions.setdefault(token, []).append(f"{min(position, MAX_POSITION)}{letter}")
        position += 1  # the gap between columns
    literal = " ".join(f"{_quote(token)}:{','.join(marks)}" for token, marks in positions.items())
    return Document(literal, length)


@dataclass(frozen=True, slots=True)
class Phrase:
    """One phrase of a query: its tokens as the index stores them, and whether the last one
    is a prefix."""

    tokens: tuple[str, ...]
    prefix: bool

    @property
    def tsquery(self) -> str:
        parts = [_quote(t) for t in self.tokens]
        if self.prefix:
            parts[-1] += ":*"
        return "(" + " <-> ".join(parts) + ")"

    @property
    def joined(self) -> str:
        return " ".join(self.tokens)


@dataclass(frozen=True, slots=True)
class Query:
    """An FTS5 query as PostgreSQL runs it: the ``tsquery`` that finds the rows, and every
    phrase, which BM25 scores one by one as FTS5 does (alternatives in a group included)."""

    tsquery: str
    phrases: tuple[Phrase, ...]

    @property
    def empty(self) -> bool:
        return not self.phrases


_PIECE = re.compile(r'\s*(?:(?P<open>\()|(?P<close>\))|(?P<op>AND|OR)\b|"(?P<phrase>[^"]*)"(?P<star>\s*\*)?)')


def parse(fts_query: str) -> Query:
    """Translate an FTS5 query of the shape described in the module docstring. A phrase
    with no token left (punctuation only) matches nothing, as in FTS5."""
    out: list[str] = []
    phrases: list[Phrase] = []
    at = 0
    text = fts_query.strip()
    while at < len(text):
        match = _PIECE.match(text, at)
        if match is None:
            raise ValueError(f"unsupported full-text query near {text[at:at + 20]!r}")
        at = match.end()
        if match.group("open"):
            out.append("(")
        elif match.group("close"):
            out.append(")")
        elif match.group("op"):
            out.append("&" if match.group("op") == "AND" else "|")
        else:
            prefix = match.group("star") is not None
            tokens = tuple(fts5_tokens(match.group("phrase"), query=True, prefix=prefix))
            if not tokens:
                out.append("' '")  # a lexeme no token can be: matches nothing
                continue
            phrase = Phrase(tokens, prefix)
            phrases.append(phrase)
            out.append(phrase.tsquery)
        while at < len(text) and text[at] == " ":
            at += 1
    return Query(" ".join(out), tuple(phrases))


def _quote(token: str) -> str:
    """A lexeme as ``tsvector``/``tsquery`` input reads it verbatim."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"
