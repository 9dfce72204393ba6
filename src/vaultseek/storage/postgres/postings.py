"""The full-text index on PostgreSQL: a ``postings`` table, written with the chunks, and FTS5's
BM25 computed from it.

One row per term of each chunk: the term, the chunk's id and token count (FTS5's row
length), how often the term occurs in each column (text, section, heading context) and its
positions. The primary key ``(term, chunk_id)`` lists a term's chunks, so a query reads the
postings of its own terms only — never a chunk row — and ranks them in one statement:

* a single term is one index range; a prefix (``auth*``) is the range of every term of the
  term dictionary (``terms_df``) that starts with it; a phrase of several tokens joins its
  tokens' postings by chunk and keeps the starts where every token follows in place;
* each phrase's frequency in a row is FTS5's: every occurrence counts the weight of its
  column (text 1.0, section 0.5, heading context 0.3);
* the score is FTS5's BM25 (k1 = 1.2, b = 0.75, its idf), summed over the phrases, with N
  and the average length from ``stats`` and each term's document count from ``terms_df`` (a
  phrase's or a prefix's is counted from its postings);
* the query's AND/OR shape is checked per chunk on which phrases it holds, and the top k
  are chosen in SQL. An all-AND query first takes the chunks holding its three rarest terms
  and looks the other terms up in those only.

Postings are inserted in the statement that inserts their chunks, and deleted with them,
inside the writer's transaction (``store.PgStore._write``), so a reader never sees a chunk
without its postings, and the term counts and totals move in the same transaction.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...records import SearchFilter
from ..scope import scope_where
from ..store import BM25_WEIGHTS
from . import fulltext

K1 = 1.2
B = 0.75
"""FTS5's BM25 constants (``bm25()`` in ``fts5_aux.c``)."""

ANCHOR_TERMS = 3
"""An all-AND query's candidates: the chunks holding its rarest this many single terms. Two
common words' intersection is usually a small part of either, and each further term is then
looked up per candidate instead of read whole (a million-chunk collection has terms in
hundreds of thousands of chunks)."""

_WEIGHTS = tuple(f"{w!r}::float8" for w in BM25_WEIGHTS)
"""The column weights as SQL literals (``repr`` round-trips a float exactly)."""


