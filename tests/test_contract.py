"""One search contract: the same request through every surface — the CLI (`search --json`, its
`--batch` lines), a real daemon behind its socket, the MCP server over stdio, HTTP GET and POST —
gives the same JSON, and a bad request is refused with the same message everywhere."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import mcp_server, run_cli
from vaultseek import QueryError, open_index
from vaultseek.agents import daemon_client
from vaultseek.agents.mcp_server import lean_answer
from vaultseek.config import load_config
from vaultseek.contract import (
    MAX_K,
    MAX_QUERY_CHARS,
    REQUEST_FIELDS,
    SearchRequest,
    request_schema,
    text_fields,
)

REQUESTS: list[dict[str, Any]] = [
    {"query": "rotate refresh tokens"},
    {"query": "how do we rotate refresh tokens", "k": 3, "filters": {"tags": ["security"], "where": ["type:howto"]},
     "title_match": True, "intent": True, "term_match": 0.5},
    {"query": "widget-33", "mode": "bm25", "k": 2, "max_tokens": 200},  # a document hit: location, label
    {"query": "rotate refresh tokens", "view": "chunks", "k": 4},  # sections as ranked, one note's twice
    {"query": '"refresh token" -bread tag:security rotat*', "k": 3},  # the query syntax: the answer's "parsed"
]  # fmt: skip
CLI_FLAGS = [
    [],
    ["-k", "3", "--tag", "security", "--where", "type:howto", "--title-match", "--intent", "--term-match", "0.5"],
    ["--mode", "bm25", "-k", "2", "--max-tokens", "200"],
    ["--view", "chunks", "-k", "4"],
    ["-k", "3"],
]
QUERY_STRINGS = [  # GET /api/search: q, flat filters, numbers and flags as text
    {"q": "rotate refresh tokens"},
    {"q": "how do we rotate refresh tokens", "k": "3", "tags": "security", "where": "type:howto",
     "title_match": "1", "intent": "true", "term_match": "0.5"},
    {"q": "widget-33", "mode": "bm25", "k": "2", "max_tokens": "200"},
    {"q": "rotate refresh tokens", "view": "chunks", "k": "4"},
    {"q": '"refresh token" -bread tag:security rotat*', "k": "3"},
]  # fmt: skip
REFUSED: list[tuple[dict[str, Any], list[str], dict[str, str]]] = [  # request, CLI flags, GET parameters
    ({"query": "x", "k": MAX_K + 1}, ["x", "-k", str(MAX_K + 1)], {"q": "x", "k": str(MAX_K + 1)}),
    ({"query": ""}, [""], {"q": ""}),
    ({"query": "\x00"}, [], {"q": "\x00"}),  # nothing to search: NULs (no argv holds one),
    ({"query": "\x01\u200b\t\x7f"}, ["\x01\u200b\t\x7f"], {"q": "\x01\u200b\t\x7f"}),  # controls, blanks
    ({"query": "x", "colour": "red"}, [], {"q": "x", "colour": "red"}),
    ({"query": "x", "k": "ten"}, [], {"q": "x", "k": "ten"}),
    ({"query": "x", "view": "pages"}, [], {"q": "x", "view": "pages"}),
    ({"query": "x kind:zzz"}, ["x kind:zzz"], {"q": "x kind:zzz"}),  # the query syntax's errors
    ({"query": "x -tag:a"}, ["x -tag:a"], {"q": "x -tag:a"}),
    ({"query": "-bread"}, [], {"q": "-bread"}),
]


@pytest.fixture
def served(sample_vault: Path) -> Iterator[Path]:
    """The sample vault (and a spreadsheet, for a document's location) indexed, with a real
    daemon serving it."""
    rows = "\n".join(f"{n},widget-{n},{n * 3}" for n in range(1, 41))
    (sample_vault / "inventory.csv").write_text(f"id,part,stock\n{rows}\n", "utf-8")
    with open_index(sample_vault, create=True) as index:
        index.sync()
    started = run_cli("daemon", "start", "--vault", str(sample_vault))
    assert started.returncode == 0, started.stderr
    try:
        yield sample_vault
    finally:
        pid_file = daemon_client.pid_path(db_of(sample_vault))
        run_cli("daemon", "stop", "--vault", str(sample_vault))
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except (ValueError, OSError):
                pass


def db_of(vault: Path) -> Path:
    db = load_config(vault=vault).db
    assert db is not None
    return db


def mcp_calls(vault: Path, calls: list[dict[str, Any]]) -> list[Any]:
    """Each call's result from one `vaultseek mcp` process, through the SDK's own client."""
    from mcp import Client

    params = mcp_server(vault)

    async def session() -> list[Any]:
        async with Client(params) as client:
            return [await client.call_tool("search", arguments) for arguments in calls]

    return asyncio.run(session())


def http_client(vault: Path) -> Any:
    """The study app over the same index (no start-up sync: the daemon is the writer)."""
    from starlette.testclient import TestClient

    from vaultseek.engine import Index
    from vaultseek.web.app import create_app

    config = load_config(vault=vault)
    return TestClient(create_app(lambda: Index(config), config, sync_on_start=False), base_url="http://127.0.0.1")


def refusal(request: dict[str, Any]) -> QueryError:
    with pytest.raises(QueryError) as caught:
        SearchRequest.from_mapping(request)
    return caught.value


def test_one_search_is_one_json_on_every_surface(served: Path) -> None:
    vault = ["--vault", str(served)]
    db = db_of(served)
    mcp = mcp_calls(served, REQUESTS)
    batch = run_cli("search", "--batch", "-", *vault,
                    stdin="".join(json.dumps({"id": n, **r}) + "\n" for n, r in enumerate(REQUESTS)))  # fmt: skip
    assert batch.returncode == 0, batch.stderr
    batched = [json.loads(line) for line in batch.stdout.splitlines()]
    answers: list[dict[str, Any]] = []
    with http_client(served) as http:
        for n, request in enumerate(REQUESTS):
            local = run_cli("search", request["query"], *CLI_FLAGS[n], "--json", "--no-daemon", *vault)
            assert local.returncode == 0, local.stderr
            expected = json.loads(local.stdout)
            assert expected["results"], request  # a real answer, not two empty ones
            assert (expected["parsed"] is not None) == ("-bread" in request["query"]), expected["parsed"]
            via_daemon = run_cli("search", request["query"], *CLI_FLAGS[n], "--json", *vault)
            assert via_daemon.stdout == local.stdout
            assert daemon_client.request(db, {"op": "search", **request}) == expected
            # MCP: the same results, without the ranking's bookkeeping; the text is the same JSON.
            assert not mcp[n].is_error and mcp[n].structured_content == lean_answer(expected)
            assert json.loads(mcp[n].content[0].text) == mcp[n].structured_content
            assert batched[n] == {"id": n, **expected}
            got = http.get("/api/search", params=QUERY_STRINGS[n])
            assert got.status_code == 200, got.text
            assert got.json() == expected
            posted = http.post("/api/search", json=request)
            assert posted.status_code == 200, posted.text
            assert posted.json() == expected
            answers.append(expected)
    assert [answer["view"] for answer in answers] == ["notes", "notes", "notes", "chunks", "notes"]
    # The same query in both views: each note once, or a note's sections in places of their own.
    notes, chunks = [[r["path"] for r in answers[n]["results"]] for n in (0, 3)]
    assert len(set(notes)) == len(notes) and len(set(chunks)) < len(chunks) == 4
    # The note view: a file once, its sections inside it, a document's keeping their place.
    answer = json.loads(run_cli("search", "widget-33", "--mode", "bm25", "--json", "--no-daemon", *vault).stdout)
    top = answer["results"][0]
    assert answer["view"] == "notes" and set(top) == {"path", "title", "score", "relevance", "sections"}
    assert top["path"] == "inventory.csv" and top["score"] == top["sections"][0]["score"]
    best = top["sections"][0]
    assert best["path"] == "inventory.csv" and best["location"] == {"row_start": 22, "row_end": 41}
    assert best["label"] == "rows 22–41" and isinstance(best["chunk_id"], int)
    chunks = json.loads(run_cli("search", "widget-33", "--mode", "bm25", "--view", "chunks", "--json", "--no-daemon", *vault).stdout)
    assert chunks["view"] == "chunks" and chunks["results"][0] == best


def test_a_bad_request_is_refused_in_the_same_words_everywhere(served: Path) -> None:
    vault = ["--vault", str(served)]
    db = db_of(served)
    mcp = mcp_calls(served, [request for request, _flags, _params in REFUSED])
    with http_client(served) as http:
        for n, (request, flags, params) in enumerate(REFUSED):
            error = refusal(request)
            if flags:
                cli = run_cli("search", *flags, *vault)
                assert cli.returncode == 2 and "Traceback" not in cli.stderr
                assert cli.stderr.splitlines() == [f"error: {error.message}", f"hint: {error.hint}"]
            line = run_cli("search", "--batch", "-", *vault, stdin=json.dumps({"id": 1, **request}) + "\n")
            assert json.loads(line.stdout) == {"id": 1, "error": f"line 1: {error.message}"}
            with pytest.raises(daemon_client.DaemonError) as refused:
                daemon_client.request(db, {"op": "search", **request})
            assert (refused.value.message, refused.value.hint, refused.value.exit_code) == (error.message, error.hint, 2)
            assert mcp[n].is_error and mcp[n].content[0].text.endswith(f"{error.message} ({error.hint})")
            for answer in (http.get("/api/search", params=params), http.post("/api/search", json=request)):
                assert answer.status_code == 400
                assert answer.json() == {"error": {"code": "bad_request", "message": error.message, "hint": error.hint}}


def test_the_request_reads_back_what_it_writes() -> None:
    request = SearchRequest.from_mapping({
        "query": "tokens", "mode": "bm25", "k": MAX_K, "max_tokens": 50, "filters": {"folders": ["work"], "modified_after": "7d"},
        "syntax": False, "title_match": False, "recency_half_life_days": 0, "intent": True, "term_match": 1, "link_boost": 0.5,
        "link_signal": "neighbours", "fusion": "rrf", "candidates": 200, "deep_weight": 0, "view": "chunks",
        "rerank": True, "expand": False,
    })  # fmt: skip
    assert set(request.to_mapping()) == set(REQUEST_FIELDS)
    assert SearchRequest.from_mapping(json.loads(json.dumps(request.to_mapping()))) == request
    assert SearchRequest.from_mapping({"query": "tokens", "k": None, "filters": None}) == SearchRequest("tokens")
    assert tuple(request_schema()["properties"]) == REQUEST_FIELDS
    assert text_fields({"k": "5", "title_match": "on", "intent": "0", "term_match": "0.5", "max_tokens": "", "mode": "bm25", "view": "chunks"}) == {
        "k": 5, "title_match": True, "intent": False, "term_match": 0.5, "max_tokens": None, "mode": "bm25", "view": "chunks"}  # fmt: skip
    assert SearchRequest("tokens").view == "notes"  # the default view


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"query": "x" * (MAX_QUERY_CHARS + 1)}, f"longer than {MAX_QUERY_CHARS} characters"),
        ({"query": " \n"}, "the query is empty"),
        ({"query": "\x00\x00"}, "the query is empty"),
        ({"query": "\u200b\u200e \x1b"}, "the query is empty"),  # zero-width, bidi mark, escape
        ({"query": "x", "mode": "fuzzy"}, 'unknown search mode "fuzzy"'),
        ({"query": "x", "view": "pages"}, 'unknown search view "pages"'),
        ({"query": "x", "view": None, "k": 0}, "k must be a whole number"),
        ({"query": "x", "k": 0}, "k must be a whole number from 1 to 100 (got 0)"),
        ({"query": "x", "k": 2.5}, "(got 2.5)"),
        ({"query": "x", "max_tokens": 0}, "max_tokens must be a whole number, at least 1"),
        ({"query": "x", "title_match": "yes"}, 'title_match must be true or false (got "yes")'),
        ({"query": "x", "recency_half_life_days": -1}, "half-life in days, at least 0"),
        ({"query": "x", "term_match": 1.5}, "term_match must be a number from 0 to 1"),
        ({"query": "x", "link_boost": -1}, "link_boost must be at least 0"),
        ({"query": "x", "link_signal": "likes"}, "link_signal must be one of backlinks, neighbours"),
        ({"query": "x", "fusion": "max"}, "fusion must be one of rrf, convex"),
        ({"query": "x", "candidates": 5000}, "candidates must be a whole number from 1 to 1000"),
        ({"query": "x", "filters": ["work"]}, "a filter must be an object"),
        ({"query": "x", "filters": {"modified_after": "soon"}}, "cannot read 'soon'"),
        ({"query": ["x"]}, "the query must be text"),
        ("x", "a search request must be a JSON object"),
    ],
)
def test_what_the_request_refuses(request_: Any, message: str) -> None:
    assert message in refusal(request_).message


def test_the_cli_help_states_the_limit() -> None:
    from vaultseek.cli.main import build_parser

    search = next(a for a in build_parser()._actions if a.dest == "command").choices["search"]  # type: ignore[union-attr]
    assert f"1 to {MAX_K}" in search.format_help()
