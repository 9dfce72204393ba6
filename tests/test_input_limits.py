"""Hostile sizes and shapes at every door, through the surface a user meets: the hook's stdin,
the study app's HTTP API and its token, the MCP server's stdio, the daemon's socket. Each is
refused with a clear error (or, for a hook, fails open) and the door keeps serving."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.standin_llm import StandinLLM

from conftest import run_cli
from study_fixtures import make_app, serve_with_token
from vaultseek import open_index
from vaultseek.agents import daemon_client
from vaultseek.config import load_config
from vaultseek.contract import MAX_QUERY_CHARS

DEEP = "[" * 100_000 + "]" * 100_000
"""JSON nested 100,000 levels: Python's parser gives up (RecursionError) at about 1,000."""


@pytest.fixture
def indexed(sample_vault: Path) -> Path:
    with open_index(sample_vault, create=True) as index:
        index.sync()
    return sample_vault


def hook_log() -> str:
    path = Path(os.environ["XDG_STATE_HOME"]) / "vaultseek" / "hook.log"
    return path.read_text("utf-8") if path.exists() else ""


# -- the hook ------------------------------------------------------------------------------------
@pytest.mark.parametrize("stdin", [DEEP, '{"prompt": "rotate tokens", "x": ' + "[" * 500 + "]" * 500 + "}"])
def test_deeply_nested_hook_input_fails_open(indexed: Path, stdin: str) -> None:
    db = str(load_config(vault=indexed).db)
    for options in (["--vault", str(indexed)], [f"--db={db}"]):  # the ordinary path and the fast lane
        result = run_cli("hook", "user-prompt-submit", *options, stdin=stdin)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), options
    assert hook_log().count("failed open: HookInputError: stdin is nested more than") == 2


