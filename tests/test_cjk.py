"""Chinese, Japanese, Korean and German text: every word findable, Latin text unchanged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import SHARED_DATA
from vaultseek import open_index
from vaultseek.lexical import index_text, parse_query


def test_cjk_runs_become_pairs_plus_the_last_character() -> None:
    assert index_text("東京大学") == " 東京 京大 大学 学 "
    assert index_text("我") == " 我 "
    assert index_text("plain English text") == "plain English text"
    assert index_text("Straße") == "Strasse"


def test_queries_use_the_same_pairs() -> None:
    assert parse_query("京大").phrases == ('"京大"',)
    assert parse_query("東京大学").phrases == ('"東京 京大 大学"',)
    assert parse_query("书").phrases == ('"书" *',)  # one character: a prefix of a pair
    assert parse_query("iPhone手机").phrases == ('"iPhone 手机"',)


NOTES = {
    "zh.md": "# 笔记\n\n我们明天去北京大学参观图书馆，然后在附近吃午饭。",  # noqa: RUF001 - Chinese punctuation
    "ja.md": "# メモ\n\n東京駅から新幹線で京都へ行き、清水寺を見学しました。",
    "ko.md": "# 메모\n\n서울에서 부산까지 기차를 타고 여행했습니다. 정말 즐거웠어요.",
    "de.md": "# Notiz\n\nDie Kündigungsfrist für die Wohnung in der Hauptstraße beträgt drei Monate.",
    "en.md": "# Note\n\nThe quarterly report covers revenue, churn and the hiring plan.",
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("大学", "zh.md"),  # a 2-character word inside a sentence
        ("图书馆", "zh.md"),
        ("书", "zh.md"),  # a single character
        ("新幹線", "ja.md"),
        ("京都", "ja.md"),
        ("부산", "ko.md"),  # a word with a particle attached in the text: 부산까지
        ("서울", "ko.md"),
        ("Hauptstrasse", "de.md"),  # ß folded to ss
        ("Hauptstraße", "de.md"),
        ("kundigungsfrist", "de.md"),  # umlauts folded
        ("reports", "en.md"),  # English stemming intact
    ],
)
def test_every_word_is_findable(vault: Path, write: Callable[..., Path], query: str, expected: str) -> None:
    for rel, text in NOTES.items():
        write(rel, text)
    with open_index(vault, create=True) as index:
        index.sync()
        hits = index.search(query, mode="bm25").results
        assert hits and hits[0].path == expected


def test_cjk_known_item_recall_on_real_pages() -> None:
    """A phrase from each Chinese tldr page's description finds that page (Recall@10)."""
    if not (SHARED_DATA / "tldr" / "pages.zh").is_dir():
        pytest.skip("../shared/data/tldr is not available")
    from vaultseek.bench.cjk import measure

    result = measure("zh", data=SHARED_DATA, limit=150)
    assert result["queries"] >= 100
    assert result["bm25"] >= 0.85
    assert result["bm25"] > result["bm25_plain_fts5"] + 0.1  # the rewriting is what helps
