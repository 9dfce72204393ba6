"""The PostgreSQL backend's postings table (``storage/postgres/postings.py``) against a real
PostgreSQL 18 + pgvector server (``tests/support/postgres.py``): BM25 from the postings scores
every kind of query exactly as SQLite's FTS5 does; the postings an index keeps through edits,
deletes, renames and a writer killed mid-run are those a fresh index of the same files has;
the schema migration builds them for a collection written by the previous schema; and a
search reads postings, not chunk rows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vaultseek import open_index
from vaultseek.engine import Index
from vaultseek.records import SearchFilter
from vaultseek.storage.postgres import postings, schema
from vaultseek.storage.postgres.fulltext import parse
from vaultseek.storage.postgres.store import PgStore
from vaultseek.text.lexical import index_text, parse_query

NOTES = {
    "security/oauth.md": """\
        ---
        tags: [security, auth]
        ---
        # OAuth token rotation

        Rotate refresh tokens every 30 days. The `rotate_tokens` job revokes the old pair,
        and the rotation of a token is logged. Tokens, tokens, tokens.

        ## Refresh tokens

        A refresh token outlives its access token; rotate it on every use.
        """,
    "security/incident-review.md": """\
        ---
        tags: [security]
        ---
        # Incident review

        A leaked token was used from an unknown host; we now alert on it. The user-agent
        header named a command-line tool.
        """,
    "cooking/bread.md": """\
        # Sourdough bread

        Feed the starter with flour and water, then let the dough rise overnight. A dough
        that does not rise needs a warmer room.

        ## Baking

        Bake the bread hot, then let the bread cool before cutting the bread.
        """,
    "code/fusion.md": """\
        # Rank fusion

        ## The _rrf_fuse helper

        Reciprocal rank fusion adds 1/(k + rank) for each list a document appears in. Rank
        fusion of a ranked list: fuse the lists, rank again.
        """,
    "zh/网络.md": """\
        # 网络配置

        如何查看哪个程序占用了端口。使用 lsof 或者 netstat 命令查看端口占用情况。端口被占用时。先查看占用端口的程序。
        """,
    "ja/鍵.md": """\
        # 鍵の管理

        秘密鍵を安全に保管する方法と、鍵を定期的に交換する手順について説明します。秘密鍵は共有しません。
        """,
}

QUERIES = [
    # single terms, in the text, a heading, a section
    "token", "rotation", "baking", "fusion", "netstat",
    # several terms, all of them (AND) and any of them (OR)
    "rotate refresh tokens", "dough rise overnight", "rank fusion list", "bread cool cutting",
    # phrases of several tokens
    "rotate_tokens", "user-agent", "command-line tool", "_rrf_fuse",
    # prefixes, alone and at the end of a phrase
    "rotat*", "tok*", "fus*", "command-li*", "r*",
    # Chinese and Japanese: character pairs, phrases of pairs, single characters as prefixes
    "端口", "端口占用", "查看端口", "秘密鍵", "鍵", "定期的に交換",
]  # fmt: skip
SHAPES = [
    '("rotate" OR "rotat" *) AND "token"',
    '"bread" AND ("dough" OR "starter") AND "rise"',
    '("rank fusion" OR "fuse") AND ("list" OR "lists")',
    '"端口" OR ("秘密" AND "密鍵")',
]


def write_notes(vault: Path, notes: dict[str, str] = NOTES) -> None:
    for rel, text in notes.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def open_pg(vault: Path, pg_url: str, collection: str) -> Index:
    return open_index(vault, db=pg_url, create=True, collection=collection)


def synced(index: Index) -> Index:
    index.sync(remember=False)
    return index


def pg_store(index: Index) -> PgStore:
    assert isinstance(index.store, PgStore)
    return index.store


def expressions() -> list[str]:
    out = []
    for query in QUERIES:
        parsed = parse_query(query)
        out.extend([parsed.match_all(), parsed.match_any()])
    return out + SHAPES


def ranked(index: Index, expression: str, scope: SearchFilter | None = None) -> list[tuple[float, str, str]]:
    """Every chunk the expression matches, as (score to the ninth decimal, path, text), in
    score order (ties by path: chunk ids may differ between the backends)."""
    hits = index.store.bm25(expression, 1000, scope)
    rows = index.store.chunks_by_id([cid for cid, _s in hits])
    return sorted((round(-score, 9), rows[cid].path, rows[cid].text) for cid, score in hits)


@pytest.fixture
def both(vault: Path, tmp_path: Path, pg_url: str) -> Iterator[tuple[Index, Index]]:
    write_notes(vault)
    with (
        synced(open_index(vault, db=tmp_path / "i.db", create=True)) as lite,
        synced(open_pg(vault, pg_url, "notes")) as pg,
    ):
        yield lite, pg


def test_every_kind_of_query_scores_exactly_as_sqlite(both: tuple[Index, Index]) -> None:
    lite, pg = both
    matched = 0
    for expression in expressions():
        expected = ranked(lite, expression)
        assert ranked(pg, expression) == expected, expression
        matched += bool(expected)
    assert matched >= len(expressions()) - 2  # the queries do find something
    scope = SearchFilter(folders=("security",))
    for expression in ('"token"', '"rotate" OR "leaked"', '"tok" *'):
        expected = ranked(lite, expression, scope)
        assert expected and {path for _s, path, _t in expected} <= {"security/oauth.md", "security/incident-review.md"}
        assert ranked(pg, expression, scope) == expected, expression


def test_top_k_is_the_head_of_the_full_ranking(both: tuple[Index, Index]) -> None:
    _lite, pg = both
    for expression in ('"token" OR "bread" OR "rank" OR "端口"', '"r" *'):
        everything = pg.store.bm25(expression, 1000)
        assert len(everything) > 3
        assert pg.store.bm25(expression, 3) == everything[:3]
        assert [s for _c, s in everything] == sorted((s for _c, s in everything), reverse=True)


def test_a_query_fits_its_and_or_shape() -> None:
    query = parse('("a" OR "b" *) AND "c d" AND "!"')
    assert [p.tokens for p in query.phrases] == [("a",), ("b",), ("c", "d")]
    assert query.shape == ("(", 0, "OR", 1, ")", "AND", 2, "AND", "FALSE")
    assert postings._having(query) == " HAVING ( bool_or(h.i = 1) OR bool_or(h.i = 2) ) AND bool_or(h.i = 3) AND FALSE"
    assert postings._having(parse('"a" AND "b"')) == " HAVING count(*) = 2"
    assert postings._having(parse('"a" OR ("b" OR "c")')) == ""


def test_the_bound_after_a_prefix() -> None:
    assert postings._after_prefix("tok") == "tol"
    assert postings._after_prefix("a\U0010ffff") == "b"
    assert postings._after_prefix("\U0010ffff") is None
    assert postings._after_prefix(chr(0xD7FF)) == chr(0xE000)


def dump(index: Index) -> list[tuple[Any, ...]]:
    """Every posting, named by its chunk's file and place rather than its id."""
    rows = pg_store(index).pg.execute(
        "SELECT f.path, c.position, p.term, p.text_count, p.section_count, p.heading_count, p.positions, p.length "
        "FROM postings p JOIN chunks c ON c.id = p.chunk_id JOIN files f ON f.id = c.file_id"
    ).fetchall()
    return sorted(tuple(row) for row in rows)


