"""The query syntax through the real engine on small real vaults: a quoted phrase is required
in every mode, ``-word`` leaves out whole notes, ``prefix*`` finds its words in every mode,
each field operator narrows as its filter does (and meets the request's filters), quotes
protect operators, the response says what was read, nothing-left answers say why, and the
agent hook and the study chat, which pass prose, are not parsed. (Every surface's answer and
refusal: ``test_contract.py``; both backends: ``test_backends.py``; the parser alone:
``test_syntax.py``.)"""

from __future__ import annotations

import os
import shutil
import textwrap
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, run_cli
from vaultseek import open_index
from vaultseek.agents.hooks import HookSettings, user_prompt_context
from vaultseek.engine import Index
from vaultseek.errors import QueryError
from vaultseek.records import SEARCH_MODES
from vaultseek.search.relevance import NO_MATCH, RELEVANT

NOTES = {
    "work/sync.md": """
        ---
        tags: [work, sync]
        status: done
        priority: 5
        ---
        # Sync setup

        We sync the vault to the phone with the Android app every night.
        """,
    "work/Phones.md": """
        ---
        tags: [work]
        status: open
        priority: 2
        ---
        # Phones

        ## Android

        The Android phone syncs over the local network at home.

        ## iPhone

        The iPhone syncs through the cloud, so its sync is slower.
        """,
    "daily/2020-01-02.md": """
        # Daily note

        Meeting about the sync schedule with the whole team.
        """,
    "security/rotation.md": """
        # Rotation

        Rotate the refresh token on every use and revoke the old one.
        """,
    "security/apart.md": """
        # Apart

        The token was old, so we had to refresh everything at once.
        """,
    "shell/terminal.md": """
        # Terminal

        Open a terminal window and run the command there.
        """,
    "shell/kill.md": """
        # Kill

        Terminate a hung process with kill; the window closes.
        """,
    "shell/window.md": """
        # Windows

        Resize a window and run the command again in another window.
        """,
    "notes/syntax.md": """
        # Search syntax

        Write tag: work to narrow a search, or -r for a recursive copy.
        """,
    "de/recht.md": """
        # Mietrecht

        Die Kündigungsfrist beträgt drei Monate.
        """,
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("operators") / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"), "utf-8")
    (root / "logs").mkdir()
    (root / "logs" / "sync.txt").write_text("sync log: the nightly sync finished without errors\n", "utf-8")
    old = datetime(2020, 1, 2, 9, 0).timestamp()
    os.utime(root / "daily" / "2020-01-02.md", (old, old))
    with open_index(root, db=db_of(root), create=True) as index:
        index.sync(remember=False)
    return root


def db_of(vault: Path) -> Path:
    return vault.parent / "index.db"


@pytest.fixture
def index(vault: Path) -> Iterator[Index]:
    with open_index(vault, db=db_of(vault)) as opened:
        yield opened


def paths(index: Index, query: str, **options: Any) -> list[str]:
    return [hit.path for hit in index.search(query, k=20, **options).results]


def notes(index: Index, query: str, **options: Any) -> set[str]:
    return set(paths(index, query, **options))


def test_a_quoted_phrase_is_required_in_every_mode(index: Index) -> None:
    for mode in ("hybrid", "bm25", "vector"):
        assert notes(index, '"refresh token"', mode=mode) == {"security/rotation.md"}, mode
    assert "security/apart.md" in notes(index, "refresh token")  # the words apart: found without quotes
    # As the index matches a phrase: case, English endings and accents fold.
    assert notes(index, '"Refresh Tokens"', mode="bm25") == {"security/rotation.md"}
    assert notes(index, '"kundigungsfrist betragt"', mode="vector") == {"de/recht.md"}
    hit = index.search('"refresh token" revoke', mode="bm25").results[0]
    assert hit.path == "security/rotation.md" and hit.bm25_rank == 1 and "refresh token" in hit.snippet


def test_minus_leaves_out_every_chunk_of_a_note_that_holds_the_word(index: Index) -> None:
    for mode in ("hybrid", "bm25", "vector"):
        found = notes(index, "sync -android", mode=mode)
        assert found and "work/sync.md" not in found and "work/Phones.md" not in found, mode  # the iPhone section too
    assert "work/Phones.md" in notes(index, "iphone cloud")
    assert notes(index, 'sync -"android app"', mode="bm25") >= {"work/Phones.md"}  # only the phrase excludes
    assert "work/sync.md" not in notes(index, 'sync -"android app"')
    assert "work/Phones.md" not in notes(index, "sync -andr*", mode="bm25")


def test_a_capitalised_minus_word_excludes_unless_the_vault_writes_it_as_a_flag(tmp_path: Path) -> None:
    """German nouns are capitalised, and so are PowerShell's parameters: ``-Zahnarzt`` leaves out
    the notes that hold it, since no note writes it after a hyphen; ``-Recurse`` stays a word
    where a note writes it as a flag."""
    root = tmp_path / "vault"
    root.mkdir()
    (root / "termine.md").write_text("# Termine\n\nZahnarzt am Montag um neun Uhr, danach ein Termin beim Friseur.\n")
    (root / "planung.md").write_text("# Planung\n\nTermin mit dem Vermieter wegen der Heizung.\n")
    (root / "dateien.md").write_text("# Dateien\n\nGet-ChildItem -Recurse listet jeden Ordner, auch den Termin-Ordner.\n")
    with open_index(root, db=tmp_path / "index.db", create=True) as opened:
        opened.sync(remember=False)
        german = opened.search("Termin -Zahnarzt", k=20)
        assert german.parsed is not None and german.parsed.excluded == ("Zahnarzt",)
        assert {hit.path for hit in german.results} == {"planung.md", "dateien.md"}
        flag = opened.search("Termin -Recurse", k=20)
        assert flag.parsed is None or not flag.parsed.excluded  # a flag here: searched for
        assert flag.results[0].path == "dateien.md"
        assert "dateien.md" not in {hit.path for hit in opened.search("Termin -recurse", k=20).results}  # lower case excludes
        assert opened.search("-Zahnarzt").results[0].path == "termine.md"  # alone: searched for, not refused
        assert opened.search("Termin -ErrorAction", k=20).parsed is None  # more than one capital: a flag


def test_a_prefix_finds_its_words_in_every_mode(index: Index) -> None:
    expected = {"shell/terminal.md", "shell/kill.md"}  # "terminal", "Terminate"
    for mode in ("hybrid", "bm25", "vector"):
        assert notes(index, "termin*", mode=mode) == expected, mode
    response = index.search("termin*")
    assert response.parsed is not None and set(response.parsed.prefixes["termin*"]) <= {"terminal", "terminate"}
    assert response.parsed.text == " ".join(response.parsed.prefixes["termin*"])  # embedded as words, not "termin*"
    mixed = paths(index, "termin* window")
    assert set(mixed[:2]) == {"shell/terminal.md", "shell/kill.md"}, mixed  # both words outrank "window" alone


def test_a_prefix_is_judged_as_the_words_it_finds(index: Index) -> None:
    """No chunk holds ``kündig`` itself: read as typed it is a made-up word, and the one note
    holding *Kündigungsfrist* was judged no match (relevance ~0.001) in every mode."""
    word = index.search("Kündigungsfrist").results[0]
    for mode in ("hybrid", "bm25", "vector"):
        response = index.search("Kündig*", mode=mode)
        assert not response.no_match and NO_MATCH not in response.notices, mode
        best = response.results[0]
        assert best.path == "de/recht.md" and best.relevance is not None and best.relevance >= RELEVANT, (mode, best.relevance)
    assert index.search("Kündig*").results[0].relevance == pytest.approx(word.relevance)
    assert index.search("termin*").results[0].relevance >= RELEVANT  # a prefix that is a word stays as typed


@pytest.mark.parametrize(
    ("query", "expected", "filters"),
    [
        ("sync tag:sync", {"work/sync.md"}, {"tags": ["sync"]}),
        ("sync #sync", {"work/sync.md"}, {"tags": ["sync"]}),
        ("sync path:WORK", {"work/sync.md", "work/Phones.md"}, {"path_contains": ["work"]}),
        ("sync path:ork/Pho", {"work/Phones.md"}, {"path_contains": ["ork/pho"]}),
        ("sync file:phones", {"work/Phones.md"}, {"name_contains": ["Phones"]}),
        ('sync file:"sync.md"', {"work/sync.md"}, {"name_contains": ["sync.md"]}),
        ("sync kind:txt", {"logs/sync.txt"}, {"kinds": ["txt"]}),
        ("sync before:2021", {"daily/2020-01-02.md"}, {"modified_before": "2021"}),
        ("sync after:2021-06", {"work/sync.md", "work/Phones.md", "logs/sync.txt"}, {"modified_after": "2021-06"}),
        ("sync [status:done]", {"work/sync.md"}, {"where": ["status:done"]}),
        ("sync [priority>3]", {"work/sync.md"}, {"where": ["priority>3"]}),
        ("sync [priority<3]", {"work/Phones.md"}, {"where": ["priority<3"]}),
        ("sync tag:sync tag:nothing", {"work/sync.md"}, {"tags": ["sync", "nothing"]}),  # one field's values: alternatives
        ("sync tag:work kind:txt", set(), {"tags": ["work"], "kinds": ["txt"]}),  # different fields must all hold
    ],
)
def test_each_field_narrows_as_its_filter_does(index: Index, query: str, expected: set[str], filters: dict[str, Any]) -> None:
    assert notes(index, query, mode="bm25") == expected
    for mode in ("hybrid", "vector"):  # the same files as the filter asked for in the request
        assert paths(index, query, mode=mode) == paths(index, "sync", mode=mode, filters=filters), mode
    assert "shell/kill.md" in notes(index, "sync", mode="vector")  # (the vector list alone takes any file)


def test_fields_meet_the_requests_own_filters(index: Index) -> None:
    assert notes(index, "sync tag:work", filters={"tags": ["sync"]}) == {"work/sync.md"}  # both tags
    assert notes(index, "sync tag:sync", filters={"tags": ["work"]}) == {"work/sync.md"}
    assert notes(index, "sync tag:work", filters={"folders": ["daily"]}) == set()
    assert notes(index, "sync path:work", filters={"path_contains": ["phones"]}) == {"work/Phones.md"}
    missing = index.search("sync tag:nosuchtag").notices
    assert any("no note has the tag 'nosuchtag'" in notice for notice in missing)


def test_quotes_keep_operators_as_text(index: Index) -> None:
    response = index.search('"tag:work"', mode="bm25")
    assert [hit.path for hit in response.results] == ["notes/syntax.md"]  # the words, not a filter
    assert response.parsed is not None and response.parsed.fields == () and response.parsed.required == ("tag:work",)
    assert notes(index, 'recursive "-r"', mode="bm25") == {"notes/syntax.md"}
    assert "notes/syntax.md" in notes(index, "error: work narrow")  # an unknown field is text


def test_the_response_says_what_was_read(index: Index) -> None:
    body = index.search('sync "android app" -iphone tag:work after:2021').to_dict()
    parsed = body["parsed"]
    assert parsed["text"] == "sync android app" and parsed["required"] == ["android app"]
    assert parsed["excluded"] == ["iphone"] and parsed["fields"] == ["tag:work", "after:2021"]
    assert parsed["filters"]["tags"] == ["work"] and parsed["filters"]["modified_after"].startswith("2021-01-01T00:00")
    assert [r["path"] for r in body["results"]] == ["work/sync.md"]
    assert index.search("sync android").to_dict()["parsed"] is None


def test_an_operator_that_leaves_nothing_says_so(index: Index) -> None:
    for mode in SEARCH_MODES[:3]:
        response = index.search('"exact words nobody wrote" sync', mode=mode)
        assert response.results == () and response.notices == ('no chunk contains "exact words nobody wrote"',), mode
    together = index.search('"android app" "whole team"')
    assert together.results == () and together.notices == ('no chunk contains all of "android app", "whole team"',)
    excluded = index.search("sync -sync", mode="bm25")
    assert excluded.results == ()
    assert excluded.notices == ('no result outside the 4 notes that contain "sync" (excluded)',)
    assert "shell/kill.md" in notes(index, "sync -sync", mode="vector")  # meaning: the notes without the word
    for mode in ("hybrid", "vector"):
        gone = index.search("termin* -terminate -terminal", mode=mode)
        assert gone.results == () and gone.notices == ('no result outside the 2 notes that contain "terminate", "terminal" (excluded)',)
    assert index.search("zzyzx*", mode="vector").notices == ("no word in the index starts with zzyzx",)


def test_syntax_off_reads_every_word_as_text(index: Index) -> None:
    response = index.search("sync -android", syntax=False)
    assert response.parsed is None
    assert "work/Phones.md" in [hit.path for hit in response.results]
    assert index.search("-android phones", syntax=False).results  # not "say what to look for"


def test_a_bad_operator_is_a_query_error_with_a_hint(index: Index) -> None:
    for query, message in [("-android", "say what to look for"), ("sync kind:zzz", "unknown kind 'zzz'"),
                           ("sync -tag:work", "cannot be excluded"), ("sync after:someday", "cannot read 'someday'")]:  # fmt: skip
        with pytest.raises(QueryError, match=message) as caught:
            index.search(query)
        assert caught.value.hint


def test_the_cli_shows_the_parse_and_refuses_in_one_line(vault: Path) -> None:
    where = ["--vault", str(vault), "--db", str(db_of(vault)), "--no-daemon"]
    shown = run_cli("search", "sync -android tag:work", *where)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == 'searched: sync · excluded "android" · filters tag:work'
    plain = run_cli("search", "sync android", *where)
    assert "searched:" not in plain.stdout
    for args, message in [(["--", "-android"], "say what to look for"), (["sync kind:zzz"], "unknown kind 'zzz'")]:
        refused = run_cli("search", *where, *args)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        lines = refused.stderr.splitlines()
        assert len(lines) == 2 and lines[0].startswith("error: ") and message in lines[0] and lines[1].startswith("hint: ")


def test_the_agent_hook_passes_the_prompt_as_text(index: Index) -> None:
    """A prompt is prose: "-android" there is not an exclusion (with the syntax on, Phones.md
    would be left out for holding "android")."""
    prompt = {"prompt": "why does the phone sync fail with -android on the local network at home"}
    context = user_prompt_context(index, prompt, HookSettings(min_relevance=0.0))
    assert "work/Phones.md" in context
    assert "work/Phones.md" not in paths(index, prompt["prompt"])  # what the syntax would have done


def test_the_study_chat_passes_the_question_as_text(vault: Path, tmp_path: Path) -> None:
    from tests.support.standin_llm import StandinLLM

    from study_fixtures import make_app

    with StandinLLM() as standin:
        app = make_app(vault, tmp_path / "study.db", standin.url)
        try:
            question = "why does the phone sync fail with -android on the local network at home?"
            found = [result.path for result, _relevance in app.notebook.chat.retrieve(question, None, 5)[0]]
        finally:
            app.notebook.close()
    assert "work/Phones.md" in found


def test_the_http_api_reads_the_syntax_unless_told_not_to(vault: Path) -> None:
    from starlette.testclient import TestClient

    from vaultseek.config import load_config
    from vaultseek.web.app import create_app

    config = load_config(vault=vault, db=db_of(vault))
    with TestClient(create_app(lambda: Index(config), config, sync_on_start=False), base_url="http://127.0.0.1") as http:
        parsed = http.get("/api/search", params={"q": "sync -android", "k": "20"}).json()
        assert parsed["parsed"]["excluded"] == ["android"]
        assert "work/Phones.md" not in [r["path"] for r in parsed["results"]]
        plain = http.get("/api/search", params={"q": "sync -android", "k": "20", "syntax": "false"}).json()
        assert plain["parsed"] is None and "work/Phones.md" in [r["path"] for r in plain["results"]]
        posted = http.post("/api/search", json={"query": "sync", "filters": {"name_contains": ["PHONES"]}}).json()
        assert {r["path"] for r in posted["results"]} == {"work/Phones.md"}
        refused = http.post("/api/search", json={"query": "sync -tag:work"})
        assert refused.status_code == 400 and "cannot be excluded" in refused.json()["error"]["message"]


TERMIN_PAGES = ["clear", "kitty", "khal", "sl", "lastcomm", "termdown", "http", "((", "https", "prename", "typeset",
                "apropos", "ansiweather", "7z", "ab"]  # fmt: skip
"""German tldr pages: some with "Terminal", "Termine" (``termin*``), and the pages whose deep
vectors lie nearest the literal ``termin*``."""


@pytest.fixture(scope="module")
def termin_vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from vaultseek.embeddings.deep import deep_model_available

    if deep_model_available() is not None and not os.environ.get("CI"):
        pytest.skip(f"the deep model cannot run here: {deep_model_available()}")
    pages = SHARED_DATA / "tldr" / "pages.de" / "common"
    if not pages.is_dir():
        pytest.skip(f"{pages} is missing")
    root = tmp_path_factory.mktemp("termin")
    vault = root / "vault"
    vault.mkdir()
    for name in TERMIN_PAGES:
        shutil.copy(pages / f"{name}.md", vault / f"{name}.md")
    db = root / "index.db"
    with open_index(vault, db=db, create=True, deep_tier=True) as index:
        index.sync(remember=False)
        report = index.deepen()
        assert report is not None and report.complete
    return vault, db


def test_a_prefix_is_not_drowned_by_the_vector_lists_noise(termin_vault: tuple[Path, Path]) -> None:
    """``termin*`` embedded literally puts pages about HTTP first in the deep list; the hybrid
    top three must be pages BM25 finds for it, the page it ranks first among them."""
    vault, db = termin_vault
    with open_index(vault, db=db, deep_tier=True) as index:
        lexical = [hit.path for hit in index.search("termin*", mode="bm25", k=20).results]
        hybrid = [hit.path for hit in index.search("termin*", k=3).results]
        deep = [hit.path for hit in index.search("termin*", mode="deep", k=20).results]
    assert set(hybrid) <= set(lexical) and lexical[0] in hybrid, (hybrid, lexical)
    assert deep and set(deep) <= set(lexical)
