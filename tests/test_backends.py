"""The same behaviour on both backends: one SQLite file, and a collection in a real PostgreSQL
18 + pgvector server (``tests/support/postgres.py``) — indexing, incremental changes, every
search mode, filters, links, related notes, the CLI — plus what only a server has: the
PostgreSQL store's parity with SQLite's BM25, its HNSW path, two writers at once, a writer
killed mid-run, and a read-only role."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_for
from vaultseek import open_index
from vaultseek.engine import Index
from vaultseek.records import SearchFilter
from vaultseek.search.filters import parse_filter
from vaultseek.storage.postgres.store import PgStore
from vaultseek.storage.store import Store

OpenIndex = Callable[..., Index]

NOTES = {
    "security/oauth.md": """\
        ---
        tags: [security, auth]
        priority: 3
        due: 2024-03-05
        ---
        # OAuth token rotation

        Rotate refresh tokens every 30 days. The `rotate_tokens` job revokes the old pair.
        See [[incident-review]] for what went wrong last time.
        """,
    "security/incident-review.md": """\
        ---
        tags: [security]
        priority: 1
        due: 2024-06-01
        ---
        # Incident review

        A leaked token was used from an unknown host; we now alert on it.
        """,
    "cooking/bread.md": """\
        ---
        tags: [food]
        ---
        # Sourdough bread

        Feed the starter with flour and water, then let the dough rise overnight.
        """,
    "code/fusion.md": """\
        # Rank fusion

        ## The _rrf_fuse helper

        Reciprocal rank fusion adds 1/(k + rank) for each list a document appears in.
        """,
    "zh/网络.md": """\
        # 网络配置

        如何查看哪个程序占用了端口。使用 lsof 或者 netstat 命令查看端口占用情况。
        """,
    "ja/鍵.md": """\
        # 鍵の管理

        秘密鍵を安全に保管する方法と、鍵を定期的に交換する手順について説明します。
        """,
}


def write_notes(vault: Path, notes: dict[str, str] = NOTES) -> None:
    for rel, text in notes.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenIndex]:
    """Opens an index of a vault on the parametrised backend (a fresh database each test)."""
    db: str
    if request.param == "postgresql":
        db = request.getfixturevalue("pg_url")
    else:
        db = str(tmp_path / "index.db")

    def open_(vault: Path, **options: object) -> Index:
        return open_index(vault, db=db, create=True, **options)

    yield open_


def indexed(open_: OpenIndex, vault: Path) -> Index:
    index = open_(vault)
    index.sync(remember=False)
    return index


def test_the_postgresql_store_overrides_every_method_of_the_store() -> None:
    """Both stores are put together from themed classes: a public method of the SQLite store's
    must resolve, on the PostgreSQL store, to a class that is not one of the SQLite store's."""
    public = {name for name in dir(Store) if callable(getattr(Store, name)) and not name.startswith("_")}
    sqlite = set(Store.__mro__)
    inherited = sorted(name for name in public if next(c for c in PgStore.__mro__ if name in vars(c)) in sqlite)
    assert len(public) > 80
    assert inherited == []


def test_index_and_search_every_mode(backend: OpenIndex, vault: Path) -> None:
    write_notes(vault)
    (vault / "empty.csv").write_text("")  # a document with nothing in it to search
    with indexed(backend, vault) as index:
        status = index.status()
        assert status.files == len(NOTES) + 1 and status.textless_documents == ("empty.csv",)
        assert status.chunks == status.vectors > 0
        assert index.store.integrity_problems() == []
        assert index.search("how do I rotate oauth tokens").results[0].path == "security/oauth.md"
        exact = index.search("_rrf_fuse", mode="bm25").results
        assert [h.path for h in exact] == ["code/fusion.md"]
        assert exact[0].section == "The _rrf_fuse helper"
        assert index.search("baking with yeast and flour", mode="vector").results[0].path == "cooking/bread.md"
        assert index.search("rotat*", mode="bm25").results[0].path == "security/oauth.md"


