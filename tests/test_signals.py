"""Post-fusion signals (``signals.py``): a query that names a note, and recency."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultseek import open_index
from vaultseek.search.signals import recency_factor
from vaultseek.text.keys import name_key, note_names

DAY = 86_400.0


@pytest.fixture
def named_vault(vault: Path, write: Callable[..., Path]) -> Path:
    # Many notes say "token rotation" more often than the note *named* for it does.
    for i in range(6):
        write(f"misc/rotation{i}.md", f"# Log {i}\n\nToken rotation, token rotation, token rotation again: rotation log {i}.\n")
    write("security/oauth.md", "---\ntitle: Token Rotation\naliases: [Schlüsseltausch, key rollover]\n---\n# Policy\n\nWe rotate secrets every day.\n")
    write("people/Zoë Müller.md", "# Contact\n\nPhone and address of a colleague.\n")
    write("private/token rotation.md", "# Elsewhere\n\nA private note with the same file name.\n")
    return vault


@pytest.mark.parametrize(
    "query",
    ["Token Rotation", "token rotation", "  TOKEN   rotation ", "token-rotation?", "[[Token Rotation]]",
     "schlusseltausch", "Key Rollover"],
)  # fmt: skip
def test_a_title_or_alias_match_ranks_the_note_first(named_vault: Path, query: str) -> None:
    with open_index(named_vault, create=True) as index:
        index.sync()
        plain = index.search(query, k=3, title_match=False)
        assert not plain.results[0].signals
        if "rotation" in query.lower():
            assert plain.results[0].path.startswith("misc/")
        first = index.search(query, k=3, title_match=True).results
        assert first[0].path in {"security/oauth.md", "private/token rotation.md"}
        assert "title" in first[0].signals and first[0].score > first[-1].score


def test_every_named_note_goes_first_and_a_scope_still_applies(named_vault: Path) -> None:
    with open_index(named_vault, create=True) as index:
        index.sync()
        # The title of one note and the file name of another: both go first.
        top = index.search("token rotation", k=4, title_match=True).results
        assert {r.path for r in top[:2]} == {"security/oauth.md", "private/token rotation.md"}
        assert all("title" not in r.signals for r in top[2:])
        scoped = index.search("token rotation", k=4, title_match=True, filters={"folders": ["misc"]})
        assert all(r.path.startswith("misc/") and not r.signals for r in scoped.results)


def test_a_named_note_no_list_found_still_shows(named_vault: Path) -> None:
    with open_index(named_vault, create=True) as index:
        index.sync()
        # An alias is not in the note's text: BM25 alone finds nothing, the name finds the note.
        assert index.search("key rollover", k=3, mode="bm25", title_match=False).results == ()
        hit = index.search("key rollover", k=3, mode="bm25", title_match=True).results[0]
        assert hit.path == "security/oauth.md" and hit.bm25_rank is None and hit.signals == {"title": 1.0}
        # A file name's diacritics and case do not count.
        hit = index.search("zoe muller", k=3, title_match=True).results[0]
        assert hit.path == "people/Zoë Müller.md" and "title" in hit.signals


def test_title_match_is_on_by_default_and_off_leaves_the_fusion_as_it_was(named_vault: Path) -> None:
    with open_index(named_vault, create=True) as index:
        index.sync()
        default = index.search("token rotation", view="chunks", k=5).to_dict()
        assert default == index.search("token rotation", view="chunks", k=5, title_match=True).to_dict()
        assert "title" in default["results"][0]["signals"]
        off = index.search("token rotation", view="chunks", k=5, title_match=False).to_dict()
        assert all(r["signals"] == {} for r in off["results"]) and off["intent"] is None
        index.config = dataclasses.replace(index.config, title_match=False)  # the config's switch
        assert index.search("token rotation", view="chunks", k=5).to_dict() == off


def test_name_keys() -> None:
    assert name_key("  Zoë   MÜLLER ") == "zoe muller"
    assert name_key("[[Token_Rotation]]?") == name_key("token rotation") == "token rotation"
    assert name_key("C++") == "c++" != name_key("C")  # inner punctuation counts
    assert name_key("???") == ""
    assert note_names("Token Rotation", ("TOKEN rotation", "Key"), "a/token-rotation.md") == ["token rotation", "key"]


def test_recency_factor() -> None:
    assert recency_factor(0, 30, 0.5) == 1.0
    assert recency_factor(30 * DAY, 30, 0.5) == pytest.approx(0.75)
    assert recency_factor(60 * DAY, 30, 0.5) == pytest.approx(0.625)
    assert recency_factor(1e12, 30, 0.5) == pytest.approx(0.5)  # never below 1 - weight
    assert recency_factor(-DAY, 30, 1.0) == 1.0  # a file from the future is new
    assert recency_factor(30 * DAY, 30, 0.0) == 1.0


def test_recency_reorders_near_ties_by_a_fake_clock(vault: Path, write: Callable[..., Path]) -> None:
    now = 1_800_000_000.0
    ages = {"old.md": 400, "middle.md": 30, "new.md": 1}
    for name, days in ages.items():  # the same text: near ties (the titles differ)
        path = write(name, "# Backup\n\nThe nightly backup job copies the database offsite.\n")
        os.utime(path, (now - days * DAY, now - days * DAY))
    with open_index(vault, create=True) as index:
        index.sync()
        index.clock = lambda: now
        plain = index.search("nightly backup", k=3)
        recent = index.search("nightly backup", k=3, recency_half_life_days=30)
        assert [r.path for r in recent.results] == ["new.md", "middle.md", "old.md"]
        assert [r.path for r in plain.results] != [r.path for r in recent.results]
        factors = {r.path: r.signals["recency"] for r in recent.results}
        assert factors["middle.md"] == pytest.approx(0.75, abs=1e-4)
        assert factors["old.md"] == pytest.approx(0.5, abs=1e-3)
        before = {r.path: r.score for r in plain.results}
        assert all(r.score == pytest.approx(before[r.path] * factors[r.path]) for r in recent.results)
        # A search may name its own "now": a year on, every file is old and the ties return.
        later = index.search("nightly backup", k=3, recency_half_life_days=30, now=now + 10_000 * DAY)
        assert [r.score for r in later.results] == pytest.approx([r.score * 0.5 for r in plain.results], rel=1e-3)
        # 0 turns it off, even when the configuration turns it on.
        assert index.search("nightly backup", k=3, recency_half_life_days=0).to_dict() == plain.to_dict()
        with pytest.raises(Exception, match="half-life"):
            index.search("nightly backup", recency_half_life_days=-1)


def test_signals_default_to_the_configuration(named_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTSEEK_TITLE_MATCH", "true")
    monkeypatch.setenv("VAULTSEEK_INTENT", "on")
    monkeypatch.setenv("VAULTSEEK_RECENCY_HALF_LIFE_DAYS", "14")
    with open_index(named_vault, create=True) as index:
        index.sync()
        assert index.config.title_match and index.config.intent and index.config.recency_half_life_days == 14
        response = index.search("how do we rotate tokens in this vault", k=3)
        assert response.intent == "question" and "recency" in response.results[0].signals
        assert "title" in index.search("token rotation", k=1).results[0].signals
        assert not index.search("token rotation", k=1, title_match=False, recency_half_life_days=0).results[0].signals
        assert index.search("_rrf_fuse", k=1, intent=True).intent == "identifier"
        assert index.search("_rrf_fuse", k=1, intent=False).intent is None


def test_signal_costs_stay_small(named_vault: Path) -> None:
    """Not a timing claim (the benchmark makes those): the signals do a bounded amount of SQL."""
    with open_index(named_vault, create=True) as index:
        index.sync()
        statements: list[str] = []
        index.conn.exec_trace = lambda _cursor, sql, _bindings: statements.append(sql) or True
        started = time.perf_counter()
        index.search("token rotation", k=3, title_match=True, recency_half_life_days=30)
        index.conn.exec_trace = None
        assert len([s for s in statements if "file_names" in s or "mtime_ns" in s]) <= 3
        assert time.perf_counter() - started < 5
