from __future__ import annotations

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultseek.storage.migrations import FTS_TOKENIZER
from vaultseek.text.lexical import MAX_TERMS, make_snippet, parse_query


@pytest.fixture(scope="module")
def fts() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{FTS_TOKENIZER}')")
    conn.executemany(
        "INSERT INTO t(body) VALUES (?)",
        [
            ("the _rrf_fuse helper merges lists",),
            ("C++ templates and the STL",),
            ("§3 Absatz 2 regelt die Kündigung",),
            ("authentication and authorization flags",),
            ("pass -flag to the compiler",),
        ],
    )
    return conn


def matches(conn: apsw.Connection, expression: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT body FROM t WHERE t MATCH ? ORDER BY rowid", (expression,))]


HOSTILE = [
    "C++",
    '"unbalanced',
    "AND",
    "OR NOT",
    "-flag",
    "§3 Absatz 2",
    "foo*",
    "*",
    "NEAR(a b)",
    "col:value",
    "^start",
    "(((",
    "🙂🚀",
    "a\x00b",
    "'; DROP TABLE t; --",
    "x" * 10_000,
    " ".join(["word"] * 3000),
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_always_parse(fts: apsw.Connection, text: str) -> None:
    query = parse_query(text)
    if not query.empty:
        matches(fts, query.match_all())
        matches(fts, query.match_any())


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_any_text_builds_a_valid_query(text: str) -> None:
    conn = apsw.Connection(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{FTS_TOKENIZER}')")
    query = parse_query(text)
    if not query.empty:
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (query.match_all(),)).fetchall()
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (query.match_any(),)).fetchall()


def test_identifier_becomes_an_adjacent_phrase(fts: apsw.Connection) -> None:
    assert matches(fts, parse_query("_rrf_fuse").match_all()) == ["the _rrf_fuse helper merges lists"]
    assert parse_query("_rrf_fuse").phrases == ('"rrf fuse"',)


def test_symbols_reduce_to_words(fts: apsw.Connection) -> None:
    assert matches(fts, parse_query("C++").match_all()) == ["C++ templates and the STL"]
    assert "pass -flag to the compiler" in matches(fts, parse_query("-flag").match_all())
    assert matches(fts, parse_query("§3 Absatz 2").match_all()) == ["§3 Absatz 2 regelt die Kündigung"]


def test_operators_are_plain_words(fts: apsw.Connection) -> None:
    # "AND" is searched as the word "and", never as an operator.
    assert "C++ templates and the STL" in matches(fts, parse_query("AND").match_all())


def test_trailing_star_is_prefix_search(fts: apsw.Connection) -> None:
    assert matches(fts, parse_query("templ*").match_all()) == ["C++ templates and the STL"]
    assert matches(fts, parse_query("templ").match_all()) == []


def test_term_cap_bounds_long_input() -> None:
    text = " ".join(f"word{i}" for i in range(500))
    assert len(parse_query(text).phrases) == MAX_TERMS


def test_duplicates_are_dropped() -> None:
    assert parse_query("token Token TOKEN").phrases == ('"token"',)


def test_snippet_centres_on_matches() -> None:
    text = "## Heading\n" + "filler words here. " * 30 + "rotate the refresh token now. " + "more filler. " * 30
    snippet = make_snippet(text, ("rotating", "token"))
    assert "refresh token" in snippet
    assert len(snippet) <= 245
    assert snippet.startswith("…") and snippet.endswith("…")


def test_snippet_of_short_text_is_whole_and_skips_heading() -> None:
    assert make_snippet("## Setup\nInstall it.", ()) == "Install it."


def test_stopwords_are_dropped_only_when_other_words_remain() -> None:
    assert parse_query("how to rotate the token").phrases == ('"rotate"', '"token"')
    assert parse_query("to be or not to be").phrases == ('"to"', '"be"', '"or"', '"not"')
    assert parse_query("The_Who").phrases == ('"The Who"',)  # inside an identifier they stay