def test_chinese_and_japanese_words_are_found(backend: OpenIndex, vault: Path) -> None:
    write_notes(vault)
    with indexed(backend, vault) as index:
        assert index.search("端口占用", mode="bm25").results[0].path == "zh/网络.md"
        assert index.search("秘密鍵", mode="bm25").results[0].path == "ja/鍵.md"


def test_filters(backend: OpenIndex, vault: Path) -> None:
    write_notes(vault)
    with indexed(backend, vault) as index:

        def paths(query: str, **scope: object) -> set[str]:
            return {h.path for h in index.search(query, k=20, filters=parse_filter(scope)).results}

        assert paths("token", folders=["security"]) == {"security/oauth.md", "security/incident-review.md"}
        assert paths("token", tags=["auth"]) == {"security/oauth.md"}
        assert paths("token", where=["priority>2"]) == {"security/oauth.md"}
        assert paths("token", where=["due<2024-04-01"]) == {"security/oauth.md"}
        assert paths("token", where=["due>=2024-04", "due<2024-07"]) == {"security/incident-review.md"}
        assert paths("token", where=["priority!=3"]) == {"security/incident-review.md"}
        assert paths("token", where=["priority:1"]) == {"security/incident-review.md"}
        assert paths("token", kinds=["pdf"]) == set()


def test_incremental_edit_delete_and_rename(backend: OpenIndex, vault: Path) -> None:
    write_notes(vault)
    with indexed(backend, vault) as index:
        (vault / "cooking/bread.md").write_text("# Sourdough bread\n\nUse rye flour for a darker crumb.\n")
        report = index.sync(remember=False)
        assert (report.added, report.updated, report.deleted) == (0, 1, 0)
        assert index.search("rye", mode="bm25").results[0].path == "cooking/bread.md"
        assert index.search("overnight", mode="bm25").results == ()
        (vault / "archive").mkdir()
        (vault / "security/incident-review.md").rename(vault / "archive/incident-review.md")
        (vault / "code/fusion.md").unlink()
        report = index.sync(remember=False)
        assert report.deleted >= 1
        assert index.search("_rrf_fuse", mode="bm25").results == ()
        links = index.links("security/oauth.md")
        assert [link.path for link in links.outgoing] == ["archive/incident-review.md"]
        assert index.store.integrity_problems() == []


def test_related_notes(backend: OpenIndex, vault: Path) -> None:
    write_notes(vault)
    with indexed(backend, vault) as index:
        related = index.related("security/oauth.md", k=3)
        assert related.results and related.results[0].path == "security/incident-review.md"


def test_the_vault_map_is_made_kept_and_updated(backend: OpenIndex, vault: Path) -> None:
    write_notes(vault)
    with indexed(backend, vault) as index:
        found = index.vault_map()
        assert found.how == "built" and len(found.notes) == len(NOTES) and found.clusters
        assert index.vault_map().how == "kept"
        note = index.map_note("security/oauth.md", k=3)
        assert len(note.neighbours) == 3 and note.cluster.id in {c.id for c in found.clusters}
    (vault / "security" / "oauth.md").write_text("# OAuth\n\nRotate refresh tokens on every use.\n", encoding="utf-8")
    with indexed(backend, vault) as index:
        assert index.vault_map().how in {"updated", "built"}
        assert index.vault_map().how == "kept"


