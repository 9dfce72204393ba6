"""Query expansion through the chat model (the Ollama stand-in over real HTTP): what is asked,
what is searched, what the answer shows, the cache beside the index, the vault's language,
and failures answered by the plain hybrid with a notice."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.support.standin_llm import StandinLLM

from conftest import run_cli
from fake_secrets import fake_secrets
from vaultseek import open_index
from vaultseek.errors import ModelReplyError
from vaultseek.search.expansion import parse_expansion, prompt
from vaultseek.search.servers import CACHE_SUFFIX

REPLY = """Here is the JSON:
```json
{"lexical": ["sourdough starter", "flour water", "Sourdough Starter"],
 "semantic": ["How do I keep a bread starter alive?"],
 "passage": "Feed the starter twice a day with flour and water.",}
```"""
QUERY = "wobbly zzqx culture upkeep"
"""No word of it is in the vault: only the sub-queries can find the bread note."""


@pytest.fixture
def indexed(sample_vault: Path) -> Iterator[Path]:
    with open_index(sample_vault, create=True) as index:
        index.sync()
    yield sample_vault


@pytest.fixture
def llm() -> Iterator[StandinLLM]:
    with StandinLLM() as server:
        yield server


def test_the_sub_queries_are_searched_and_shown(indexed: Path, llm: StandinLLM) -> None:
    with open_index(indexed, expand=True, llm_url=llm.url, llm_model="writer") as index:
        llm.scripted = [REPLY]
        answer = index.search(QUERY, mode="bm25")
        plain = index.search(QUERY, mode="bm25", expand=False)
    assert not plain.results
    assert answer.results[0].path == "cooking/bread.md"
    assert (
        answer.results[0].signals["expansion"] == 1.0
    )  # all of its score came from the sub-queries
    expansion = answer.expansion
    assert expansion is not None and not expansion.cached and expansion.model == "ollama:writer"
    assert expansion.lexical == ("sourdough starter", "flour water")  # the repeat dropped
    assert expansion.semantic == ("How do I keep a bread starter alive?",)
    assert expansion.passage == "Feed the starter twice a day with flour and water."
    shown = answer.to_dict()["expansion"]
    assert shown["lexical"] == ["sourdough starter", "flour water"] and shown["passage"].startswith(
        "Feed"
    )
    asked = llm.requests[0]
    assert asked["model"] == "writer" and asked["messages"][-1]["content"] == QUERY
    assert asked["format"]["required"] == ["lexical", "semantic", "passage"]


def test_an_expansion_is_cached_beside_the_index(indexed: Path, llm: StandinLLM) -> None:
    with open_index(indexed, expand=True, llm_url=llm.url) as index:
        llm.scripted = [REPLY]
        first = index.search(QUERY)
        db = Path(index.config.db)
    with open_index(
        indexed, expand=True, llm_url=llm.url
    ) as index:  # a new process would read the file
        again = index.search(QUERY)
    assert len(llm.requests) == 1
    assert first.expansion is not None and again.expansion is not None and again.expansion.cached
    assert again.expansion.lexical == first.expansion.lexical
    assert [r.path for r in again.results] == [r.path for r in first.results]
    assert (db.parent / (db.name + CACHE_SUFFIX)).is_file()
    with open_index(indexed, expand=True, llm_url=llm.url, llm_model="another") as index:
        llm.scripted = [REPLY]
        index.search(QUERY)
    assert len(llm.requests) == 2  # cached per model


def test_the_model_is_asked_in_the_vaults_language(
    vault: Path, write: Callable[..., Path], llm: StandinLLM
) -> None:
    for n in range(4):
        write(
            f"n{n}.md",
            f"# Notiz {n}\n\nDie Miete wird monatlich gezahlt und nicht bar, oder per Überweisung.\n",
        )
    with open_index(vault, create=True, expand=True, llm_url=llm.url) as index:
        index.sync()
        llm.scripted = ['{"lexical": ["Miete Überweisung"], "semantic": [], "passage": ""}']
        answer = index.search("wie zahle ich die Miete")
    assert "in German" in llm.requests[0]["messages"][0]["content"]
    assert answer.expansion is not None and answer.expansion.language == "german"
    assert answer.expansion.passage is None and answer.expansion.lexical == ("Miete Überweisung",)
    assert "German" not in prompt(None) and "write them in German" in prompt("german")


def test_the_query_is_scrubbed_before_it_is_sent_or_cached(indexed: Path, llm: StandinLLM) -> None:
    secret = next(s for s in fake_secrets() if s.pattern.startswith("github"))
    with open_index(indexed, expand=True, llm_url=llm.url) as index:
        llm.scripted = [REPLY]
        index.search(f"bread starter {secret.secret}")
        cache = Path(index.config.db).with_name(Path(index.config.db).name + CACHE_SUFFIX)
    assert secret.secret not in json.dumps(llm.requests) and "bread starter" in json.dumps(
        llm.requests
    )
    assert secret.secret not in cache.read_text("utf-8")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("I cannot help with that.", "held no sub-queries"),
        ('{"lexical": [], "semantic": [3, null], "passage": "  "}', "held no sub-queries"),
    ],
)
def test_a_reply_without_sub_queries_leaves_the_hybrid(
    indexed: Path, llm: StandinLLM, reply: str, expected: str
) -> None:
    with open_index(indexed, expand=True, llm_url=llm.url) as index:
        llm.scripted = [reply]
        answer = index.search("refresh token rotation")
        plain = index.search("refresh token rotation", expand=False)
        llm.scripted = [REPLY]
        later = index.search("refresh token rotation")
    assert answer.expansion is None and [r.chunk_id for r in answer.results] == [
        r.chunk_id for r in plain.results
    ]
    assert any(n.startswith("query expansion skipped") and expected in n for n in answer.notices)
    assert later.expansion is not None  # a failure is not cached


def test_a_server_that_is_down_or_fails_is_a_notice(indexed: Path, llm: StandinLLM) -> None:
    with open_index(indexed, expand=True, llm_url="http://127.0.0.1:9", model_timeout=5) as index:
        down = index.search("refresh token rotation")
    assert down.expansion is None and down.results
    assert any(
        "query expansion skipped" in n and "refused the connection" in n for n in down.notices
    )
    with open_index(indexed, expand=True, llm_url=llm.url, llm_model="missing") as index:
        missing = index.search("refresh token rotation")
    assert any(
        "query expansion skipped" in n and "ollama pull missing" in n for n in missing.notices
    )
    with open_index(indexed, expand=True, llm_url=llm.url, model_timeout=0.3) as index:
        slow = index.search("refresh token rotation #slow", syntax=False)
    assert any("did not answer within 0.3 s" in n for n in slow.notices), slow.notices


def test_parsing_is_tolerant_but_not_credulous() -> None:
    lexical, semantic, passage = parse_expansion(
        '{"keywords": "a b", "questions": ["c?"], "answer": "d"}'
    )
    assert (lexical, semantic, passage) == (("a b",), ("c?",), "d")
    with pytest.raises(ModelReplyError):
        parse_expansion('["just", "a", "list"]')


def test_cli_json_shows_what_was_searched(indexed: Path, llm: StandinLLM) -> None:
    llm.scripted = [REPLY]
    env = {"VAULTSEEK_EXPAND": "true", "VAULTSEEK_LLM_URL": llm.url}
    body = run_cli(
        "search", QUERY, "--vault", str(indexed), "--no-daemon", "--json", "--mode", "bm25", env=env
    )
    assert body.returncode == 0, body.stderr
    answer = json.loads(body.stdout)
    assert answer["expansion"]["lexical"] == ["sourdough starter", "flour water"]
    assert answer["results"][0]["path"] == "cooking/bread.md"
    shown = run_cli(
        "search", QUERY, "--vault", str(indexed), "--no-daemon", "--mode", "bm25", env=env
    )
    assert "expanded by ollama:qwen3:4b (" in shown.stdout and "cached" in shown.stdout
    assert "keywords sourdough starter · flour water" in shown.stdout
