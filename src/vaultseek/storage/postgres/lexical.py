"""Full-text search in PostgreSQL: BM25 from the postings, matching chunks, terms and counts."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from ...records import SearchFilter
from ..db import fts5_tokens
from ..lexical import FREQUENCY_CACHE_LIMIT
from . import fulltext, postings
from .base import PgStoreBase


class PgLexicalSearch(PgStoreBase):
    """Full-text search as FTS5 does it, on the postings (``postings``): BM25, the chunks an
    expression matches, and the index terms (SQLite's own, ``fts5_tokens``) with how many
    chunks hold each (``terms_df``)."""

    _frequencies: dict[str, int]
    _pg_frequencies_as_of: int | None
    _note_chunks: tuple[tuple[str, int] | None, np.ndarray, int]

    def bm25(
        self, fts_query: str, limit: int, scope: SearchFilter | None = None, *, excluding: str | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score) best first, scored as FTS5 scores them (same terms, same
        column weights, same formula) from the postings of the query's terms
        (``postings.bm25``); ties broken by id. ``scope`` and ``excluding`` (the notes with a
        chunk that matches it) restrict the rows before the limit."""
        excluded = [] if excluding is None else self.note_chunks_matching(excluding)[0].tolist()
        return postings.bm25(self.pg, fulltext.parse(fts_query), limit, scope, self._term_frequencies, excluded)

    def chunks_matching(self, fts_query: str, limit: int = -1) -> np.ndarray:
        return np.asarray(postings.matching(self.pg, fulltext.parse(fts_query), limit), dtype=np.int64)

    def note_chunks_matching(self, fts_query: str) -> tuple[np.ndarray, int]:
        """As SQLite's; kept for the expression until any writer commits (a search asks for
        the set for its vector lists and again for BM25)."""
        as_of = (fts_query, self.data_version())
        if self._note_chunks[0] != as_of:
            ids, notes = postings.note_chunks(self.pg, fulltext.parse(fts_query))
            self._note_chunks = (as_of, np.asarray(ids, dtype=np.int64), notes)
        return self._note_chunks[1], self._note_chunks[2]

    def document_frequencies(self, texts: Sequence[str]) -> list[int]:
        """For each text, how many chunks contain its rarest index term (0 if it has none)."""
        term_sets = [set(fts5_tokens(text, query=True)) for text in texts]
        counts = self._term_frequencies(set().union(*term_sets))
        return [min((counts[term] for term in terms), default=0) for terms in term_sets]

    def word_frequencies(self, words: Sequence[str]) -> list[int]:
        if not words:
            return []
        terms = fts5_tokens(" ".join(words), query=True)
        if len(terms) != len(words):
            return self.document_frequencies(words)
        counts = self._term_frequencies(set(terms))
        return [counts[term] for term in terms]

    def _term_frequencies(self, terms: Collection[str]) -> dict[str, int]:
        """How many chunks hold each term, cached until any writer commits."""
        as_of = self.data_version()
        if as_of != self._pg_frequencies_as_of or len(self._frequencies) > FREQUENCY_CACHE_LIMIT:
            self._frequencies.clear()
            self._pg_frequencies_as_of = as_of
        known = self._frequencies
        missing = [term for term in terms if term not in known]
        if missing:
            known.update(dict.fromkeys(missing, 0))
            known.update(
                (term, max(int(df), 0))
                for term, df in self.pg.execute("SELECT term, df FROM terms_df WHERE term = ANY(%s)", (missing,))
            )
        return {term: known[term] for term in terms}

    def terms_starting(self, prefix: str, limit: int = -1) -> list[tuple[str, int]]:
        return [
            (term, int(df))
            for term, df in self.pg.execute(
                "SELECT term, df FROM terms_df WHERE term >= %s AND term < %s AND df > 0 ORDER BY term LIMIT %s",
                (prefix, prefix + "\U0010ffff", None if limit < 0 else limit),
            )
        ]

    def index_terms(self, text: str) -> list[str]:
        return fts5_tokens(text, query=True)