def test_deep_vectors_go_to_every_openings_first_newest_files_first(backend: OpenIndex, vault: Path) -> None:
    """The deep job's order (``deep_pending``): each file's first chunk before any file's later
    ones, the most recently modified file first, then a file's chunks in order."""
    import numpy as np

    for name, mtime in (("old", 1_000_000_000), ("mid", 1_500_000_000), ("new", 1_700_000_000)):
        path = vault / f"{name}.md"
        path.write_text(
            f"# Note {name}\n\nThe opening of note {name} says {name}zero.\n\n## Part one\n\nThe first part of {name} "
            f"says {name}one.\n\n## Part two\n\nThe second part of {name} says {name}two.\n", "utf-8",
        )  # fmt: skip
        os.utime(path, (mtime, mtime))
    with indexed(backend, vault) as index:
        store = index.store

        def order(limit: int) -> list[str]:
            return [text.split()[-1].rstrip(".") for _hash, _context, text in store.deep_pending(limit)]

        assert order(20) == ["newzero", "midzero", "oldzero", "newone", "newtwo", "midone", "midtwo", "oldone", "oldtwo"]
        assert store.deep_opening_progress() == (0, 3)
        first = store.deep_pending(2)
        store.save_deep_vectors([(digest, np.ones(4, dtype=np.float32) / 2) for digest, _c, _t in first])
        assert order(3) == ["oldzero", "newone", "newtwo"]
        assert store.deep_opening_progress() == (2, 3)
        assert store.deep_progress() == (2, 9)
        with (vault / "old.md").open("a", encoding="utf-8") as note:
            note.write("\n## Part three\n\nThe third part of old says oldthree.\n")
        index.sync(remember=False)
        assert order(4) == ["oldzero", "oldone", "oldtwo", "oldthree"]


def test_what_the_deep_job_has_left_is_counted_in_the_characters_the_model_reads(backend: OpenIndex, vault: Path) -> None:
    """``deep_pending_texts``: the texts without a deep vector, their characters (context line,
    newline, text; each cut at the cap) and the length-squared part of the work, the openings
    apart: what ``status``'s time left is computed from."""
    import numpy as np

    from vaultseek.storage.store import PendingTexts

    for name in ("old", "new"):
        (vault / f"{name}.md").write_text(
            f"# Note {name}\n\nThe opening of {name} says {name}zero.\n\n## Part one\n\n"
            + f"The long first part of {name} says {name}one. " * 30
            + f"\n\n## Part two\n\nThe second part of {name} says {name}two.\n",
            "utf-8",
        )
    with indexed(backend, vault) as index:
        store = index.store

        def expected(cap: int, window: int, building: bool = False) -> PendingTexts:
            texts = store.deep_pending(100, building=building)
            sizes = [(min(len(context) + 1 + len(text), cap), "zero" in text) for _h, context, text in texts]
            openings = [size for size, opening in sizes if opening]
            return PendingTexts(
                len(sizes), sum(n for n, _o in sizes), sum(n * min(n, window) for n, _o in sizes),
                len(openings), sum(openings), sum(n * min(n, window) for n in openings),
            )  # fmt: skip

        whole = store.deep_pending_texts(100_000, 200)
        assert whole == expected(100_000, 200) and whole.texts == store.chunk_count() == 6 and whole.opening_texts == 2
        assert whole.chars > 1_500 and whole.opening_chars < 150  # the long part dwarfs the openings
        cut = store.deep_pending_texts(60, 50)
        assert cut == expected(60, 50) and cut.chars == 6 * 60 and cut.opening_chars == 2 * 60 and cut.squares == 6 * 60 * 50
        first = store.deep_pending(3)  # both openings and the newest file's long part
        store.save_deep_vectors([(digest, np.ones(4, dtype=np.float32) / 2) for digest, _c, _t in first])
        left = store.deep_pending_texts(100_000, 200)
        assert left == expected(100_000, 200) and left.texts == 3 and left.opening_texts == left.opening_chars == 0
        assert left.chars < whole.chars - 1_000
        assert store.deep_pending_texts(100_000, 200, building=True) == whole  # the next generation has none yet


