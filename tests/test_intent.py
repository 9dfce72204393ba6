"""Query intent detection (``intent.py``) and what it does to fusion weights."""

from __future__ import annotations

import pytest

from vaultseek.search.combine import fuse
from vaultseek.search.intent import LEANS, detect_intent, is_identifier
from vaultseek.search.params import SearchParams

IDENTIFIERS = [
    "_rrf_fuse",
    "MAX_RETRIES",
    "__init__",
    "HttpClient",
    "getUserName",
    "XMLParser",
    "os.path.join",
    "config.toml",
    "parse_note(text)",
    "foo()",
    "src/vaultseek/cli.py",
    "/etc/hosts",
    "~/.config/vaultseek",
    r"C:\Windows\System32",
    "v1.2.3",
    "3.11",
    "1.0.0-beta.2",
    "E0425",
    "ORA-00942",
    "CVE-2021-44228",
    "HTTP 404",
    "exit code 137",
    "0x80070005",
    "--max-tokens",
    "`rotate`",
    "why does E0425 happen here",  # a question, but only BM25 can match the code
    "(see parse_note)",
]
QUESTIONS = [
    "how do I rotate oauth tokens",
    "what is reciprocal rank fusion?",
    "why did the nightly backup job fail",
    "steps to copy files to a remote server over ssh",  # long, no question word
    "wie kündige ich meinen Mietvertrag",
]
NEITHER = [
    "rotate refresh tokens",
    "sourdough starter",
    "Mietrecht Kündigung",
    "e.g. apples",
    "and/or",
    "TCP/IP stack",
    "well-known ports",
    "U.S. history",
    "NASA",
    "COVID-19",
    "what?",
    "",
    "   ",
]


@pytest.mark.parametrize("query", IDENTIFIERS)
def test_identifier_like_queries_lean_lexical(query: str) -> None:
    assert detect_intent(query) == "identifier"


@pytest.mark.parametrize("query", QUESTIONS)
def test_long_natural_language_questions_lean_on_meaning(query: str) -> None:
    assert detect_intent(query) == "question"


@pytest.mark.parametrize("query", NEITHER)
def test_short_plain_words_keep_the_configured_weights(query: str) -> None:
    assert detect_intent(query) is None


def test_token_check_ignores_surrounding_punctuation() -> None:
    assert is_identifier('"HttpClient",') and is_identifier("E0425.") and is_identifier("`x`".strip("`") + "_y")
    assert not is_identifier("hello") and not is_identifier("...") and not is_identifier("")


def test_lean_multiplies_the_fusion_weights() -> None:
    lists = {"bm25": [(1, 10.0), (2, 5.0)], "vector": [(2, 0.9), (1, 0.1)]}
    params = SearchParams()
    plain = fuse(lists, params)
    lexical = fuse(lists, params, lean=LEANS["identifier"])
    semantic = fuse(lists, params, lean=LEANS["question"])
    assert [f.item for f in plain] == [1, 2]  # 0.75 vs 0.25
    assert [f.item for f in lexical] == [1, 2] and lexical[0].score == pytest.approx(0.75 * 1.5)
    # 0.5625 for chunk 1 (bm25) vs 0.375 for chunk 2 (vector): still lexical, by less.
    assert semantic[0].score - semantic[1].score < plain[0].score - plain[1].score
    assert fuse(lists, SearchParams(fusion="rrf"), lean=LEANS["question"])[0].item == 2