# -- writing ----------------------------------------------------------------------------------
ADD_CHUNKS = (
    "WITH src AS ("
    " SELECT * FROM unnest(%s::integer[], %s::text[], %s::text[], %s::text[], %s::bytea[], %s::text[], %s::integer[],"
    " %s::text[]) WITH ORDINALITY AS u(position, section, heading_context, text, embed_hash, location, length, embedding, n)), "
    "ids AS MATERIALIZED (SELECT src.n, nextval(pg_get_serial_sequence('chunks', 'id')) AS id FROM src), "
    "added AS (INSERT INTO chunks(id, file_id, position, section, heading_context, text, embed_hash, location, length, embedding) "
    " SELECT ids.id, (SELECT id FROM files WHERE path = %s), src.position, src.section, src.heading_context, src.text,"
    " src.embed_hash, src.location, src.length, src.embedding::halfvec FROM src JOIN ids ON ids.n = src.n) "
    "INSERT INTO postings(chunk_id, length, text_count, section_count, heading_count, term, positions) "
    "SELECT ids.id, src.length, p.a, p.b, p.c, p.t, (%s::integer[])[p.s : p.s + p.a + p.b + p.c - 1] "
    "FROM unnest(%s::bigint[], %s::text[], %s::integer[], %s::integer[], %s::integer[], %s::integer[]) "
    "AS p(n, t, a, b, c, s) JOIN ids ON ids.n = p.n JOIN src ON src.n = p.n"
)
"""A file's chunks and their postings in one statement (so it pipelines: nothing waits for
the new chunk ids). Each chunk's id is drawn from the table's identity sequence first, and
its postings name it by its place in the file's list. The postings travel as array literals
written here, all their positions one after another in one array, each posting with the
index its own begin at: psycopg adapting thousands of elements one by one costs the client
more than the server's whole insert."""


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk's columns as stored (its vector as pgvector's text form) and its postings."""

    position: int
    section: str
    heading_context: str
    text: str
    embed_hash: bytes
    location: str | None
    embedding: str
    document: fulltext.Document = field(repr=False)


def add_chunks(cur: Any, path: str, chunks: Sequence[NewChunk]) -> None:
    """Insert the chunks of the file at ``path`` (already inserted) with their postings, and
    add them to the BM25 totals and the term counts."""
    columns: list[list[Any]] = [[] for _ in range(8)]
    numbers: list[int] = []
    terms: list[str] = []
    counts: tuple[list[int], list[int], list[int]] = ([], [], [])
    starts: list[int] = []
    positions: list[int] = []
    for n, chunk in enumerate(chunks, start=1):
        values: tuple[object, ...] = (
            chunk.position, chunk.section, chunk.heading_context, chunk.text, chunk.embed_hash,
            chunk.location, chunk.document.length, chunk.embedding,
        )  # fmt: skip
        for column, value in zip(columns, values, strict=True):
            column.append(value)
        for posting in chunk.document.postings:
            numbers.append(n)
            terms.append(posting.term)
            for column, value in zip(counts, posting.counts, strict=True):
                column.append(value)
            starts.append(len(positions) + 1)
            positions.extend(posting.positions)
    cur.execute(
        ADD_CHUNKS,
        (*columns, path, _int_array(positions), _int_array(numbers), _text_array(terms), *map(_int_array, counts), _int_array(starts)),
    )
    # The counts come from the postings at hand: no statement reads the table back. Terms
    # are touched in their sort order, which the writer lock makes moot but keeps any
    # future concurrent writer free of deadlocks.
    df = Counter(posting.term for chunk in chunks for posting in chunk.document.postings)
    terms = sorted(df)
    cur.execute(
        "INSERT INTO terms_df(term, df) SELECT * FROM unnest(%s::text[], %s::integer[]) "
        "ON CONFLICT (term) DO UPDATE SET df = terms_df.df + excluded.df",
        (terms, [df[t] for t in terms]),
    )
    cur.execute(
        "UPDATE stats SET chunks = chunks + %s, tokens = tokens + %s",
        (len(chunks), sum(chunk.document.length for chunk in chunks)),
    )


def _int_array(values: Iterable[int]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def _text_array(values: Iterable[str]) -> str:
    """An array literal of ``values``, each quoted (any character may follow)."""
    return "{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


def forget(conn: Any, path: str) -> None:
    """Take the chunks of the file at ``path`` out of the BM25 totals and the term counts,
    and delete their postings (before the file's rows).

    Planned afresh each time (``prepare=False``): a plan cached while the table was small
    scans all of it for every file once it has grown."""
    conn.execute(
        "WITH gone AS (SELECT c.id, c.length FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = %s), "
        "counted AS (INSERT INTO terms_df(term, df) SELECT p.term, -count(*) FROM gone "
        "JOIN postings p ON p.chunk_id = gone.id GROUP BY p.term ORDER BY p.term "
        "ON CONFLICT (term) DO UPDATE SET df = terms_df.df + excluded.df) "
        "UPDATE stats SET chunks = chunks - s.n, tokens = tokens - s.t "
        "FROM (SELECT count(*) AS n, coalesce(sum(length), 0) AS t FROM gone) s",
        (path,),
        prepare=False,
    )
    conn.execute(
        "DELETE FROM postings WHERE chunk_id IN "
        "(SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = %s)",
        (path,),
        prepare=False,
    )


def problems(conn: Any) -> list[str]:
    """Ways the postings disagree with the chunks and the term counts (empty when
    consistent)."""
    found = []
    wrong = conn.execute(
        "SELECT count(*) FROM (SELECT term, count(*) AS n FROM postings GROUP BY term) a "
        "FULL JOIN (SELECT term, df FROM terms_df WHERE df != 0) t ON t.term = a.term "
        "WHERE a.n IS DISTINCT FROM t.df"
    ).fetchone()[0]
    if wrong:
        found.append(f"{wrong} term counts disagree with the postings")
    stray = conn.execute(
        "SELECT count(*) FROM postings p LEFT JOIN chunks c ON c.id = p.chunk_id "
        "WHERE c.id IS NULL OR c.length != p.length "
        "OR p.text_count + p.section_count + p.heading_count != cardinality(p.positions)"
    ).fetchone()[0]
    if stray:
        found.append(f"{stray} postings name no chunk, or disagree with their chunk")
    return found


# -- ranking ----------------------------------------------------------------------------------
@dataclass(slots=True)
class _Sql:
    """SQL text and its positional parameters, built in order."""

    text: list[str] = field(default_factory=list)
    params: list[object] = field(default_factory=list)

    def add(self, text: str, *params: object) -> None:
        self.text.append(text)
        self.params.extend(params)

    def extend(self, other: _Sql) -> None:
        self.text.extend(other.text)
        self.params.extend(other.params)

    @property
    def sql(self) -> str:
        return "".join(self.text)


def bm25(
    conn: Any,
    query: fulltext.Query,
    limit: int,
    scope: SearchFilter | None,
    frequencies: Callable[[Collection[str]], dict[str, int]],
    excluded_chunks: Sequence[int] = (),
) -> list[tuple[int, float]]:
    """(chunk id, BM25 score) of the ``limit`` best chunks that fit ``query``, best first,
    ties broken by id — FTS5's scores. ``frequencies`` gives each term's document count
    (the store's cached ``terms_df``); ``scope`` and ``excluded_chunks`` (ids no hit may
    have) restrict the rows before the limit."""
    if query.empty or limit <= 0:
        return []
    chunks, tokens = conn.execute("SELECT chunks, tokens FROM stats").fetchone() or (0, 0)
    if not chunks:
        return []
    singles = {p.tokens[0] for p in query.phrases if _single(p)}
    known = frequencies(singles)
    all_and = query.operators <= {"AND"}
    if all_and and singles and min(known[t] for t in singles) == 0:
        return []  # a term no chunk holds: nothing has every phrase
    # An all-AND query ranks only the chunks that hold its rarest terms (up to ANCHOR_TERMS
    # of them, intersected from the key alone): every other term is then looked up in those.
    rarest = sorted(singles, key=lambda t: (known[t], t))[:ANCHOR_TERMS] if all_and else []
    anchor = bool(rarest)
    hits = _Sql()
    if anchor:
        hits.add("anchor AS MATERIALIZED (SELECT a0.chunk_id FROM postings a0")
        for k, term in enumerate(rarest[1:], start=1):
            hits.add(f" JOIN postings a{k} ON a{k}.chunk_id = a0.chunk_id AND a{k}.term = %s", term)
        hits.add(" WHERE a0.term = %s), ", rarest[0])
    hits.add("h(i, chunk_id, length, f) AS (")
    for i, phrase in enumerate(query.phrases, start=1):
        if i > 1:
            hits.add(" UNION ALL ")
        hits.extend(_phrase_rows(i, phrase, anchor=anchor))
    hits.add(")")
    # Each chunk's score, FTS5's BM25 summed over the phrases it holds. A single term's idf
    # comes from its count; a longer phrase's or a prefix's must be counted from its
    # postings, which is done in the statement, and only once some chunk fits the query
    # (an all-AND query often has none): those phrases are summed apart, per chunk, and
    # weighted by their idf after the grouping.
    weight = (f"((h.f * ({K1!r}::float8 + 1.0)) / "
              f"(h.f + {K1!r}::float8 * (1 - {B!r}::float8 + {B!r}::float8 * h.length / %s::float8)))")  # fmt: skip
    average = tokens / chunks
    counted = [i for i, phrase in enumerate(query.phrases, start=1) if not _single(phrase)]
    idfs = [_idf(known[p.tokens[0]], chunks) if _single(p) else 0.0 for p in query.phrases]
    grouped = _Sql()
    grouped.add(f"SELECT h.chunk_id, sum((%s::float8[])[h.i] * {weight}) AS score", idfs, average)
    for i in counted:
        grouped.add(f", sum({weight}) FILTER (WHERE h.i = {i}) AS w{i}", average)
    grouped.add(f" FROM h GROUP BY h.chunk_id{_having(query)}")
    out = _Sql()
    out.add("WITH ")
    out.extend(hits)
    out.add(", grouped AS (")
    out.extend(grouped)
    out.add("), scored AS (SELECT g.chunk_id, g.score")
    for i in counted:
        out.add(f" + coalesce(g.w{i}, 0) * ")
        out.extend(_counted_idf(i, query.phrases[i - 1], chunks))
    out.add(" AS score FROM grouped g) ")
    without: tuple[str, tuple[object, ...]] = ("", ())
    if excluded_chunks:  # a hashed set: NOT IN a subquery, not <> ALL(array), which is a scan per row
        without = (" WHERE s.chunk_id NOT IN (SELECT unnest(%s::bigint[]))", (list(excluded_chunks),))
    if scope is None or scope.unrestricted:
        out.add(f"SELECT s.chunk_id, s.score FROM scored s{without[0]} ORDER BY s.score DESC, s.chunk_id LIMIT %s", *without[1], limit)
    else:
        condition, scoped = scope_where(scope, dialect="postgresql")
        if without[0]:
            condition += " AND s.chunk_id NOT IN (SELECT unnest(%s::bigint[]))"
            scoped = (*scoped, *without[1])
        out.add(
            "SELECT s.chunk_id, s.score FROM scored s JOIN chunks c ON c.id = s.chunk_id JOIN files f ON f.id = c.file_id "
            f"WHERE {condition} ORDER BY s.score DESC, s.chunk_id LIMIT %s",
            *scoped, limit,
        )  # fmt: skip
    # Planned for these terms (their counts decide the joins), never from a cached plan.
    rows = conn.execute(out.sql, out.params, prepare=False).fetchall()
    return [(int(cid), float(value)) for cid, value in rows]


def matching(conn: Any, query: fulltext.Query, limit: int = -1) -> list[int]:
    """The ids of the chunks that fit ``query``, ascending — the rows FTS5 would match, found
    from the postings as :func:`bm25` finds them; the first ``limit`` (-1: all)."""
    if query.empty or not limit:
        return []
    sql = _fitting(query)
    sql.add("SELECT fit.chunk_id FROM fit ORDER BY 1 LIMIT %s", None if limit < 0 else limit)
    return [int(row[0]) for row in conn.execute(sql.sql, sql.params, prepare=False).fetchall()]


def note_chunks(conn: Any, query: fulltext.Query) -> tuple[list[int], int]:
    """The ids of every chunk of the files with a chunk that fits ``query``, ascending, and
    how many such files there are."""
    if query.empty:
        return [], 0
    sql = _fitting(query)
    sql.add(
        ", hit AS MATERIALIZED (SELECT DISTINCT c.file_id FROM fit JOIN chunks c ON c.id = fit.chunk_id) "
        "SELECT (SELECT count(*) FROM hit), coalesce((SELECT array_agg(c.id ORDER BY c.id) FROM hit "
        "JOIN chunks c ON c.file_id = hit.file_id), '{}')"
    )
    notes, ids = conn.execute(sql.sql, sql.params, prepare=False).fetchone()
    return [int(i) for i in ids], int(notes)


def _fitting(query: fulltext.Query) -> _Sql:
    """``WITH`` the CTE ``fit``: the ids of the chunks that fit ``query``."""
    sql = _Sql()
    sql.add("WITH h(i, chunk_id, length, f) AS (")
    for i, phrase in enumerate(query.phrases, start=1):
        if i > 1:
            sql.add(" UNION ALL ")
        sql.extend(_phrase_rows(i, phrase, anchor=False))
    sql.add(f"), fit AS (SELECT h.chunk_id FROM h GROUP BY h.chunk_id{_having(query)}) ")
    return sql


def _single(phrase: fulltext.Phrase) -> bool:
    return len(phrase.tokens) == 1 and not phrase.prefix


def _counted_idf(i: int, phrase: fulltext.Phrase, rows: int) -> _Sql:
    """FTS5's idf (:func:`_idf`, the same float operations) of a phrase or prefix counted
    from its postings: a scalar subquery, which PostgreSQL runs once, when first needed."""
    sql = _Sql()
    sql.add("(SELECT CASE WHEN v > 0 THEN v ELSE 1e-6::float8 END FROM (SELECT ln((%s::float8 - n + 0.5) / (n + 0.5)) AS v "
            "FROM (SELECT count(*)::float8 AS n FROM (", rows)  # fmt: skip
    sql.extend(_phrase_rows(i, phrase, anchor=False))
    sql.add(") x) c) d)")
    return sql


def _frequency(alias: str) -> str:
    """A posting's weighted count: each occurrence counts its column's weight."""
    a, b, c = _WEIGHTS
    return f"({alias}.text_count * {a} + {alias}.section_count * {b} + {alias}.heading_count * {c})"


def _terms_starting(prefix: str) -> _Sql:
    """The terms of the dictionary that start with ``prefix`` (a subquery)."""
    sql = _Sql()
    upper = _after_prefix(prefix)
    if upper is None:
        sql.add("(SELECT d.term FROM terms_df d WHERE d.term >= %s AND starts_with(d.term, %s) AND d.df > 0)", prefix, prefix)
    else:
        sql.add("(SELECT d.term FROM terms_df d WHERE d.term >= %s AND d.term < %s AND d.df > 0)", prefix, upper)
    return sql


def _phrase_rows(i: int, phrase: fulltext.Phrase, *, anchor: bool) -> _Sql:
    """``(i, chunk id, length, weighted frequency)`` for every chunk holding ``phrase``
    (within the ``anchor`` CTE's chunks when ``anchor``)."""
    sql = _Sql()
    within = " AND p0.chunk_id IN (SELECT chunk_id FROM anchor)" if anchor else ""
    last = len(phrase.tokens) - 1
    if last == 0:
        if not phrase.prefix:
            sql.add(f"SELECT {i}, p0.chunk_id, p0.length, {_frequency('p0')} FROM postings p0 WHERE p0.term = %s{within}",
                    phrase.tokens[0])  # fmt: skip
            return sql
        sql.add(f"SELECT {i}, p0.chunk_id, min(p0.length), sum({_frequency('p0')}) FROM postings p0 WHERE p0.term IN ")
        sql.extend(_terms_starting(phrase.tokens[0]))
        sql.add(f"{within} GROUP BY p0.chunk_id")
        return sql
    # A phrase: each start of its first token where every later token sits at its offset,
    # counted with the weight of the column the start is in (the posting's first
    # text_count positions are in the text, then the section's, then the heading's).
    a, b, c = _WEIGHTS
    sql.add(
        f"SELECT {i}, p0.chunk_id, p0.length, sum(CASE WHEN s.j <= p0.text_count THEN {a} "
        f"WHEN s.j <= p0.text_count + p0.section_count THEN {b} ELSE {c} END) FROM postings p0"
    )
    for k, token in enumerate(phrase.tokens[1:], start=1):
        if k == last and phrase.prefix:
            sql.add(f" JOIN postings p{k} ON p{k}.chunk_id = p0.chunk_id AND p{k}.term IN ")
            sql.extend(_terms_starting(token))
        else:
            sql.add(f" JOIN postings p{k} ON p{k}.chunk_id = p0.chunk_id AND p{k}.term = %s", token)
    sql.add(" CROSS JOIN LATERAL unnest(p0.positions) WITH ORDINALITY s(pos, j) WHERE p0.term = %s", phrase.tokens[0])
    for k in range(1, last + 1):
        sql.add(f" AND s.pos + {k} = ANY(p{k}.positions)")
    # The chunks holding every token, found from the key alone (no positions), first: only
    # their postings are read from the table for the positions.
    exact = [token for k, token in enumerate(phrase.tokens) if not (k == last and phrase.prefix)]
    if len(exact) > 1:
        sql.add(" AND p0.chunk_id IN (SELECT q0.chunk_id FROM postings q0")
        for k, token in enumerate(exact[1:], start=1):
            sql.add(f" JOIN postings q{k} ON q{k}.chunk_id = q0.chunk_id AND q{k}.term = %s", token)
        sql.add(" WHERE q0.term = %s)", exact[0])
    sql.add(f"{within} GROUP BY p0.chunk_id, p0.length")
    return sql


def _having(query: fulltext.Query) -> str:
    """The condition on a chunk's phrases that its query's AND/OR shape asks for (none for
    an all-OR query: every chunk listed holds a phrase)."""
    words = query.operators
    if words <= {"OR", "(", ")", "FALSE"}:
        return ""
    if words <= {"AND"}:
        return f" HAVING count(*) = {len(query.phrases)}"
    parts = [part if isinstance(part, str) else f"bool_or(h.i = {part + 1})" for part in query.shape]
    return " HAVING " + " ".join(parts)


def _after_prefix(prefix: str) -> str | None:
    """The least string after every string that starts with ``prefix``, in code point order
    (the terms' ``"C"`` collation over UTF-8); None when there is none."""
    for cut in range(len(prefix) - 1, -1, -1):
        code = ord(prefix[cut]) + 1
        if 0xD800 <= code <= 0xDFFF:
            code = 0xE000  # surrogates are no characters
        if code <= 0x10FFFF:
            return prefix[:cut] + chr(code)
    return None


def _idf(hits: int, rows: int) -> float:
    """FTS5's idf: ``log((N - n + 0.5) / (n + 0.5))``, at least 1e-6."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else 1e-6