def test_postings_after_edits_deletes_and_renames_are_a_fresh_index(vault: Path, pg_url: str) -> None:
    write_notes(vault)
    with synced(open_pg(vault, pg_url, "kept")) as kept:
        before = dump(kept)
        assert any(path == "cooking/bread.md" and term == "overnight" for path, _p, term, *_ in before)
        (vault / "cooking/bread.md").write_text("# Sourdough bread\n\nUse rye flour for a darker crumb.\n", "utf-8")
        (vault / "archive").mkdir()
        (vault / "security/incident-review.md").rename(vault / "archive/incident-review.md")
        (vault / "code/fusion.md").unlink()
        (vault / "new.md").write_text("# Capybara\n\nCapybaras enjoy hot springs.\n", "utf-8")
        report = kept.sync(remember=False)
        assert (report.added, report.updated, report.deleted) == (2, 1, 2)
        after = dump(kept)
        assert pg_store(kept).integrity_problems() == []
        with synced(open_pg(vault, pg_url, "fresh")) as fresh:
            assert after == dump(fresh)
            for expression in expressions():
                assert ranked(kept, expression) == ranked(fresh, expression), expression
        terms = {(path, term) for path, _p, term, *_ in after}
        assert ("cooking/bread.md", "rye") in terms and ("cooking/bread.md", "overnight") not in terms
        assert not any(path in {"code/fusion.md", "security/incident-review.md"} for path, *_ in after)
        assert ("archive/incident-review.md", "leak") in terms
        assert [h.path for h in kept.search("capybara", mode="bm25").results] == ["new.md"]
        store = pg_store(kept)
        assert store.pg.execute("SELECT count(*) FROM postings WHERE chunk_id NOT IN (SELECT id FROM chunks)").fetchone() == (0,)
        assert store.pg.execute("SELECT df FROM terms_df WHERE term = 'overnight'").fetchone() in (None, (0,))