def test_a_new_deep_generation_is_built_beside_the_serving_one_and_promoted_whole(backend: OpenIndex, vault: Path) -> None:
    """After a change of deep model the new vectors go to a second table; search keeps loading
    the old ones (another dimension, even) until the promotion swaps them in one step."""
    import numpy as np

    write_notes(vault)
    with indexed(backend, vault) as index:
        store = index.store
        total = store.chunk_count()
        old = store.deep_pending(total)
        store.reset_deep_vectors("old", "old model", "e5-small")
        store.save_deep_vectors([(digest, np.ones(4, dtype=np.float32) / 2) for digest, _c, _t in old])
        store.start_deep_generation("new", "new model", "ollama:bge-m3 prompts=none")
        assert store.deep_progress(building=True) == (0, total) and store.deep_progress() == (total, total)
        half = store.deep_pending(2, building=True)
        store.save_deep_vectors([(digest, np.ones(8, dtype=np.float32) / 8**0.5) for digest, _c, _t in half], building=True)
        assert store.deep_progress(building=True) == (2, total)
        assert store.deep_opening_progress(building=True)[0] >= 1
        assert store.load_deep_vectors()[1].shape == (total, 4)  # search still sees the old
        rest = store.deep_pending(total, building=True)
        assert not {d for d, _c, _t in rest} & {d for d, _c, _t in half}
        store.save_deep_vectors([(digest, np.ones(8, dtype=np.float32) / 8**0.5) for digest, _c, _t in rest], building=True)
        store.promote_deep_vectors()
        assert store.load_deep_vectors()[1].shape == (total, 8)
        assert store.deep_progress(building=True) == (0, total)
        assert [store.get_meta(f"deep_model_{k}") for k in ("fingerprint", "name", "spec")] == [
            "new", "new model", "ollama:bge-m3 prompts=none"]
        assert store.get_meta("deep_next_fingerprint") is None


@pytest.fixture
def both(vault: Path, tmp_path: Path, pg_url: str) -> Iterator[tuple[Index, Index]]:
    write_notes(vault)
    tldr = Path(__file__).resolve().parents[2] / "shared" / "data" / "tldr" / "pages" / "common"
    for source in sorted(tldr.glob("c*.md"))[:150] if tldr.is_dir() else []:
        (vault / "tldr").mkdir(exist_ok=True)
        (vault / "tldr" / source.name).write_bytes(source.read_bytes())
    with (
        indexed(lambda v: open_index(v, db=tmp_path / "i.db", create=True), vault) as lite,
        indexed(lambda v: open_index(v, db=pg_url, create=True), vault) as pg,
    ):
        yield lite, pg


QUERIES = ["token", "rotate tokens", "copy files to a remote host", "compress*", "curl post json",
           "container image build", "端口", "dough rise", "rank fusion list", "change file owner",
           "command-line options", "user-agent header", "build a docker-image"]  # fmt: skip


def test_bm25_on_postgresql_scores_exactly_as_sqlite(both: tuple[Index, Index]) -> None:
    lite, pg = both
    for query in QUERIES:
        a = [(h.path, h.chunk_id and round(h.score, 6)) for h in lite.search(query, mode="bm25", k=15).results]
        b = [(h.path, h.chunk_id and round(h.score, 6)) for h in pg.search(query, mode="bm25", k=15).results]
        assert [p for p, _ in a] == [p for p, _ in b], query
    from vaultseek.text.lexical import parse_query

    for query in QUERIES:
        expression = parse_query(query).match_all()
        left = [round(score, 9) for _id, score in lite.store.bm25(expression, 20)]
        right = [round(score, 9) for _id, score in pg.store.bm25(expression, 20)]
        assert left == right, query


def test_hybrid_on_postgresql_ranks_as_sqlite(both: tuple[Index, Index]) -> None:
    lite, pg = both
    for query in QUERIES:
        a = [h.path for h in lite.search(query, k=10).results]
        b = [h.path for h in pg.search(query, k=10).results]
        assert a[:5] == b[:5], query


