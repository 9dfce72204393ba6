"""Full-text search in SQLite: FTS5 BM25, the chunks a query matches, index terms and counts."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

import numpy as np

from ..records import SearchFilter
from .base import _batches, _marks
from .db import FTS5_TOKENIZE_QUERY, FTS5Tokenizer
from .migrations import FTS_TOKENIZER
from .scope_masks import Scopes

BM25_WEIGHTS = (1.0, 0.5, 0.3)
"""FTS5 column weights for chunk text, section heading and heading context."""
FREQUENCY_CACHE_LIMIT = 100_000
"""Term counts a store keeps between searches (see ``Store._term_frequencies``): a few MB."""


class LexicalSearch(Scopes):
    """The FTS5 index ``chunks_fts``: BM25 within a scope (each match tested against the
    scope's mask, :class:`Scopes`), the chunks an expression matches, and the index's terms
    and how many chunks hold each."""

    _tokenize: FTS5Tokenizer | None
    _excluding: tuple[tuple[str, int, int] | None, int]
    _frequencies: dict[str, int]
    _frequencies_as_of: tuple[int, int] | None

    def bm25(
        self, fts_query: str, limit: int, scope: SearchFilter | None = None, *, excluding: str | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score) best first, by FTS5 BM25 with column weights text 1.0,
        section 0.5, heading context 0.3; higher is better (FTS5's own sign is flipped);
        ties broken by id so the order is stable. ``scope`` restricts the rows before the
        limit, so every hit is inside it, and so does ``excluding``, an FTS5 expression: no
        hit comes from a file with a chunk that matches it (:meth:`note_chunks_matching`).

        A scoped query joins each full-text match to its chunk and file (``CROSS JOIN`` keeps
        the full-text index the outer loop): the scope costs a lookup per match, whatever
        its size. (``rowid IN (chunks in scope)`` was measured at seconds on 50k chunks: FTS5
        ran the match once per listed rowid. ``rowid NOT IN`` a table keyed by chunk id is no
        constraint FTS5 can use, so it is one lookup per match: nothing measurable.)"""
        params: tuple[object, ...]
        without = ""
        if excluding is not None:
            self._exclude(excluding)
            without = " AND chunks_fts.rowid NOT IN temp.excluded_chunks"
        if scope is None or scope.unrestricted:
            sql, params = (
                "SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS score FROM chunks_fts "
                f"WHERE chunks_fts MATCH ?{without} ORDER BY score, rowid LIMIT ?"
            ), (*BM25_WEIGHTS, fts_query, limit)
        else:
            mask = self.scope_mask(scope)
            self._scope_function()
            sql, params = (
                "SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS score FROM chunks_fts "
                f"WHERE chunks_fts MATCH ?{without} AND vaultseek_in_scope(?, rowid) ORDER BY score, rowid LIMIT ?"
            ), (*BM25_WEIGHTS, fts_query, mask.key, limit)
        return [(row[0], -row[1]) for row in self.conn.execute(sql, params)]

    def chunks_matching(self, fts_query: str, limit: int = -1) -> np.ndarray:
        """The ids of the chunks that match ``fts_query`` (an FTS5 expression), ascending; the
        first ``limit`` of them (-1: all)."""
        found = self.conn.execute(
            "SELECT json_group_array(rowid) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid LIMIT ?)",
            (fts_query, limit),
        ).get
        return np.asarray(json.loads(found), dtype=np.int64)

    def note_chunks_matching(self, fts_query: str) -> tuple[np.ndarray, int]:
        """The ids of every chunk of the files (notes) with a chunk that matches
        ``fts_query``, ascending, and how many such files there are — the chunks
        ``bm25(excluding=fts_query)`` leaves out."""
        self._exclude(fts_query)
        found = self.conn.execute("SELECT json_group_array(id) FROM temp.excluded_chunks").get
        return np.asarray(json.loads(found), dtype=np.int64), self._excluding[1]

    def _exclude(self, fts_query: str) -> None:
        """Fill ``temp.excluded_chunks`` with :meth:`note_chunks_matching`'s chunks, unless it
        holds them for this expression and no connection wrote since: a search asks for the
        set once for its vector lists and once or twice for BM25, and SQL reads it in place.
        (Passed to each statement as JSON instead, 25k ids cost ~5 ms a statement.)"""
        if self._excluding[0] == (fts_query, self.data_version(), self.total_changes()):
            return
        before = int(self.conn.total_changes())
        self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS excluded_chunks (id INTEGER PRIMARY KEY)")
        self.conn.execute("DELETE FROM temp.excluded_chunks")
        self.conn.execute(
            "INSERT INTO temp.excluded_chunks SELECT c.id FROM chunks c WHERE c.file_id IN "
            "(SELECT m.file_id FROM chunks_fts CROSS JOIN chunks m ON m.id = chunks_fts.rowid WHERE chunks_fts MATCH ?)",
            (fts_query,),
        )
        self._temp_changes += int(self.conn.total_changes()) - before
        notes = int(self.conn.execute("SELECT count(DISTINCT c.file_id) FROM temp.excluded_chunks x JOIN chunks c ON c.id = x.id").get)
        self._excluding = ((fts_query, self.data_version(), self.total_changes()), notes)

    def document_frequencies(self, texts: Sequence[str]) -> list[int]:
        """For each text, how many chunks contain its rarest index term (0 if it has none).

        Texts go through the index's own tokenizer (stemming included), so the terms are
        exactly those FTS5 stores; counts come from an ``fts5vocab`` view of the index."""
        term_sets = [set(self._index_terms(text)) for text in texts]
        counts = self._term_frequencies(set().union(*term_sets))
        return [min((counts[term] for term in terms), default=0) for terms in term_sets]

    def word_frequencies(self, words: Sequence[str]) -> list[int]:
        """For each single word (letters and digits only), how many chunks contain it: one
        tokenizer call for all of them, where :meth:`document_frequencies` takes one a text."""
        if not words:
            return []
        terms = self._index_terms(" ".join(words))
        if len(terms) != len(words):  # a word the tokenizer split or dropped: ask one by one
            return self.document_frequencies(words)
        counts = self._term_frequencies(set(terms))
        return [counts[term] for term in terms]

    def _term_frequencies(self, terms: Collection[str]) -> dict[str, int]:
        """How many chunks hold each index term. ``fts5vocab`` counts a term by walking its
        postings (~0.1 ms for a common one), and queries ask for the same words again and
        again, so counts are kept until the index changes — a commit by any connection, this
        one's included — or :data:`FREQUENCY_CACHE_LIMIT` terms are kept."""
        as_of = (self.data_version(), self.total_changes())
        if as_of != self._frequencies_as_of or len(self._frequencies) > FREQUENCY_CACHE_LIMIT:
            self._frequencies.clear()
            self._frequencies_as_of = as_of
        known = self._frequencies
        missing = [term for term in terms if term not in known]
        if missing:
            known.update(dict.fromkeys(missing, 0))
            for batch in _batches(missing):
                known.update(self.conn.execute(
                    f"SELECT term, doc FROM temp.chunks_vocab WHERE term IN ({_marks(batch)})", batch
                ))  # fmt: skip
        return {term: known[term] for term in terms}

    def terms_starting(self, prefix: str, limit: int = -1) -> list[tuple[str, int]]:
        """The index terms that start with ``prefix`` (as stored: stemmed, folded), in order,
        at most ``limit`` of them (-1: all), each with how many chunks hold it. ``fts5vocab``
        reads the term range in order, counting each term's postings: ~5 ms for one letter's
        terms at 7k chunks (1,500 terms), well under 1 ms for two letters'."""
        self._index_terms("")  # creates the vocabulary view
        return [
            (term, doc)
            for term, doc in self.conn.execute(
                "SELECT term, doc FROM temp.chunks_vocab WHERE term >= ? AND term < ? LIMIT ?",
                (prefix, prefix + "\U0010ffff", limit),
            )
        ]

    def index_terms(self, text: str) -> list[str]:
        """``text``'s terms as the full-text index stores them (stemmed, folded)."""
        return self._index_terms(text)

    def _index_terms(self, text: str) -> list[str]:
        """``text``'s terms as the full-text index stores them (its own tokenizer, stemming
        included). Creates the tokenizer and the ``fts5vocab`` view the counts come from, once
        per connection."""
        if self._tokenize is None:
            name, *args = FTS_TOKENIZER.split()
            self._tokenize = self.conn.fts5_tokenizer(name, args)
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab "
                "USING fts5vocab(main, chunks_fts, 'row')"
            )
        # With offsets (the default) each token is (start, end, text, *colocated); apsw's stub
        # types the result for every flag combination, so it allows a 2-tuple.
        tokens = self._tokenize(text.encode("utf-8"), FTS5_TOKENIZE_QUERY, None)
        return [t[2] for t in tokens]  # type: ignore[misc]