def test_a_writer_killed_mid_run_leaves_postings_a_fresh_index_has(vault: Path, pg_url: str) -> None:
    tldr = Path(__file__).resolve().parents[2] / "shared" / "data" / "tldr" / "pages" / "common"
    sources = sorted(tldr.glob("*.md"))[:300]
    if len(sources) < 300:
        pytest.skip("the shared tldr pages are not beside the repository")
    for source in sources:
        (vault / source.name).write_bytes(source.read_bytes())
    command = [sys.executable, "-m", "vaultseek.cli", "index", "--vault", str(vault), "--db", pg_url,
               "--collection", "kept", "--quiet"]  # fmt: skip
    writer = subprocess.Popen(command)
    deadline = time.monotonic() + 120
    seen = 0
    while time.monotonic() < deadline and writer.poll() is None and seen < 64:
        time.sleep(0.3)
        try:
            with open_index(vault, db=pg_url, collection="kept") as index:
                seen = index.status().files
        except Exception:  # noqa: BLE001 - the collection may not exist yet
            seen = 0
    assert writer.poll() is None, "the writer finished before it could be killed"
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    with open_index(vault, db=pg_url, collection="kept") as index:
        assert index.store.integrity_problems() == []
        assert 0 < index.status().files < 300
    assert subprocess.run(command, check=False, timeout=600).returncode == 0
    with open_index(vault, db=pg_url, collection="kept") as kept, synced(open_pg(vault, pg_url, "fresh")) as fresh:
        assert kept.status().files == 300
        assert kept.store.integrity_problems() == []
        assert dump(kept) == dump(fresh)


def old_tsvector(columns: tuple[str, str, str]) -> tuple[str, int]:
    """A chunk's terms as the previous schema stored them: one ``tsvector``, the three columns
    one after another with a gap of one position, each position weighted by its column."""
    from vaultseek.storage.db import fts5_tokens

    marks: dict[str, list[str]] = {}
    position = length = 0
    for letter, text in zip("ABC", columns, strict=True):
        tokens = fts5_tokens(text, query=False)
        length += len(tokens)
        for token in tokens:
            position += 1
            marks.setdefault(token, []).append(f"{position}{letter}")
        position += 1
    quoted = {t: "'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in marks}
    return " ".join(f"{quoted[t]}:{','.join(m)}" for t, m in marks.items()), length


def test_the_migration_builds_postings_for_a_collection_of_the_previous_schema(vault: Path, pg_url: str, tmp_path: Path) -> None:
    write_notes(vault)
    with synced(open_pg(vault, pg_url, "fresh")) as fresh:
        conn = pg_store(fresh).pg
        # The previous schema (p001), with the fresh collection's files and chunks and its
        # terms as it stored them; totals and term counts from those terms, as it kept them.
        with conn.transaction():
            conn.execute('CREATE SCHEMA "vs_old"')
            conn.execute('SET LOCAL search_path = "vs_old", public')
            schema.MIGRATIONS[0](conn)
            conn.execute("INSERT INTO meta(key, value) SELECT key, value FROM vs_fresh.meta WHERE key != 'schema_version'")
            conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '1')")
            conn.execute("INSERT INTO files SELECT * FROM vs_fresh.files")
            chunks = conn.execute(
                "SELECT id, file_id, position, section, heading_context, text, embed_hash, location, embedding::text "
                "FROM vs_fresh.chunks"
            ).fetchall()
            for cid, file_id, position, section, context, text, digest, location, embedding in chunks:
                terms, length = old_tsvector((index_text(text), index_text(section), index_text(context)))
                conn.execute(
                    "INSERT INTO chunks(id, file_id, position, section, heading_context, text, embed_hash, location, "
                    "terms, length, embedding) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s, %s::halfvec)",
                    (cid, file_id, position, section, context, text, digest, location, terms, length, embedding),
                )
            conn.execute(
                "INSERT INTO terms_df(term, df) SELECT u.lexeme, count(*) FROM chunks c, unnest(c.terms) u GROUP BY 1"
            )
            conn.execute("UPDATE stats SET chunks = (SELECT count(*) FROM chunks), tokens = (SELECT sum(length) FROM chunks)")
        conn.execute('SET search_path = "vs_fresh", public')
        assert conn.execute("SELECT count(*) FROM vs_old.chunks").fetchone()[0] == len(chunks) > 6
        with open_index(vault, db=pg_url, collection="old") as old:
            store = pg_store(old)
            assert store.schema_version == schema.SCHEMA_VERSION == 4
            assert store.integrity_problems() == []
            assert dump(old) == dump(fresh)
            assert store.pg.execute(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'vs_old' AND column_name = 'terms'"
            ).fetchone() == (0,)
            with synced(open_index(vault, db=tmp_path / "i.db", create=True)) as lite:
                for expression in expressions():
                    assert ranked(old, expression) == ranked(lite, expression), expression