def test_hnsw_search_finds_what_exact_search_finds(both: tuple[Index, Index]) -> None:
    lite, pg = both
    store = pg.store
    assert isinstance(store, PgStore)
    assert store.ensure_hnsw(force=True) and store.vector_index_exists()
    for query in QUERIES:
        exact = [h.path for h in lite.search(query, mode="vector", k=10).results]
        approximate = [h.path for h in pg.search(query, mode="vector", k=10).results]
        assert len(set(exact) & set(approximate)) >= min(8, len(exact)), query  # "compress*": only its chunks
    scoped = pg.search("token", mode="vector", k=5, filters=SearchFilter(folders=("security",))).results
    assert {h.path for h in scoped} == {"security/oauth.md", "security/incident-review.md"}


def test_hnsw_search_width_follows_the_pool_unless_set(both: tuple[Index, Index]) -> None:
    """A search's pool of 100 reads 200 candidates of the graph (``hnsw.ef_search``); a width
    set on the vectors replaces that, and the nearest are found either way."""
    from vaultseek.storage.postgres.connection import connect

    _lite, pg = both
    store = pg.store
    assert isinstance(store, PgStore) and store.ensure_hnsw(force=True)
    url = pg.database_url or ""
    hnsw = store.hnsw_vectors(lambda: connect(url, read_only=True))
    assert hnsw is not None
    query = pg.embedder().embed_one("rotate oauth tokens")
    widths = []
    try:
        for width in (None, 800, 1):
            hnsw.ef_search = width
            hits = hnsw.nearest(query, 100, None)
            widths.append(hnsw._conn.execute("SHOW hnsw.ef_search").fetchone()[0])
            assert len(hits) == min(100, len(hnsw)) and hits[0][1] >= hits[-1][1]
    finally:
        hnsw.close()
    assert widths == ["200", "800", "1"]


def run_cli(*args: str, check: bool = True, **options: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "vaultseek.cli", *args], check=False, capture_output=True, text=True, timeout=300, **options
    )  # type: ignore[call-overload]
    if check:
        assert result.returncode == 0, result.stderr
    return result  # type: ignore[no-any-return]


def test_the_cli_on_postgresql(vault: Path, pg_url: str) -> None:
    write_notes(vault)
    common = ["--vault", str(vault), "--db", pg_url]
    run_cli("index", *common, "--quiet")
    found = json.loads(run_cli("search", *common, "--json", "rotate oauth tokens").stdout)
    assert found["results"][0]["path"] == "security/oauth.md"
    batch = run_cli("search", *common, "--batch", "-", input='{"query": "_rrf_fuse", "mode": "bm25"}\n').stdout
    assert json.loads(batch.splitlines()[0])["results"][0]["path"] == "code/fusion.md"
    status = json.loads(run_cli("status", *common, "--json").stdout)
    assert status["backend"]["backend"] == "postgresql"
    assert status["backend"]["pgvector"].startswith("0.8")
    assert "secret" not in json.dumps(status) and os.environ["PGPASSWORD"] not in json.dumps(status)
    outgoing = run_cli("links", *common, "security/oauth.md").stdout
    assert "incident-review.md" in outgoing


def bigger_vault(vault: Path, files: int) -> None:
    tldr = Path(__file__).resolve().parents[2] / "shared" / "data" / "tldr" / "pages" / "common"
    sources = sorted(tldr.glob("*.md"))
    if len(sources) < files:
        pytest.skip("the shared tldr pages are not beside the repository")
    for source in sources[:files]:
        (vault / source.name).write_bytes(source.read_bytes())


def test_two_writers_at_once_leave_one_consistent_collection(vault: Path, pg_url: str) -> None:
    bigger_vault(vault, 300)
    common = ["index", "--vault", str(vault), "--db", pg_url, "--quiet"]
    first = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", *common], stderr=subprocess.PIPE, text=True)
    second = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", *common], stderr=subprocess.PIPE, text=True)
    assert first.wait(timeout=600) == 0, first.stderr.read() if first.stderr else ""
    assert second.wait(timeout=600) == 0, second.stderr.read() if second.stderr else ""
    with open_index(vault, db=pg_url) as index:
        assert index.status().files == 300
        assert index.store.integrity_problems() == []
        rows = index.store.pg.execute(  # type: ignore[attr-defined]
            "SELECT count(*), count(DISTINCT (file_id, position)) FROM chunks"
        ).fetchone()
        assert rows[0] == rows[1]


