"""Reranking through the user's own server: llama.cpp's /v1/rerank and TEI's /rerank shapes
(stand-in servers over real HTTP), the chat model asked pointwise (the Ollama stand-in), the
fusion's guarantee for BM25's best section, and every failure answered by the plain hybrid
with a notice."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.ports import free_port
from tests.support.standin_llm import StandinLLM
from tests.support.standin_reranker import StandinReranker, word_overlap

from conftest import run_cli
from fake_secrets import fake_secrets
from vaultseek import open_index
from vaultseek.search.fusion import Fused
from vaultseek.search.rerank import KEPT_TOP, fuse_reranked

QUERY = "grace window for concurrent refresh requests"


@pytest.fixture
def indexed(sample_vault: Path) -> Iterator[Path]:
    with open_index(sample_vault, create=True) as index:
        index.sync()
    yield sample_vault


def chunk_view(vault: Path, query: str = QUERY, **options: Any) -> Any:
    settings_ = {
        key: options.pop(key)
        for key in list(options)
        if key.startswith(("rerank", "model_", "llm_", "expand"))
    }
    with open_index(vault, **settings_) as index:
        return index.search(query, view="chunks", **options)


def order(response: Any) -> list[int]:
    return [r.chunk_id for r in response.results]


# -- the fusion --------------------------------------------------------------------------------
@st.composite
def rankings(draw: st.DrawFn) -> tuple[list[Fused], dict[int, float | None], float]:
    size = draw(st.integers(1, 30))
    scores = sorted(draw(st.lists(st.floats(0, 10), min_size=size, max_size=size)), reverse=True)
    bm25_ranks = draw(st.permutations(range(1, size + 1)))
    fused = [
        Fused(item, score, {"bm25": rank})
        for item, (score, rank) in enumerate(zip(scores, bm25_ranks, strict=True))
    ]
    depth = draw(st.integers(1, size))
    given_ = {f.item: draw(st.none() | st.floats(-50, 50)) for f in fused[:depth]}
    return fused, given_, draw(st.floats(0, 1))


@settings(max_examples=300, deadline=None)
@given(rankings())
def test_the_reranker_never_drops_bm25s_best_out_of_the_top_3(
    case: tuple[list[Fused], dict[int, float | None], float],
) -> None:
    fused, scores, weight = case
    out = fuse_reranked(fused, scores, weight)
    assert sorted(f.item for f in out) == sorted(
        f.item for f in fused
    )  # nothing lost, nothing added
    best = next(f.item for f in fused if f.ranks["bm25"] == 1)
    before, after = [f.item for f in fused].index(best), [f.item for f in out].index(best)
    if before < KEPT_TOP:
        assert after < KEPT_TOP
    head = [f for f in out if f.item in scores]
    rest = [f for f in out if f.item not in scores]
    assert out == head + rest and [f.item for f in rest] == [
        f.item for f in fused if f.item not in scores
    ]
    assert all(a.score >= b.score for a, b in itertools.pairwise(out))  # the scores stay in order


def test_at_full_weight_the_head_follows_the_reranker_except_for_the_exact_match() -> None:
    fused = [Fused(i, 10.0 - i, {"bm25": i + 1}) for i in range(6)]
    out = fuse_reranked(
        fused, {i: float(i) for i in range(6)}, 1.0
    )  # the reranker reverses the order
    assert [f.item for f in out] == [5, 4, 0, 3, 2, 1]  # BM25 #1 (item 0) held at place 3
    assert out[0].signals["rerank"] == 1.0 and out[-1].signals["rerank"] == pytest.approx(0.2)
    unchanged = fuse_reranked(fused, {i: float(i) for i in range(6)}, 0.0)
    assert [f.item for f in unchanged] == list(range(6))


# -- llama.cpp and TEI over HTTP ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "path"), [("llama:bge-reranker-v2-m3", "/v1/rerank"), ("tei", "/rerank")]
)
def test_a_rerank_server_reorders_the_head(indexed: Path, kind: str, path: str) -> None:
    plain = chunk_view(indexed)
    with StandinReranker() as server:
        reranked = chunk_view(indexed, rerank=kind, rerank_url=server.url, rerank_weight=1.0)
    assert reranked.reranking is not None and reranked.reranking.reranker == kind
    assert reranked.reranking.candidates == len(plain.results) and reranked.reranking.ms > 0
    assert not reranked.notices, reranked.notices
    assert sorted(order(reranked)) == sorted(order(plain))
    route, body = server.requests[0]
    assert route == path and body["query"] == QUERY
    sent = body["documents"] if path == "/v1/rerank" else body["texts"]
    assert len(sent) == len(plain.results)
    if kind.startswith("llama:"):
        assert body["model"] == "bge-reranker-v2-m3"
    overlap = {
        r.chunk_id: word_overlap(QUERY, f"{r.heading_context}\n{r.text}") for r in reranked.results
    }
    kept = [r.chunk_id for r in reranked.results if r.bm25_rank == 1][
        :1
    ]  # BM25's best keeps its top-3 place
    others = [chunk for chunk in order(reranked) if chunk not in kept]
    assert [overlap[c] for c in others] == sorted((overlap[c] for c in others), reverse=True)
    assert all("rerank" in r.signals for r in reranked.results)
    body_json = reranked.to_dict()
    assert body_json["reranking"]["reranker"] == kind and body_json["reranking"]["ms"] > 0


def test_a_reranker_that_disagrees_cannot_bury_the_exact_match(indexed: Path) -> None:
    plain = chunk_view(indexed, "_rrf_fuse helper")
    best = next(r.chunk_id for r in plain.results if r.bm25_rank == 1)
    assert best in order(plain)[:KEPT_TOP]
    with StandinReranker(behaviour="reverse") as server:
        reranked = chunk_view(
            indexed, "_rrf_fuse helper", rerank="tei", rerank_url=server.url, rerank_weight=1.0
        )
    assert reranked.reranking is not None
    assert order(reranked) != order(plain)  # the reranker did move things
    assert best in order(reranked)[:KEPT_TOP]


def test_the_query_is_scrubbed_before_it_is_sent(indexed: Path) -> None:
    secret = next(s for s in fake_secrets() if s.pattern.startswith("openai"))
    with StandinReranker() as server:
        chunk_view(indexed, f"refresh tokens {secret.secret}", rerank="tei", rerank_url=server.url)
    sent = json.dumps(server.requests)
    assert secret.secret not in sent and "refresh tokens" in sent


# -- failures: the hybrid answers, a notice says why ---------------------------------------------
def _closed_port() -> str:
    return f"http://127.0.0.1:{free_port()}"


@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [
        ("down", "refused the connection (is it running?)"),
        ("slow", "did not answer within 0.5 s"),
        ("500", "failed (HTTP 500): the reranker crashed"),
        ("garbage", "answered without scores"),
        ("empty", "answered without scores"),
    ],
)
def test_a_failing_reranker_leaves_the_hybrid_and_says_so(
    indexed: Path, behaviour: str, expected: str
) -> None:
    plain = chunk_view(indexed)
    with StandinReranker(behaviour="ok" if behaviour == "down" else behaviour, delay=3.0) as server:
        url = _closed_port() if behaviour == "down" else server.url
        answer = chunk_view(indexed, rerank="llama", rerank_url=url, model_timeout=0.5)
    assert answer.reranking is None
    assert order(answer) == order(plain)
    notice = next(n for n in answer.notices if n.startswith("reranking skipped"))
    assert expected in notice
    assert "showing the hybrid's results" in notice


def test_the_request_turns_reranking_on_and_off(indexed: Path) -> None:
    with (
        StandinReranker() as server,
        open_index(indexed, rerank="tei", rerank_url=server.url, rerank_depth=3) as index,
    ):
        off = index.search(QUERY, view="chunks", rerank=False)
        on = index.search(QUERY, view="chunks")
    assert off.reranking is None and on.reranking is not None and on.reranking.candidates == 3
    assert len(server.requests) == 1  # `on` only
    with open_index(indexed) as index:
        asked = index.search(QUERY, rerank=True)
    assert asked.reranking is None
    assert any('no reranker is set up (rerank = "off")' in n for n in asked.notices)


# -- the chat model, pointwise -----------------------------------------------------------------
def test_the_chat_model_scores_each_passage(indexed: Path) -> None:
    with StandinLLM() as llm, open_index(indexed, rerank="chat", llm_url=llm.url, llm_model="judge", rerank_depth=3,
                                         rerank_weight=1.0) as index:  # fmt: skip
        llm.scripted = ['```json\n{"score": 2}\n```', 'Sure! {"score": 9,}', "no idea"]
        answer = index.search(QUERY, view="chunks")
        plain = index.search(QUERY, view="chunks", rerank=False)
    assert answer.reranking is not None and answer.reranking.reranker == "chat:judge"
    assert len(llm.requests) == 3 and all(
        r["format"]["required"] == ["score"] for r in llm.requests
    )
    assert all(QUERY in r["messages"][-1]["content"] for r in llm.requests)
    head = order(plain)[:3]
    # the second passage scored 9 goes first; the third (no score) keeps its hybrid standing
    assert order(answer)[0] == head[1] and set(order(answer)[:3]) == set(head)
    assert "rerank" not in next(r for r in answer.results if r.chunk_id == head[2]).signals


def test_a_chat_model_that_never_gives_a_score_is_a_notice(indexed: Path) -> None:
    with (
        StandinLLM() as llm,
        open_index(indexed, rerank="chat", llm_url=llm.url, rerank_depth=2) as index,
    ):
        llm.scripted = ["I think it is relevant", "{}"]
        answer = index.search(QUERY, view="chunks")
    assert answer.reranking is None
    assert any("gave no readable score" in n for n in answer.notices)


# -- the command line --------------------------------------------------------------------------
def test_cli_search_shows_the_rerankers_latency(indexed: Path) -> None:
    with StandinReranker() as server:
        env = {"VAULTSEEK_RERANK": "tei", "VAULTSEEK_RERANK_URL": server.url}
        shown = run_cli("search", QUERY, "--vault", str(indexed), "--no-daemon", env=env)
        body = run_cli("search", QUERY, "--vault", str(indexed), "--no-daemon", "--json", env=env)
        off = run_cli(
            "search",
            QUERY,
            "--vault",
            str(indexed),
            "--no-daemon",
            "--json",
            "--no-rerank",
            env=env,
        )
    assert shown.returncode == 0, shown.stderr
    assert "reranked the best" in shown.stdout and " by tei in " in shown.stdout
    answer = json.loads(body.stdout)
    assert answer["reranking"]["reranker"] == "tei" and answer["reranking"]["ms"] > 0
    assert json.loads(off.stdout)["reranking"] is None


def test_a_vault_file_cannot_choose_the_reranker_server(indexed: Path) -> None:
    (indexed / ".vaultseek.toml").write_text(
        'rerank = "tei"\nrerank_url = "http://203.0.113.9:8080"\n', "utf-8"
    )
    with open_index(indexed) as index:
        assert index.config.rerank == "tei" and index.config.rerank_url is None
        assert any("rerank_url" in n for n in index.config.notices)


def test_eval_measures_the_reranker_beside_the_plain_hybrid(indexed: Path, tmp_path: Path) -> None:
    golden = tmp_path / "q.jsonl"
    golden.write_text(
        json.dumps({"id": "1", "query": QUERY, "relevant": {"security/oauth.md": 1}})
        + "\n"
        + json.dumps(
            {
                "id": "2",
                "query": "feed the starter flour water",
                "relevant": {"cooking/bread.md": 1},
            }
        )
        + "\n",
        "utf-8",
    )
    args = (
        "eval",
        "--golden",
        str(golden),
        "--vault",
        str(indexed),
        "--modes",
        "hybrid",
        "--rerank",
        "--json",
    )
    with StandinReranker() as server:
        measured = run_cli(
            *args, env={"VAULTSEEK_RERANK": "tei", "VAULTSEEK_RERANK_URL": server.url}
        )
        asked = len(server.requests)
    assert measured.returncode == 0, measured.stderr
    rows = {row["configuration"]: row for row in json.loads(measured.stdout)["results"]}
    assert {"hybrid", "hybrid+rerank"} <= set(rows)
    assert (
        asked == 3
    )  # the untimed first query, then both judged queries; the plain rows asked nothing
    failed = run_cli(*args, env={"VAULTSEEK_RERANK": "tei", "VAULTSEEK_RERANK_URL": _closed_port()})
    assert failed.returncode == 1 and "hybrid+rerank: reranking skipped" in failed.stderr