def table_scans(store: PgStore, table: str) -> int:
    store.pg.execute("SELECT pg_stat_force_next_flush()")
    store.pg.execute("SELECT pg_stat_clear_snapshot()")
    row = store.pg.execute(
        "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE schemaname = %s AND relname = %s",
        (store.schema, table),
    ).fetchone()
    return int(row[0])


def test_ranking_reads_postings_and_no_chunk_row(both: tuple[Index, Index]) -> None:
    _lite, pg = both
    store = pg_store(pg)
    chunks, posting_reads = table_scans(store, "chunks"), table_scans(store, "postings")
    for expression in expressions():
        store.bm25(expression, 10)
    assert table_scans(store, "chunks") == chunks
    assert table_scans(store, "postings") > posting_reads


def test_a_terms_postings_are_read_from_the_index_alone(both: tuple[Index, Index]) -> None:
    """After ``optimize`` (its vacuum), a term's and a prefix's postings come from the primary
    key's entries, never the table's pages; the planner is steered to the index so a
    collection this small, which it would simply scan, shows the path a large one takes.

    Vacuum marks a page visible to all only once no snapshot in the database is older than its
    rows; a server's own autoanalyze, started while the sync was writing, can hold one for a
    moment. So ``optimize`` is run again (for up to ten seconds) until no such snapshot is left."""
    _lite, pg = both
    store = pg_store(pg)
    deadline = time.monotonic() + 10
    while True:
        store.optimize()
        plans = [postings_plan(store, expression) for expression in ('"token"', '"auth" *')]
        if all("Heap Fetches: 0" in plan for plan in plans) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    others = store.pg.execute(
        "SELECT backend_type, state, backend_xmin::text, left(query, 80) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    ).fetchall()
    for plan in plans:
        assert "Index Only Scan using postings_pkey" in plan, plan
        assert "Heap Fetches: 0" in plan, (plan, others)


def postings_plan(store: PgStore, expression: str) -> str:
    """EXPLAIN ANALYZE of the statement that reads the postings of ``expression``'s first phrase,
    with table and bitmap scans switched off."""
    sql = postings._phrase_rows(1, parse(expression).phrases[0], anchor=False)
    with store.pg.transaction():
        store.pg.execute("SET LOCAL enable_seqscan = off")
        store.pg.execute("SET LOCAL enable_bitmapscan = off")
        return "\n".join(row[0] for row in store.pg.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql.sql, sql.params))


def test_both_stores_name_the_chunks_that_have_a_place_in_a_document(vault: Path, pg_url: str, tmp_path: Path) -> None:
    """Fusion asks which waiting chunks are a document's pages (``Store.located``): PostgreSQL
    answers as SQLite does — a PDF's pages, not a note's sections."""
    from tests.support import docgen

    write_notes(vault)
    docgen.text_pdf(vault / "report.pdf", ["Cover page of the annual report. " * 4, "Fleet: 42 vans, charged overnight. " * 4])
    with synced(open_index(vault, db=tmp_path / "i.db", create=True)) as lite, synced(open_pg(vault, pg_url, "docs")) as pg:
        answers = []
        for index in (lite, pg):
            pages = [row.id for row in index.get_note("report.pdf")]
            sections = [row.id for row in index.get_note("security/oauth.md")]
            located = index.store.located([*pages, *sections])
            answers.append((len(located), located == set(pages)))
    assert answers == [(2, True), (2, True)]
