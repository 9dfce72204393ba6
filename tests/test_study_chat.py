"""The chat API against a stand-in Ollama server over real HTTP: envelope order, grounding,
tools, persistence, errors the UI can show, stopping, and scopes under concurrency."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.standin_llm import StandinLLM

from study_fixtures import envelopes, make_app, make_study_vault


def ask(client: Any, question: str, **body: Any) -> tuple[list[dict[str, Any]], Any]:
    with client.stream("POST", "/api/chat", json={"question": question, **body}) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("application/x-ndjson")
        return envelopes(response.iter_lines()), response.headers


def test_envelopes_in_order_grounded_and_cited(client: Any, standin: StandinLLM) -> None:
    items, headers = ask(client, "what is the notice period for a tenancy? #think", think=True)
    kinds = [i["type"] for i in items]
    # The sources come first (as soon as retrieval is done), then thinking, then the answer.
    assert kinds[0] == "metadata" and kinds[1] == "thinking" and kinds[-1] == "done"
    first_text = kinds.index("text")
    assert "thinking" not in kinds[first_text:]
    assert items[0]["data"]["question"]["text"] == "what is the notice period for a tenancy? #think"
    citations = items[kinds.index("metadata")]["data"]["citations"]
    assert citations[0]["path"] == "law/tenancy.md" and citations[0]["section"] == "Notice period"
    assert {"n", "path", "section", "page", "slide", "snippet", "chunk_id"} <= set(citations[0])
    answer = "".join(i["data"]["text"] for i in items if i["type"] == "text")
    assert "[1]" in answer
    done = items[-1]["data"]
    assert done["tokens"] == {"prompt": 321, "completion": 8}
    assert {"retrieval_ms", "first_token_ms", "total_ms"} <= set(done["timings"])
    assert done["conversation_id"] == headers["x-conversation-id"] and not done["stopped"]
    # The model saw numbered sources and the instruction to cite them.
    system = standin.requests[-1]["messages"][0]["content"]
    assert "[1] law/tenancy.md · Notice period" in system and "Cite every claim" in system
    assert standin.requests[-1]["think"] is True


def test_conversation_persists_and_resumes(client: Any, standin: StandinLLM) -> None:
    _, headers = ask(client, "notice period for tenancy?")
    cid = headers["x-conversation-id"]
    ask(client, "and how must it be signed?", conversation_id=cid)
    history = [m["role"] for m in standin.requests[-1]["messages"]]
    assert history == ["system", "user", "assistant", "user"]
    saved = client.get(f"/api/conversations/{cid}").json()
    assert [m["role"] for m in saved["messages"]] == ["user", "assistant", "user", "assistant"]
    assert saved["messages"][1]["citations"][0]["path"] == "law/tenancy.md"
    assert saved["messages"][1]["content"].startswith("According to [1]")
    listed = client.get("/api/conversations").json()["conversations"]
    assert listed[0]["id"] == cid and listed[0]["messages"] == 4
    assert client.delete(f"/api/conversations/{cid}").status_code == 200
    missing = client.get(f"/api/conversations/{cid}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    bad = client.post("/api/chat", json={"question": "x", "conversation_id": cid})
    assert bad.status_code == 404 and "hint" in bad.json()["error"]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("calculator", {"expression": "(12.5 * 4) / 5"}, '"result": 10'),
        ("current_time", {}, str(time.localtime().tm_year)),
        ("list_documents", {}, "law/tenancy.md"),
        ("search_knowledge_base", {"query": "sourdough starter"}, "cooking/bread.md"),
        ("summarise_document", {"path": "law/tenancy.md"}, "three months"),
        ("compare_documents", {"path_a": "law/tenancy.md", "path_b": "cooking/bread.md", "question": "what is required"}, "Document B (cooking/bread.md)"),
        ("no_such_tool", {}, "no tool called"),
        ("calculator", {"expression": "__import__('os')"}, "not allowed"),
    ],
)
def test_tools(client: Any, standin: StandinLLM, tool: str, arguments: dict[str, Any], expected: str) -> None:
    items, _ = ask(client, f"use a tool #tool:{tool} {json.dumps(arguments)}")
    calls = [i["data"]["tool_call"] for i in items if i["type"] == "metadata" and "tool_call" in i["data"]]
    assert [c["name"] for c in calls] == [tool]
    assert expected in calls[0]["result"]
    tool_turn = standin.requests[-1]["messages"][-1]
    assert tool_turn["role"] == "tool" and tool_turn["tool_name"] == tool
    assert standin.requests[0]["tools"][0]["function"]["name"] == "search_knowledge_base"
    assert items[-1]["type"] == "done" and items[-1]["data"]["tools"][0]["name"] == tool


def test_search_tool_respects_the_scope(client: Any) -> None:
    items, _ = ask(client, '#tool:search_knowledge_base {"query": "sourdough starter flour"}', scope={"folders": ["law"]})
    citations = [c["path"] for i in items if i["type"] == "metadata" for c in i["data"]["citations"]]
    assert citations and set(citations) == {"law/tenancy.md"}


@pytest.mark.parametrize(
    ("question", "model", "code", "hint"),
    [
        ("hello", "missing", "model_missing", "ollama pull missing"),
        ("hello #context", "standin", "context_too_long", "llm_context"),
        ("hello #malformed", "standin", "llm_error", "llm_url"),
        ("hello #cut", "standin", "llm_unavailable", "log"),
        ("hello #midstream-error", "standin", "llm_unavailable", "log"),
    ],
)
def test_llm_failures_become_error_envelopes(study_vault: Path, tmp_path: Path, standin: StandinLLM,
                                             question: str, model: str, code: str, hint: str) -> None:  # fmt: skip
    from starlette.testclient import TestClient

    app = make_app(study_vault, tmp_path / "i.db", standin.url, llm_model=model)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            items, _ = ask(client, question)
    finally:
        app.notebook.close()
    errors = [i["data"] for i in items if i["type"] == "error"]
    assert len(errors) == 1 and errors[0]["code"] == code and hint in (errors[0]["hint"] or ""), errors
    assert items[-1]["type"] == "done"


def test_server_down_is_an_actionable_error(study_vault: Path, tmp_path: Path) -> None:
    import socket

    from starlette.testclient import TestClient

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = make_app(study_vault, tmp_path / "i.db", f"http://127.0.0.1:{port}")
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            items, _ = ask(client, "hello")
            status = client.get("/api/status").json()
    finally:
        app.notebook.close()
    error = next(i["data"] for i in items if i["type"] == "error")
    assert error["code"] == "llm_unavailable" and "refused" in error["message"]
    assert status["llm"]["ok"] is False
    # The header's model status says how to bring the server back, at the address the app asks.
    assert "`ollama serve`" in status["llm"]["hint"] and f"127.0.0.1:{port}" in status["llm"]["hint"], status


def test_bad_requests_are_json_errors(client: Any) -> None:
    for body in ({"question": ""}, {"question": "x", "k": 0}, {"question": "x", "scope": "law"},
                 {"question": "x", "scope": {"colour": ["red"]}}):  # fmt: skip
        response = client.post("/api/chat", json=body)
        assert response.status_code == 400 and response.json()["error"]["message"]
    raw = client.post("/api/chat", content=b"{not json", headers={"content-type": "application/json"})
    assert raw.status_code == 400 and raw.json()["error"]["code"] == "bad_request"
    assert client.get("/api/nope").json()["error"]["code"] == "not_found"
    assert client.delete("/api/search").json()["error"]["code"] == "method_not_allowed"


def test_half_an_emoji_in_a_body_is_text_not_an_internal_error(client: Any) -> None:
    """A lone surrogate escape (``"\\ud83d"``, half an emoji) in a JSON body reached the
    database: the chat, a category scope and a search filter answered 500 "this is a bug"."""

    def post(path: str, body: dict[str, Any]) -> Any:  # as JSON escapes it: the client would not encode it
        return client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})

    chat = post("/api/chat", {"question": "what is the notice period for a tenancy? \ud83d"})
    items = envelopes(chat.iter_lines())
    assert chat.status_code == 200 and items[-1]["type"] == "done", items
    assert items[0]["data"]["question"]["text"] == "what is the notice period for a tenancy? ?"
    assert items[0]["data"]["citations"][0]["path"] == "law/tenancy.md"
    uncategorised = post("/api/chat", {"question": "notice period", "scope": {"categories": ["\ud800"]}})
    assert uncategorised.status_code == 200 and envelopes(uncategorised.iter_lines())[0]["data"]["citations"] == []
    refused = post("/api/chat", {"question": "notice period", "scope": {"folders": ["\ud800"]}})
    assert refused.status_code == 400 and "no folder '?'" in refused.json()["error"]["message"], refused.json()
    found = post("/api/search", {"query": "notice period", "filters": {"tags": ["\udfff"]}})
    assert found.status_code == 200 and found.json()["notices"] == ["no note has the tag '?'"]


def test_a_scope_naming_nothing_is_refused_before_the_model_is_asked(client: Any, standin: StandinLLM) -> None:
    asked = len(standin.requests)
    for scope, words in (({"folders": ["Law"]}, "did you mean 'law'?"), ({"kinds": ["exe"]}, "unknown kind 'exe'")):
        response = client.post("/api/chat", json={"question": "what is the notice period?", "scope": scope})
        assert response.status_code == 400
        assert words in response.json()["error"]["message"]
    assert len(standin.requests) == asked


def test_stop_button_closes_the_upstream_stream(live: Any, standin: StandinLLM) -> None:
    started = time.monotonic()
    with httpx.Client(base_url=live.url, timeout=30) as http:
        with http.stream("POST", "/api/chat", json={"question": "notice period #slow"}) as response:
            cid = response.headers["x-conversation-id"]
            items = []
            for line in response.iter_lines():
                items.append(json.loads(line))
                if items[-1]["type"] == "text":
                    assert http.post(f"/api/chat/{cid}/stop").json()["stopped"] is True
        assert items[-1]["type"] == "done" and items[-1]["data"]["stopped"] is True
        assert sum(1 for i in items if i["type"] == "text") < 4
        assert time.monotonic() - started < 1.5  # 8 slow tokens would take 1.6 s
        assert standin.closed_early.wait(3)
        saved = http.get(f"/api/conversations/{cid}").json()["messages"][-1]
        assert saved["meta"]["stopped"] is True and saved["content"]


def test_closing_the_tab_stops_generation_and_keeps_the_partial_answer(live: Any, standin: StandinLLM) -> None:
    with httpx.Client(base_url=live.url, timeout=30) as http:
        with http.stream("POST", "/api/chat", json={"question": "notice period #slow"}) as response:
            cid = response.headers["x-conversation-id"]
            for line in response.iter_lines():
                if json.loads(line)["type"] == "text":
                    break  # leaving the block closes the connection mid-answer
        assert standin.closed_early.wait(5)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            messages = http.get(f"/api/conversations/{cid}").json()["messages"]
            if len(messages) == 2:
                break
            time.sleep(0.05)
        assert messages[-1]["role"] == "assistant" and messages[-1]["meta"]["stopped"] is True


def test_concurrent_scopes_never_mix(tmp_path: Path) -> None:
    """Two tabs ask at once under different scopes: each answer cites only its own scope,
    and each prompt the model saw holds only that scope's sources."""
    from vaultseek.web.server import BackgroundServer

    vault = make_study_vault(tmp_path)
    for i in range(6):  # enough overlapping text that an unscoped search mixes the folders
        (vault / "law" / f"rules{i}.md").write_text(f"# Rules {i}\n\nRules about the deadline and the notice, rule {i}.\n")
        (vault / "cooking" / f"rules{i}.md").write_text(f"# Kitchen {i}\n\nRules about the deadline and the notice for the oven, rule {i}.\n")
    with StandinLLM(token_delay=0.01) as standin:
        app = make_app(vault, tmp_path / "i.db", standin.url)
        try:
            with BackgroundServer(app) as server:

                def chat(folder: str) -> tuple[str, set[str]]:
                    response = httpx.post(f"{server.url}/api/chat", timeout=30,
                                          json={"question": "rules about the deadline and the notice", "scope": {"folders": [folder]}})  # fmt: skip
                    items = envelopes(response.text.splitlines())
                    return folder, {c["path"] for i in items if i["type"] == "metadata" for c in i["data"]["citations"]}

                with ThreadPoolExecutor(8) as pool:
                    results = list(pool.map(chat, ["law", "cooking"] * 6))
        finally:
            app.notebook.close()
    for folder, paths in results:
        assert paths and all(p.startswith(folder + "/") for p in paths), (folder, paths)
    for request in standin.requests:
        system = request["messages"][0]["content"]
        assert ("law/" in system) != ("cooking/" in system)


