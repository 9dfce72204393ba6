"""Chinese, Japanese, Korean and German text: every word findable, Latin text unchanged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import SHARED_DATA, copy_tldr_pages
from vaultseek import open_index
from vaultseek.text.lexical import index_text, parse_query


def test_cjk_runs_become_pairs_plus_the_last_character() -> None:
    assert index_text("東京大学") == " 東京 京大 大学 学 "
    assert index_text("我") == " 我 "
    assert index_text("plain English text") == "plain English text"
    assert index_text("Straße") == "Strasse"


def test_queries_use_the_same_pairs() -> None:
    assert parse_query("京大").phrases == ('"京大"',)
    assert parse_query("東京大学").phrases == ('"東京"', '"京大"', '"大学"')  # each pair a word
    assert parse_query("书").phrases == ('"书" *',)  # one character: a prefix of a pair
    assert parse_query("书*").phrases == parse_query("书?").phrases == ('"书" *',)  # beside an operator, still the word
    assert parse_query("Docker的").phrases == ('"Docker"',)  # on a Latin word: a particle
    assert parse_query("iPhone手机").phrases == ('"iPhone"', '"手机"')


def test_query_runs_lose_question_words_and_particles() -> None:
    assert parse_query("列出正在运行的进程").phrases == ('"列出"', '"运行"', '"进程"')
    assert parse_query("怎么压缩文件").phrases == ('"压缩"', '"缩文"', '"文件"')
    # Japanese: cut where the script changes; hiragana (particles, endings) dropped
    assert parse_query("ファイルを圧縮する").phrases == ('"ファ ァイ イル"', '"圧縮"')
    assert parse_query("ファイル を 圧縮").phrases == ('"ファ ァイ イル"', '"圧縮"')
    # Korean is spaced: each word stays one phrase, particle included
    assert parse_query("파일을 압축").phrases == ('"파일 일을"', '"압축"')
    # nothing but question words: they are the query
    assert parse_query("怎么").phrases == ('"怎么"',)
    assert parse_query("什么 怎么").phrases == ('"什么"', '"怎么"')


def test_a_question_counts_the_words_its_query_leaves_out() -> None:
    """A word the search leaves out is still a word the user asked about: a whole Japanese
    question is not a one-word query (which names the few sections that hold its word)."""
    question = parse_query("このスクリプト何秒かかってるか測りたい")  # "how many seconds does this script take"
    assert question.phrases == ('"スク クリ リプ プト"',)  # 秒 and 測 are single characters beside it
    assert (question.left_out, question.pieces) == (2, 3)
    assert parse_query("スクリプト").pieces == 1
    assert parse_query("端口 占用").pieces == 2
    assert parse_query("mirror").pieces == 1


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
        ("书*", "zh.md"),  # and as a prefix: the words starting with it
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


COMMANDS = {
    "zh/ps.md": "# ps\n\n显示系统中进程的信息。\n\n- 列出所有正在运行的进程：`ps aux`\n- 按内存占用排序：`ps aux --sort=-%mem`",  # noqa: RUF001 - Chinese and Japanese punctuation
    "zh/tar.md": "# tar\n\n归档工具，也可以用 gzip 压缩归档文件。\n\n- 解压一个归档文件：`tar xf 文件.tar.gz`",  # noqa: RUF001 - Chinese and Japanese punctuation
    "zh/faq.md": "# 常见问题\n\n" + "我们的工具怎么用？如何安装？这是一个什么样的问题，我们会在这里回答你的问题了。" * 8,  # noqa: RUF001 - Chinese and Japanese punctuation
    "ja/tar.md": "# tar\n\nファイルをまとめてアーカイブし、gzip で圧縮したり展開したりする。",
    "ja/ls.md": "# ls\n\nディレクトリにあるファイルの一覧を表示する。",
    "ja/faq.md": "# よくある質問\n\n" + "このツールはどうやって使うのですか？それはとても簡単です。" * 8,  # noqa: RUF001 - Chinese and Japanese punctuation
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("列出正在运行的进程", "zh/ps.md"),  # a question without spaces, with 的 and 正在
        ("怎么压缩文件", "zh/tar.md"),
        ("ファイルを圧縮", "ja/tar.md"),  # no space between the words
        ("ファイル 圧縮", "ja/tar.md"),
    ],
)
def test_unspaced_questions_find_their_page(vault: Path, write: Callable[..., Path], query: str, expected: str) -> None:
    for rel, text in COMMANDS.items():
        write(rel, text)
    with open_index(vault, create=True) as index:
        index.sync()
        for mode in ("bm25", "hybrid"):
            hits = index.search(query, mode=mode).results
            assert hits and hits[0].path == expected, (mode, [h.path for h in hits])


def test_cjk_known_item_recall_on_real_pages() -> None:
    """A phrase from each Chinese tldr page's description finds that page (Recall@10)."""
    if not (SHARED_DATA / "tldr" / "pages.zh").is_dir():
        pytest.skip("../shared/data/tldr is not available")
    from benchmarks.cjk import measure

    result = measure("zh", data=SHARED_DATA, limit=150)
    assert result["queries"] >= 100
    assert result["bm25"] >= 0.85
    assert result["bm25"] > result["bm25_plain_fts5"] + 0.1  # the rewriting is what helps


@pytest.mark.parametrize("query", ["압축 파일을 풀고 싶어", "두 파일의 차이를 비교하는 방법", "원격 서버에 파일 복사"])
def test_a_korean_question_is_not_reordered_by_vectors_that_cannot_read_it(vault: Path, query: str) -> None:
    """The bundled English model reads a Korean question as the letters of its syllables, so
    its vector list is noise: the hybrid ranks such a question as one without that list."""
    copy_tldr_pages(vault, "ko")
    with open_index(vault, create=True) as index, open_index(vault, vector_weight=0.0) as without_vectors:
        index.sync()
        hybrid = [h.path for h in index.search(query, k=10).results]
        assert hybrid == [h.path for h in without_vectors.search(query, k=10).results]
        assert hybrid != [h.path for h in index.search(query, mode="bm25", k=10).results]  # not BM25 alone
        assert index.search(query, mode="vector", k=10).results  # the list itself still answers


def test_a_command_name_in_a_korean_vault_keeps_the_vector_list(vault: Path) -> None:
    copy_tldr_pages(vault, "ko")
    with open_index(vault, create=True) as index:
        index.sync()
        model = index.embedder()
        assert model.legible_share("git stash pop") == 1.0
        assert model.legible_share("압축 파일을 풀고 싶어") == 0.0
        assert 0.0 < model.legible_share("7z 압축") < 1.0
