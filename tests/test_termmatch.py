"""Term matching: hand-computed scores, the re-fusion's arithmetic, and its effect in search."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli
from vaultseek.engine import open_index
from vaultseek.errors import QueryError
from vaultseek.search.fusion import convex
from vaultseek.search.termmatch import (
    DEFAULT_WEIGHT,
    blend,
    content_words,
    idf,
    match_scores,
    word_similarity,
)


def test_content_words_drop_stopwords_numbers_single_letters_and_repeats() -> None:
    assert content_words("The T-cells of the 2024 tumour, they should grow again; a x") == [
        "cells",
        "tumour",
        "grow",
        "again",
    ]
    assert content_words("snake_case Straße") == ["snake", "case", "strasse"]


def test_the_cli_flag_alone_and_the_default_mean_the_measured_weight() -> None:
    from vaultseek.cli.search import TERM_MATCH_ON
    from vaultseek.config import Config

    assert TERM_MATCH_ON == Config().term_match == DEFAULT_WEIGHT


def test_idf_is_bm25s_and_never_below_the_floor() -> None:
    assert idf(1, 100) == pytest.approx(math.log(99.5 / 1.5))
    assert idf(90, 100) == 0.05
    # A chunk count read before a writer added chunks, a frequency read after (a search racing
    # an index run): the word counts as everywhere, not a math domain error.
    assert idf(12, 10) == 0.05


def test_word_similarity_by_hand() -> None:
    # ^mutation$ has 8 trigrams, ^mutations$ 9; they share 7 (all but "on$" / "ons", "ns$").
    assert word_similarity("mutation", "mutations") == pytest.approx(7 / (8 + 9 - 7))
    assert word_similarity("cancer", "cancer") == 1.0
    assert word_similarity("banana", "banana") == 1.0  # "ana" twice still makes an exact 1
    assert word_similarity("cancer", "bread") == 0.0
    # ^lion$ → ^li lio ion on$, ^ionic$ → ^io ion oni nic ic$: they share "ion" alone
    assert word_similarity("lion", "ionic") == pytest.approx(1 / (4 + 5 - 1))
    assert word_similarity("", "x") == word_similarity("x", "") == 0.0


def test_match_scores_by_hand() -> None:
    # query "cancer cells", weights 2 and 1; text 0 has both words, text 1 "cancers" only,
    # text 2 an unrelated word, text 3 nothing at all, text 4 both words in capitals.
    texts = ["Cells with cancer.", "cancers", "bread", "", "CANCER? CELLS!"]
    scores = match_scores(["cancer", "cells"], [2.0, 1.0], texts)
    assert scores.tolist() == pytest.approx(
        [1.0, 2 * word_similarity("cancer", "cancers") / 3, 0.0, 0.0, 1.0]
    )
    assert match_scores([], [], texts).tolist() == [0.0] * 5
    # a lone surrogate (text decoded with surrogateescape) is a non-word character, not an error
    assert match_scores(["cancer"], [1.0], ["x \udcff cancer"]).tolist() == [1.0]
    assert match_scores(["cancer"], [1.0], []).tolist() == []


@given(
    words=st.lists(
        st.text(alphabet="abcnsxéß東京カ한1", min_size=2, max_size=6), min_size=1, max_size=3, unique=True
    ),
    texts=st.lists(st.text(alphabet="abcnsxéßẞ東京カ한1 ,_-\0", max_size=40), min_size=1, max_size=4),
)
@settings(max_examples=200, deadline=None)
def test_match_scores_equal_the_word_by_word_reference(words: list[str], texts: list[str]) -> None:
    query = content_words(" ".join(words))
    weights = [1.0 + i for i in range(len(query))]
    expected = []
    for text in texts:
        text_words = content_words_any(text)
        best = [max((word_similarity(q, w) for w in text_words), default=0.0) for q in query]
        expected.append(
            sum(b * w for b, w in zip(best, weights, strict=True)) / (sum(weights) or 1.0)
        )
    assert match_scores(query, weights, texts).tolist() == pytest.approx(expected)


def content_words_any(text: str) -> list[str]:
    """Every word of ``text`` as the index splits it, stopwords and all (a text's words are
    matched whatever they are; only the query's are filtered)."""
    from vaultseek.text.lexical import WORD, index_text

    return WORD.findall(index_text(text.lower()))


def test_blend_by_hand_and_the_fusion_of_the_blended_list() -> None:
    lexical = [(1, 10.0), (2, 8.0), (3, 2.0)]
    vector = [(4, 0.9), (2, 0.6), (1, 0.5)]
    weights = {"bm25": 0.75, "vector": 0.25}
    blended = blend(lexical, {1: 0.2, 2: 0.8, 4: 0.4}, 0.5)
    # (1 − 0.5) × score / 10 + 0.5 × match / 0.8; chunk 4 is in the vector list only
    assert blended == pytest.approx({1: 0.5 + 0.125, 2: 0.4 + 0.5, 3: 0.1, 4: 0.25})
    plain = convex({"bm25": lexical, "vector": vector}, weights=weights)
    out = convex({"bm25": lexical, "vector": vector}, weights=weights, overrides={"bm25": blended})
    # normalised by hand: lexical over [0.1, 0.9], vector over [0.5, 0.9]
    expected = {
        1: 0.75 * (0.625 - 0.1) / 0.8 + 0.0,
        2: 0.75 * (0.9 - 0.1) / 0.8 + 0.25 * (0.6 - 0.5) / 0.4,
        3: 0.0,
        4: 0.75 * (0.25 - 0.1) / 0.8 + 0.25,
    }
    assert [f.item for f in out] == [2, 1, 4, 3]
    assert {f.item: f.score for f in out} == pytest.approx(expected)
    # the ranks still explain the original lists
    assert {f.item: dict(f.ranks) for f in out} == {f.item: dict(f.ranks) for f in plain}
    assert blend(lexical, {}, 0.5) == pytest.approx({1: 0.5, 2: 0.4, 3: 0.1})


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    # Both notes hold "lamp" once; only the second also speaks of bulbs and wattage, words a
    # "light bulb" query matches exactly or by meaning. BM25 alone cannot tell them apart
    # well for "lamp bulb watts"; term matching rewards the note with all three.
    (vault / "hall.md").write_text(
        "# Hall\n\nThe lamp in the hall. " + "Paint the walls white. " * 6, "utf-8"
    )
    (vault / "desk.md").write_text(
        "# Desk\n\nThe lamp on the desk takes a bulb of 40 watts.\n", "utf-8"
    )
    for i in range(30):
        (vault / f"filler{i}.md").write_text(
            f"# Filler {i}\n\nNotes about gardening, soil and seeds {i}.\n", "utf-8"
        )
    return vault


def test_search_uses_term_matching_and_can_turn_it_off(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with open_index(vault, db=tmp_path / "index.db", create=True) as index:
        index.sync()
        on = index.search("lamp bulbs wattage", k=5)  # on by default
        assert on == index.search("lamp bulbs wattage", k=5, term_match=DEFAULT_WEIGHT)
        off = index.search("lamp bulbs wattage", k=5, term_match=0)
        assert on.results[0].path == "desk.md"
        assert {r.path for r in off.results} >= {"desk.md", "hall.md"}
        on_scores = {r.path: r.score for r in on.results}
        off_scores = {r.path: r.score for r in off.results}
        assert on_scores != off_scores
        # BM25 and vector ranks are reported as before: they explain the lists
        assert [
            (r.path, r.bm25_rank, r.vec_rank) for r in sorted(on.results, key=lambda r: r.path)
        ] == [(r.path, r.bm25_rank, r.vec_rank) for r in sorted(off.results, key=lambda r: r.path)]
        with pytest.raises(QueryError):
            index.search("lamp", term_match=1.5)
        ranked = index.search("lamp bulbs wattage", k=5, term_match=0.5, fusion="rrf")
        assert [r.path for r in ranked.results] == [
            r.path for r in index.search("lamp bulbs wattage", k=5, fusion="rrf").results
        ]
        assert any("convex fusion only" in n for n in ranked.notices)
        assert not on.notices
        # the default strength applies where it can: RRF by default says nothing about it
        assert not index.search("lamp bulbs wattage", k=5, fusion="rrf").notices


def test_word_frequencies_match_the_per_text_lookup(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with open_index(vault, db=tmp_path / "index.db", create=True) as index:
        index.sync()
        words = ["lamp", "gardening", "seeds", "nowhere", "walls", "lamp", "東京"]
        assert index.store.word_frequencies(words) == index.store.document_frequencies(words)
        assert index.store.word_frequencies(["lamp", "seeds"]) == [2, 30]
        assert index.store.word_frequencies([]) == []


def test_word_frequencies_follow_the_index_through_its_own_and_other_writers(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    db = tmp_path / "index.db"
    with open_index(vault, db=db, create=True) as index:
        index.sync()
        assert index.store.word_frequencies(["lamp"]) == [2]
        assert index.store.document_frequencies(["lamp desk"]) == [1]
        (vault / "porch.md").write_text("# Porch\n\nA lamp by the door.\n", "utf-8")
        index.sync()  # this connection writes
        assert index.store.word_frequencies(["lamp"]) == [3]
        (vault / "porch.md").unlink()
        with open_index(vault, db=db) as other:  # another one does
            other.sync()
        assert index.store.word_frequencies(["lamp"]) == [2]


def test_cli_term_match_flag_and_a_query_it_swallowed(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    db = str(tmp_path / "index.db")
    assert run_cli("index", str(vault), "--db", db).returncode == 0
    common = ("--vault", str(vault), "--db", db, "--no-daemon", "--json")
    on = run_cli("search", "lamp bulbs wattage", *common, "--term-match")
    half = run_cli("search", "lamp bulbs wattage", *common, "--term-match", str(DEFAULT_WEIGHT))
    assert on.returncode == half.returncode == 0 and on.stdout == half.stdout
    assert json.loads(on.stdout)["results"][0]["path"] == "desk.md"
    swallowed = run_cli("search", "--term-match", "lamp bulbs", *common)
    assert (
        swallowed.returncode == 2
        and "put the query first" in swallowed.stderr
        and "Traceback" not in swallowed.stderr
    )
    too_much = run_cli("search", "lamp", *common, "--term-match", "3")
    assert too_much.returncode == 2 and "from 0 to 1" in too_much.stderr


def test_the_stage_benchmark_runs_on_a_built_index_and_explains_a_missing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks import termmatch as bench

    assert bench.main(["--workdir", str(tmp_path / "nothing")]) == 2
    assert "run `python -m benchmarks --workdir" in capsys.readouterr().err
    vault = _vault(tmp_path)
    with open_index(vault, db=tmp_path / "index.db", create=True) as index:
        index.sync()
    assert bench.main(["--workdir", str(tmp_path), "--queries", "5"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line[2:3].isdigit()]
    assert len(rows) == 1 and len(rows[0].split("|")) == 2 + len(bench.STEPS) + 1