def test_a_writer_killed_mid_run_loses_nothing_committed(vault: Path, pg_url: str) -> None:
    bigger_vault(vault, 600)
    common = ["index", "--vault", str(vault), "--db", pg_url, "--quiet"]
    writer = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", *common])
    deadline = time.monotonic() + 120
    indexed_before = 0
    while time.monotonic() < deadline and writer.poll() is None:
        time.sleep(0.5)
        with open_index(vault, db=pg_url) as index:
            indexed_before = index.status().files
        if indexed_before >= 64:
            break
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    with open_index(vault, db=pg_url) as index:
        assert index.store.integrity_problems() == []
        assert index.status().files >= indexed_before
    run_cli(*common)
    with open_index(vault, db=pg_url) as index:
        assert index.status().files == 600
        assert index.store.integrity_problems() == []


def test_a_read_only_role_can_search(vault: Path, pg_url: str, postgres) -> None:  # type: ignore[no-untyped-def]
    write_notes(vault)
    run_cli("index", "--vault", str(vault), "--db", pg_url, "--quiet")
    database = pg_url.rsplit("/", 1)[1]
    postgres.create_role("reader", "reader-password-1", read_only=True, database=database)
    reader_url = postgres.url(user="reader", database=database)
    env = {**os.environ, "PGPASSWORD": "reader-password-1"}
    found = run_cli("search", "--vault", str(vault), "--db", reader_url, "--json", "oauth", env=env)
    assert json.loads(found.stdout)["results"][0]["path"] == "security/oauth.md"
    refused = run_cli("index", "--vault", str(vault), "--db", reader_url, check=False, env=env)
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr and "reader-password-1" not in refused.stderr


def test_a_connection_dropped_mid_session_is_one_clear_error(vault: Path, pg_url: str, postgres) -> None:  # type: ignore[no-untyped-def]
    from vaultseek.errors import DatabaseUnavailableError

    write_notes(vault)
    with indexed(lambda v: open_index(v, db=pg_url, create=True), vault) as index:
        assert index.search("oauth", mode="bm25").results
        postgres.terminate_sessions(pg_url.rsplit("/", 1)[1])
        with pytest.raises(DatabaseUnavailableError) as raised:
            index.search("oauth", mode="bm25")
        message = str(raised.value) + str(raised.value.hint)
        assert "127.0.0.1" in message and postgres.password not in message


def test_mcp_searches_a_postgresql_collection(vault: Path, pg_url: str) -> None:
    import asyncio

    write_notes(vault)
    run_cli("index", "--vault", str(vault), "--db", pg_url, "--quiet")

    async def search() -> Any:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "vaultseek.cli", "mcp", "--vault", str(vault), "--db", pg_url],
            env={k: v for k, v in os.environ.items() if k.startswith(("XDG_", "VAULTSEEK_", "PG")) or k == "PYTHONPATH"},
        )
        async with Client(params) as client:
            return await client.call_tool("search", {"query": "rotate refresh tokens", "k": 3})

    found = asyncio.run(search())
    assert not found.is_error
    assert found.structured_content["results"][0]["path"] == "security/oauth.md"