def test_category_scope(client: Any) -> None:
    assert client.put("/api/documents/cooking/bread.md/category", json={"category": "kitchen"}).status_code == 200
    items, _ = ask(client, "how do I feed the sourdough starter?", scope={"categories": ["kitchen"]})
    paths = {c["path"] for i in items if i["type"] == "metadata" for c in i["data"]["citations"]}
    assert paths == {"cooking/bread.md"}
    # Within the category, a question it has nothing on shows no sources (relevance threshold).
    items, _ = ask(client, "notice period tenancy", scope={"categories": ["kitchen"]})
    assert all(not i["data"]["citations"] for i in items if i["type"] == "metadata")
    items, _ = ask(client, "notice period tenancy", scope={"categories": ["nothing-filed-here"]})
    assert all(not i["data"]["citations"] for i in items if i["type"] == "metadata")


def test_openai_compatible_backend_streams_reasoning_and_tool_fragments(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> None:
    from starlette.testclient import TestClient

    app = make_app(study_vault, tmp_path / "i.db", standin.url + "/v1", llm_backend="openai")
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            items, _ = ask(client, "notice period #think", think=True)
            tooled, _ = ask(client, '#tool:calculator {"expression": "6*7"}')
            assert client.get("/api/status").json()["llm"]["ok"] is True
    finally:
        app.notebook.close()
    kinds = [i["type"] for i in items]
    assert kinds[:2] == ["metadata", "thinking"] and kinds.index("thinking") < kinds.index("text") and kinds[-1] == "done"
    call = next(i["data"]["tool_call"] for i in tooled if i["type"] == "metadata" and "tool_call" in i["data"])
    assert call["name"] == "calculator" and '"result": 42' in call["result"]
    assert standin.requests[-1]["messages"][-1]["role"] == "tool" and standin.requests[-1]["messages"][-1]["tool_call_id"] == "call_0"


def test_the_core_does_not_import_the_web_or_llm_stack() -> None:
    import subprocess
    import sys

    code = ("import sys, vaultseek.engine, vaultseek.cli.main; vaultseek.cli.main.build_parser();"
            "print(sorted(m for m in ('starlette', 'uvicorn', 'httpx', 'python_multipart', 'vaultseek.study', 'vaultseek.llm') if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ingestion_thread_is_the_only_writer(app: Any) -> None:
    assert threading.active_count() >= 1
    assert app.notebook.kb.ingest.thread.name == "vaultseek-writer"


def test_the_chat_reads_passages_two_of_one_note(tmp_path: Path, standin: StandinLLM) -> None:
    """The chat retrieves sections, not notes: a note whose two sections both answer the
    question gives two sources."""
    from starlette.testclient import TestClient

    vault = make_study_vault(tmp_path)
    (vault / "law" / "lease.md").write_text(
        "# Lease\n\n## Ending the lease\n\nA tenant ends the lease by giving a notice period of three months.\n\n"
        "## Notice in writing\n\nThe notice that ends a lease must be in writing and state the notice period.\n", "utf-8")  # fmt: skip
    app = make_app(vault, tmp_path / "index.db", standin.url)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            items, _ = ask(client, "what notice period ends a lease?")
    finally:
        app.notebook.close()
    citations = next(i["data"]["citations"] for i in items if i["type"] == "metadata")
    assert sorted(c["section"] for c in citations if c["path"] == "law/lease.md") == ["Ending the lease", "Notice in writing"]
