from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultseek.search.fusion import convex, convex_head, rrf


def test_rrf_matches_a_hand_computed_example() -> None:
    # k = 60. Document 7 is 1st in bm25 and 3rd in vector: 1/61 + 1/63.
    # Document 3 is 2nd in bm25 and 1st in vector: 1/62 + 1/61.
    # Document 9 is only 2nd in vector: 1/62.   Document 5 only 3rd in bm25: 1/63.
    fused = rrf({"bm25": [7, 3, 5], "vector": [3, 9, 7]}, k=60)
    assert [f.item for f in fused] == [3, 7, 9, 5]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1].score == pytest.approx(1 / 61 + 1 / 63)
    assert fused[2].score == pytest.approx(1 / 62)
    assert fused[3].score == pytest.approx(1 / 63)
    assert dict(fused[0].ranks) == {"bm25": 2, "vector": 1}
    assert dict(fused[2].ranks) == {"vector": 2}


def test_weights_scale_each_list() -> None:
    fused = rrf({"bm25": [1], "vector": [2]}, k=60, weights={"bm25": 2.0, "vector": 1.0})
    assert [f.item for f in fused] == [1, 2]
    assert fused[0].score == pytest.approx(2 / 61)


def test_ties_break_by_best_rank_then_id() -> None:
    # 4 and 8 each appear once at rank 1: equal scores, so the smaller id wins.
    fused = rrf({"a": [8], "b": [4]}, k=60)
    assert [f.item for f in fused] == [4, 8]


def test_duplicate_in_one_list_counts_once() -> None:
    fused = rrf({"a": [1, 1, 2]}, k=0)
    assert fused[0].score == pytest.approx(1.0)
    assert fused[1].score == pytest.approx(1 / 3)


def test_single_list_keeps_its_order() -> None:
    assert [f.item for f in rrf({"bm25": [5, 2, 9], "vector": []})] == [5, 2, 9]


def test_convex_matches_a_hand_computed_example() -> None:
    # bm25 scores 10, 6, 2 normalise to 1, 0.5, 0; vector 0.9, 0.5 normalise to 1, 0.
    fused = convex(
        {"bm25": [(1, 10.0), (2, 6.0), (3, 2.0)], "vector": [(2, 0.9), (4, 0.5)]},
        weights={"bm25": 0.4, "vector": 0.6},
    )
    got = {f.item: round(f.score, 6) for f in fused}
    assert got == {2: round(0.4 * 0.5 + 0.6 * 1.0, 6), 1: 0.4, 4: 0.0, 3: 0.0}
    assert [f.item for f in fused] == [2, 1, 4, 3]  # 3 and 4 tie at 0: 4 has the better best rank
    assert dict(fused[0].ranks) == {"bm25": 2, "vector": 1}


def test_convex_single_score_list_and_empty() -> None:
    assert [f.score for f in convex({"a": [(7, 3.0)], "b": []})] == [1.0]


@given(
    st.lists(st.integers(0, 50), max_size=30, unique=True),
    st.lists(st.integers(0, 50), max_size=30, unique=True),
)
def test_fusion_properties(a: list[int], b: list[int]) -> None:
    fused = rrf({"bm25": a, "vector": b})
    assert {f.item for f in fused} == set(a) | set(b)
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True)
    for f in fused:
        if "bm25" in f.ranks:
            assert a[f.ranks["bm25"] - 1] == f.item
        if "vector" in f.ranks:
            assert b[f.ranks["vector"] - 1] == f.item
    # An item first in both lists can never be beaten.
    if a and b and a[0] == b[0]:
        assert fused[0].item == a[0]
    assert rrf({"bm25": a, "vector": b}) == fused  # deterministic


scored_lists = st.lists(
    st.tuples(st.integers(1, 30), st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.5])), max_size=25
)


@settings(max_examples=200, deadline=None)
@given(bm25=scored_lists, vector=scored_lists, depth=st.integers(1, 30), weight=st.sampled_from([0.1, 0.25, 0.5]))
def test_convex_head_is_the_start_of_convex(
    bm25: list[tuple[int, float]], vector: list[tuple[int, float]], depth: int, weight: float
) -> None:
    """Term matching picks its head with ``convex_head``: it must be exactly the head the
    full fusion would show, ties (coarse scores, repeated items) included."""
    lists = {"bm25": bm25, "vector": vector}
    weights = {"bm25": 1 - weight, "vector": weight}
    assert convex_head(lists, depth, weights=weights) == [f.item for f in convex(lists, weights=weights)][:depth]


def test_convex_overrides_replace_a_lists_scores_and_keep_its_ranks() -> None:
    lists = {"bm25": [(1, 4.0), (2, 2.0)], "vector": [(3, 0.9), (2, 0.5)]}
    out = convex(lists, weights={"bm25": 1.0, "vector": 1.0}, overrides={"bm25": {1: 0.0, 2: 1.0, 3: 0.5}})
    # bm25 by the override: 1 → 0, 2 → 1, 3 → 0.5; vector: 3 → 1, 2 → 0
    assert [(f.item, f.score) for f in out] == [(3, 1.5), (2, 1.0), (1, 0.0)]
    assert {f.item: dict(f.ranks) for f in out} == {1: {"bm25": 1}, 2: {"bm25": 2, "vector": 2}, 3: {"vector": 1}}