def test_an_oversized_hook_event_fails_open_unread(indexed: Path) -> None:
    prompt = "rotate refresh tokens " * (daemon_client.MAX_REQUEST_BYTES // 20)
    result = run_cli("hook", "user-prompt-submit", "--vault", str(indexed), stdin=json.dumps({"prompt": prompt}))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert "stdin is larger than 4 MB" in hook_log()


# -- the study app -------------------------------------------------------------------------------
def test_hostile_json_bodies_are_400s(client: Any) -> None:
    nested = {"question": "notice period", "scope": {"categories": json.loads("[" * 200 + "]" * 200)}}
    for method, path in (("POST", "/api/chat"), ("POST", "/api/study/materials"),
                         ("PUT", "/api/documents/law/tenancy.md/category"), ("POST", "/api/search")):  # fmt: skip
        for body in (DEEP, json.dumps(nested), json.dumps({"question": "x" * (1 << 20)})):
            response = client.request(method, path, content=body, headers={"content-type": "application/json"})
            assert response.status_code == 400, (path, response.text[:200])
            error = response.json()["error"]
            assert error["code"] == "bad_request"
            assert "nested more than 128 levels" in error["message"] or "larger than 1 MB" in error["message"]
    # A good request still works afterwards.
    assert client.post("/api/search", json={"query": "notice period"}).json()["results"]


def test_a_single_valued_parameter_given_twice_is_a_400(client: Any) -> None:
    asked = [("/api/search", "q=notice&q=period"), ("/api/search", "q=notice&k=3&k=5"),
             ("/api/search", "q=notice&view=notes&view=chunks"), ("/api/search", "q=notice&modified_after=7d&modified_after=2d"),
             ("/api/map", "modified_after=7d&modified_after=2d"), ("/api/map", "rebuild=0&rebuild=1")]  # fmt: skip
    for path, query in asked:
        name = query.rsplit("&", 1)[1].split("=")[0]
        response = client.get(f"{path}?{query}")
        assert response.status_code == 400, (path, query, response.text[:200])
        error = response.json()["error"]
        assert error["message"] == f"the parameter {name} is given 2 times", error
        assert error["hint"].startswith(f"give {name} once; only the filter lists (paths, folders, tags, kinds")
    # The filter lists repeat on purpose: their values are alternatives.
    listed = client.get("/api/search?q=notice+period&folders=law&folders=nowhere&kinds=md&kinds=pdf")
    assert listed.status_code == 200 and listed.json()["results"]


def test_out_of_range_ids_are_404s(client: Any) -> None:
    for card in ("9" * 30, "9" * 5000, "0", "18446744073709551616"):
        response = client.post(f"/api/study/cards/{card}/reviews", json={"rating": "good"})
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found", card[:30]
    missing = client.get("/api/study/materials/nope/lessons/" + "9" * 5000)
    assert missing.status_code == 404


def test_wrong_tokens_take_turns_and_the_right_one_never_waits(study_vault: Path, tmp_path: Path,
                                                               standin: StandinLLM) -> None:  # fmt: skip
    from starlette.testclient import TestClient

    app = make_app(study_vault, tmp_path / "i.db", standin.url, serve_token="correct-horse-battery")
    wrong = {"authorization": "Bearer wrong-token-000"}
    right = {"authorization": "Bearer correct-horse-battery"}
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            assert [client.get("/api/documents", headers=wrong).status_code for _ in range(5)] == [401] * 5
            assert client.get("/api/documents", headers=right).status_code == 200  # never waits
            assert client.get("/api/documents").status_code == 401  # no token offered: not a guess
            assert client.get("/?token=correct-horse-battery", follow_redirects=False).status_code == 303
            client.cookies.clear()
            started = time.monotonic()
            assert client.get("/api/documents", headers=wrong).status_code == 401  # its turn, 1 s on
            assert time.monotonic() - started >= 0.9
            assert client.get("/api/documents", headers=right).status_code == 200
    finally:
        app.notebook.close()


def test_wrong_tokens_turns_are_spaced_for_the_whole_server() -> None:
    from vaultseek.web.security import WrongTokens

    now = [1000.0]
    tokens = WrongTokens(clock=lambda: now[0])  # the one fake: the limiter's clock
    assert [tokens.turn() for _ in range(12)] == [(0.0, True)] * 5 + [
        (1.0, True), (3.0, True), (7.0, True), (15.0, True), (31.0, True), (60.0, False), (60.0, False)]  # fmt: skip
    now[0] += 61  # the last turn given was due at 1031; the spacing is at its 30 s ceiling
    assert tokens.turn() == (30.0, True)
    now[0] += WrongTokens.FORGET_AFTER + 1  # quiet for a quarter of an hour: forgotten
    assert tokens.turn() == (0.0, True)


def test_serve_takes_its_token_from_a_file_and_warns_about_the_flag(tmp_path: Path) -> None:
    import httpx

    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nalpha text here for the index\n")
    assert run_cli("index", str(vault), "-q").returncode == 0
    token_file = tmp_path / "token"
    token_file.write_text("correct-horse-battery-staple\n")
    token_file.chmod(0o600)
    with serve_with_token(vault, token_file, tmp_path / "serve.log") as server:
        assert httpx.get(f"{server.url}/api/documents", timeout=10).status_code == 401
        bearer = {"authorization": "Bearer correct-horse-battery-staple"}
        assert httpx.get(f"{server.url}/api/documents", headers=bearer, timeout=10).status_code == 200
        command_line = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        assert b"correct-horse" not in command_line
        output = server.output()
    assert "warning" not in output
    flag = run_cli("serve", "--vault", str(vault), "--token", "correct-horse-battery-staple", "--get", "/api/documents")
    assert flag.returncode == 0 and "warning: --token SECRET is visible to every user" in flag.stderr
    token_file.chmod(0o644)
    loose = run_cli("serve", "--vault", str(vault), "--token-file", str(token_file), "--get", "/api/documents")
    assert loose.returncode == 0 and "can be read by other users" in loose.stderr
    token_file.write_text("\n")
    empty = run_cli("serve", "--vault", str(vault), "--token-file", str(token_file), "--get", "/api/documents")
    assert empty.returncode == 2 and "is empty" in empty.stderr
    both = run_cli("serve", "--vault", str(vault), "--token", "x" * 20, "--token-file", str(token_file))
    assert both.returncode == 2 and "not allowed with" in both.stderr


# -- MCP over stdio ------------------------------------------------------------------------------
class StdioPeer:
    """The MCP server as a client's process sees it: JSON-RPC lines in and out."""

    def __init__(self, vault: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "mcp", "--vault", str(vault)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout

    def send(self, line: bytes | dict[str, Any]) -> None:
        self.stdin.write((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n")
        self.stdin.flush()

    def receive(self, timeout: float = 60) -> dict[str, Any]:
        ready, _, _ = select.select([self.stdout], [], [], timeout)
        assert ready, "the MCP server did not answer"
        reply: dict[str, Any] = json.loads(self.stdout.readline())
        return reply

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})  # fmt: skip
        return self.receive()


@pytest.fixture
def mcp_peer(indexed: Path) -> Iterator[StdioPeer]:
    peer = StdioPeer(indexed)
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})  # fmt: skip
    assert peer.receive()["id"] == 1
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    try:
        yield peer
    finally:
        peer.stdin.close()
        peer.process.wait(timeout=30)


def test_mcp_answers_malformed_lines_with_json_rpc_errors(mcp_peer: StdioPeer) -> None:
    mcp_peer.send(b"this is not json")
    assert mcp_peer.receive() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": "the message is not valid JSON (Expecting value: line 1 column 1 (char 0))"}}  # fmt: skip
    mcp_peer.send(DEEP.encode())
    deep = mcp_peer.receive()
    assert deep["id"] is None and deep["error"]["code"] == -32700 and "nested" in deep["error"]["message"]
    mcp_peer.send({"jsonrpc": "2.0", "id": 7, "method": 12})
    invalid = mcp_peer.receive()
    assert invalid["id"] == 7 and invalid["error"]["code"] == -32600
    found = mcp_peer.call(8, "search", {"query": "rotate refresh tokens", "k": 1})
    assert found["id"] == 8 and found["result"]["structuredContent"]["results"][0]["path"] == "security/oauth.md"