def test_watch_keeps_a_postgresql_collection_current(vault: Path, pg_url: str) -> None:
    write_notes(vault)
    process = subprocess.Popen(
        [sys.executable, "-m", "vaultseek.cli", "watch", "--vault", str(vault), "--db", pg_url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip

    def found(query: str) -> list[str]:
        try:
            with open_index(vault, db=pg_url) as index:
                return [h.path for h in index.search(query, mode="bm25").results]
        except Exception:  # noqa: BLE001 - the collection may not exist yet
            return []

    try:
        assert wait_for(lambda: found("oauth") == ["security/oauth.md"], 60)
        (vault / "live.md").write_text("# Capybara\n\nCapybaras enjoy hot springs.\n", "utf-8")
        assert wait_for(lambda: found("capybara") == ["live.md"], 60)
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err


SYNTAX_QUERIES = ['"rotate refresh" tokens', "token -incident", 'token -"leaked token"', "compress*", "token tag:auth",
                  "token path:SECURITY", "token file:oauth", "token [priority>2]", "tok* -oauth", "kind:note dough",
                  "c* -compress*", '"copy a file" clipboard']  # fmt: skip


def test_the_query_syntax_on_postgresql_finds_what_sqlite_finds(both: tuple[Index, Index]) -> None:
    lite, pg = both
    for query in SYNTAX_QUERIES:
        for mode in ("bm25", "vector", "hybrid"):
            a = lite.search(query, mode=mode, k=10)
            b = pg.search(query, mode=mode, k=10)
            assert a.results, (query, mode)
            assert [h.path for h in a.results][:5] == [h.path for h in b.results][:5], (query, mode)
            assert a.parsed == b.parsed and a.notices == b.notices, (query, mode)
    for expression in ['"rotate refresh"', '"compress" *', '"token" AND ("leaked" OR "rotate")', '"no such words"']:
        chunks = [store.chunks_matching(expression) for store in (lite.store, pg.store)]
        notes = [store.note_chunks_matching(expression) for store in (lite.store, pg.store)]
        for found in (chunks, [ids for ids, _count in notes]):
            named = [sorted(store.chunk_paths(ids.tolist()).values()) for store, ids in zip((lite.store, pg.store), found, strict=True)]
            assert named[0] == named[1] and (named[0] or "no such" in expression), expression
        assert notes[0][1] == notes[1][1] == len(set(lite.store.chunk_paths(notes[0][0].tolist()).values())), expression


def test_the_query_syntax_on_postgresql_narrows_the_hnsw_search(both: tuple[Index, Index]) -> None:
    lite, pg = both
    store = pg.store
    assert isinstance(store, PgStore) and store.ensure_hnsw(force=True)
    for query in ['"refresh tokens"', "token -incident", "compress*", "token tag:auth"]:
        exact = [h.path for h in lite.search(query, mode="vector", k=10).results]
        approximate = [h.path for h in pg.search(query, mode="vector", k=10).results]
        assert approximate and set(approximate) <= set(lite_paths(lite, query)), query
        assert len(set(exact) & set(approximate)) >= min(8, len(exact)), query


def lite_paths(index: Index, query: str) -> list[str]:
    """Every path the query's operators allow (the exact vector search of all of them)."""
    return [h.path for h in index.search(query, mode="vector", k=100).results]


def test_path_and_file_name_text_compare_alike_on_both_backends(backend: OpenIndex, vault: Path) -> None:
    write_notes(vault, {"Über/Äpfel.md": "# Äpfel\n\nApples keep for months in a cool cellar.\n",
                        "cellar/notes.md": "# Cellar\n\nThe cellar stays cool all year.\n"})  # fmt: skip
    with indexed(backend, vault) as index:

        def found(query: str) -> set[str]:
            return {h.path for h in index.search(query, mode="bm25", k=10).results}

        assert found("cellar path:ÜBER") == {"Über/Äpfel.md"}  # ASCII letters fold, Ü stays Ü
        assert found("cellar path:über") == set()
        assert found("cellar file:ÄPFEL") == {"Über/Äpfel.md"} and found("cellar file:äpfel") == set()
        assert found("cellar file:cellar") == set() and found("cellar path:CELLAR/") == {"cellar/notes.md"}