@settings(max_examples=200, deadline=None)
@given(
    bm25=scored_lists, vector=scored_lists, deep=scored_lists, depth=st.integers(1, 30),
    unscored=st.sets(st.integers(1, 30)), anchor=st.sampled_from([None, 0.5, 3.0, 10.0]),
)  # fmt: skip
def test_convex_head_is_the_start_of_convex_with_anchors_and_gaps(
    bm25: list[tuple[int, float]], vector: list[tuple[int, float]], deep: list[tuple[int, float]],
    depth: int, unscored: set[int], anchor: float | None,
) -> None:  # fmt: skip
    lists = {"bm25": bm25, "vector": vector, "deep": [(i, s) for i, s in deep if i not in unscored]}
    standing = {i: float(i % 7) for i in sorted(unscored)[::2]}
    options = {"weights": {"bm25": 0.75, "vector": 0.25, "deep": 1.0}, "unscored": {"deep": unscored - standing.keys()},
               "anchors": None if anchor is None else {"deep": anchor}, "stand_ins": {"deep": standing}}  # fmt: skip
    assert convex_head(lists, depth, **options) == [f.item for f in convex(lists, **options)][:depth]


def test_an_item_a_list_could_not_score_is_ranked_on_its_other_lists() -> None:
    """A chunk waiting for its deep vector (item 1: first by BM25 and by the static list) is
    neither punished for the gap nor outranked by a chunk only the deep list likes (item 2)."""
    lists = {"bm25": [(1, 9.0), (2, 5.0), (4, 1.0)], "vector": [(1, 0.8), (3, 0.2)], "deep": [(2, 0.9), (3, 0.5)]}
    weights = {"bm25": 0.75, "vector": 0.25, "deep": 1.0}
    assert convex(lists, weights=weights)[0].item == 2  # the gap counted as a zero: 0.375 + 1.0 beat 1.0
    fused = convex(lists, weights=weights, unscored={"deep": {1}})
    assert fused[0].item == 1
    # its other lists' weighted mean stands in: (0.75 × 1 + 0.25 × 1) / 1.0 × 2.0
    assert fused[0].score == pytest.approx(2.0)
    # items every list could score are unchanged
    plain = {f.item: f.score for f in convex(lists, weights=weights)}
    assert {f.item: f.score for f in fused if f.item != 1} == {i: s for i, s in plain.items() if i != 1}


def test_a_stand_in_is_normalised_as_the_list_is_and_kept_within_it() -> None:
    """A chunk without a deep vector whose note's opening has one takes the opening's score,
    normalised by the deep list's own range (clamped to it): it neither stretches the list nor
    scores outside it."""
    lists = {"bm25": [(1, 9.0), (2, 5.0)], "deep": [(2, 0.9), (3, 0.8)]}
    weights = {"bm25": 1.0, "deep": 1.0}
    fused = {f.item: f.score for f in convex(lists, weights=weights, stand_ins={"deep": {1: 0.85}})}
    assert fused[1] == pytest.approx(1.0 + 0.5)
    assert fused[2] == pytest.approx(0.0 + 1.0) and fused[3] == pytest.approx(0.0)  # the list's own range
    below = {f.item: f.score for f in convex(lists, weights=weights, stand_ins={"deep": {1: 0.2, 4: 0.95}})}
    assert below[1] == pytest.approx(1.0) and below[4] == pytest.approx(1.0)  # clamped to 0 and to 1
    assert convex(lists, weights=weights, stand_ins={"deep": {1: 0.85}})[0].ranks == {"bm25": 1}


def test_a_floored_stand_in_never_holds_a_chunk_below_its_other_lists() -> None:
    """A page waiting for its deep vector whose document's opening is far from the query (a
    PDF's cover page says nothing of page 6) is ranked on its other lists, as a chunk whose
    file has no deep vector at all is; the opening only lifts it. A note's section keeps its
    opening's score either way."""
    lists = {
        "bm25": [(1, 9.0), (2, 5.0), (3, 1.0), (4, 1.0)],
        "vector": [(1, 0.6), (2, 0.5), (3, 0.1), (4, 0.1)],
        "deep": [(2, 0.9), (3, 0.8)],
    }
    weights = {"bm25": 0.75, "vector": 0.25, "deep": 1.0}
    gap = {f.item: f.score for f in convex(lists, weights=weights, unscored={"deep": {1}})}
    far = {f.item: f.score for f in convex(lists, weights=weights, stand_ins={"deep": {1: 0.2}}, floored={"deep": {1}})}
    assert far[1] == pytest.approx(gap[1]) == pytest.approx(2.0)
    assert far[2] == pytest.approx(gap[2])  # no other chunk moves
    near = {f.item: f.score for f in convex(lists, weights=weights, stand_ins={"deep": {4: 0.9}}, floored={"deep": {4}})}
    assert near[4] == pytest.approx(0.0 + 1.0)  # the opening lifts it above its other lists' mean (0)
    section = {f.item: f.score for f in convex(lists, weights=weights, stand_ins={"deep": {1: 0.2}})}
    assert section[1] == pytest.approx(1.0)  # not floored: the opening's score, clamped to 0


def test_a_list_whose_best_is_under_its_anchor_counts_less_than_its_weight() -> None:
    """A made-up word: BM25 holds one chunk with a near word, the deep list's nearest chunks
    are all weak (cosines 0.80–0.82 where an answer would be 0.87 or more)."""
    lists = {"bm25": [(1, 2.0)], "deep": [(2, 0.82), (3, 0.81), (1, 0.80)]}
    weights = {"bm25": 0.75, "deep": 1.0}
    assert convex(lists, weights=weights)[0].item == 2  # min-max: the deep list's best counts fully
    anchored = convex(lists, weights=weights, anchors={"deep": 0.87})
    assert anchored[0].item == 1
    assert {f.item: round(f.score, 4) for f in anchored}[2] == pytest.approx(round(0.02 / 0.07, 4))
    # a best at or above the anchor is normalised as before
    strong = {"bm25": [(1, 2.0)], "deep": [(2, 0.91), (3, 0.85), (1, 0.80)]}
    assert convex(strong, weights=weights, anchors={"deep": 0.87}) == convex(strong, weights=weights)