def test_mcp_answers_a_request_holding_half_an_emoji(mcp_peer: StdioPeer) -> None:
    """``"\\ud83d"`` (a lone surrogate, half an emoji) is JSON that Python reads and the SDK's
    parser refuses: the request was dropped and the client waited for ever."""
    found = mcp_peer.call(51, "search", {"query": "rotate refresh tokens \ud83d", "k": 1})
    assert found["id"] == 51 and found["result"]["structuredContent"]["results"][0]["path"] == "security/oauth.md"
    scoped = mcp_peer.call(52, "search", {"query": "tokens", "filters": {"folders": ["\ud800"], "tags": ["a\udfff"]}})
    assert scoped["id"] == 52 and scoped["result"]["structuredContent"]["results"] == []
    missing = mcp_peer.call(53, "get_note", {"path": "\ud800.md"})
    assert missing["id"] == 53 and missing["result"]["isError"] and "not in the index" in missing["result"]["content"][0]["text"]
    paired = mcp_peer.call(54, "search", {"query": "rotate refresh tokens \ud83d\ude00", "k": 1})  # a whole emoji
    assert paired["result"]["structuredContent"]["query"] == "rotate refresh tokens \U0001f600"


def test_mcp_refuses_an_oversized_request_unread_and_keeps_serving(mcp_peer: StdioPeer) -> None:
    huge = {"jsonrpc": "2.0", "id": 41, "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "x" * (20 * 1024 * 1024)}}}  # fmt: skip
    mcp_peer.send(huge)
    refused = mcp_peer.receive()
    assert refused == {"jsonrpc": "2.0", "id": 41, "error": {"code": -32600, "message": "the message is larger than 1 MB"}}
    long = mcp_peer.call(42, "search", {"query": "tokens " * (MAX_QUERY_CHARS // 7 + 1)})
    assert long["result"]["isError"] and f"longer than {MAX_QUERY_CHARS} characters" in long["result"]["content"][0]["text"]
    found = mcp_peer.call(43, "search", {"query": "rotate refresh tokens", "k": 1})
    assert found["result"]["structuredContent"]["results"][0]["path"] == "security/oauth.md"


# -- the daemon ----------------------------------------------------------------------------------
@pytest.fixture
def daemon(indexed: Path) -> Iterator[Path]:
    result = run_cli("daemon", "start", "--vault", str(indexed))
    assert result.returncode == 0, result.stderr
    try:
        yield indexed
    finally:
        run_cli("daemon", "stop", "--vault", str(indexed))


def raw_request(db: Path, payload: bytes, *, chunk: int = 1 << 20) -> dict[str, Any] | None:
    """Send ``payload`` on the daemon's socket as any process could, and read its reply."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(30)
    conn.connect(daemon_client.socket_file(db))
    try:
        try:
            for start in range(0, len(payload), chunk):
                conn.sendall(payload[start : start + chunk])
        except OSError:  # the daemon stopped reading: its reply is waiting
            pass
        line = daemon_client.read_line(conn, limit=1 << 20)
    finally:
        conn.close()
    return None if line is None else json.loads(line)


def test_the_daemon_refuses_an_oversized_request_unread(daemon: Path) -> None:
    db = load_config(vault=daemon).db
    assert db is not None
    query = b"x" * (60 * 1024 * 1024)
    reply = raw_request(db, b'{"v": 3, "op": "search", "query": "' + query + b'"}\n')
    assert reply is not None and reply["ok"] is False
    assert reply["error"]["message"] == "the request is larger than 4 MB"
    nested = raw_request(db, b'{"v": 3, "op": "search", "query": ' + DEEP.encode() + b"}\n")
    assert nested is not None and "nested more than 128 levels" in nested["error"]["message"]
    # Its own client does not send what the daemon would refuse: the caller answers in-process.
    assert daemon_client.request(db, {"op": "search", "query": query.decode()}) is None
    assert daemon_client.is_running(db) is not None


def test_the_daemon_serves_a_bounded_number_of_connections(daemon: Path) -> None:
    from vaultseek.agents.daemon import MAX_CONNECTIONS

    db = load_config(vault=daemon).db
    assert db is not None
    idle = []
    for _ in range(MAX_CONNECTIONS):  # connected, never sending: each holds a slot for up to 10 s
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(daemon_client.socket_file(db))
        idle.append(conn)
    try:
        time.sleep(0.5)  # the daemon accepts them
        busy = raw_request(db, b'{"v": 3, "op": "ping"}\n')
        assert busy is not None and busy["error"]["message"] == f"the daemon is busy ({MAX_CONNECTIONS} connections open)"
        assert daemon_client.request(db, {"op": "ping"}) is None  # its caller answers in-process
        running = daemon_client.is_running(db)  # but it does run: nothing may take its socket
        assert running is not None and running["busy"] is True and running["pid"] == int(
            daemon_client.pid_path(db).read_text())
        searched = run_cli("search", "rotate refresh tokens", "--vault", str(daemon), "-k", "1")
        assert searched.returncode == 0 and "security/oauth.md" in searched.stdout
    finally:
        for conn in idle:
            conn.close()
    deadline = time.monotonic() + 10
    while daemon_client.is_running(db) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert daemon_client.is_running(db) is not None
