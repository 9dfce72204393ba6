"""The metric definitions against examples worked out by hand (trec_eval / BEIR conventions:
linear gain = grade, log2(rank + 1) discount, ideal DCG over all relevant documents)."""

from __future__ import annotations

import math

import pytest

from vaultseek.evaluation.metrics import (
    answer_at_k,
    first_occurrences,
    has_relevant,
    hit_at_k,
    mean,
    ndcg_at_k,
    percentile,
    recall_at_k,
    reciprocal_rank_at_k,
)

LOG3 = math.log2(3)  # the discount at rank 2
LOG5 = math.log2(5)  # the discount at rank 4


def test_binary_relevance_at_ranks_two_and_four() -> None:
    judged = {"d2": 1, "d4": 1}
    ranking = ["d1", "d2", "d3", "d4"]
    # DCG = 1/log2(3) + 1/log2(5) = 0.63093 + 0.43068; ideal = 1 + 1/log2(3).
    assert ndcg_at_k(ranking, judged, 10) == pytest.approx((1 / LOG3 + 1 / LOG5) / (1 + 1 / LOG3))
    assert ndcg_at_k(ranking, judged, 10) == pytest.approx(0.650921, abs=1e-6)
    assert recall_at_k(ranking, judged, 10) == 1.0
    assert recall_at_k(ranking, judged, 2) == 0.5
    assert reciprocal_rank_at_k(ranking, judged, 10) == 0.5
    assert reciprocal_rank_at_k(ranking, judged, 1) == 0.0


def test_cranfield_grades_one_to_four() -> None:
    # Cranfield: 4 = complete answer ... 1 = minimum interest.
    judged = {"a": 4, "b": 3, "c": 2, "d": 1}
    ranking = ["c", "x", "a", "d"]  # b is never found
    dcg = 2 / 1 + 0 + 4 / 2 + 1 / LOG5  # 4.43068
    ideal = 4 / 1 + 3 / LOG3 + 2 / 2 + 1 / LOG5  # 7.32347
    assert ndcg_at_k(ranking, judged, 10) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(ranking, judged, 10) == pytest.approx(0.604998, abs=1e-6)
    assert recall_at_k(ranking, judged, 10) == 0.75
    assert reciprocal_rank_at_k(ranking, judged, 10) == 1.0  # grade 2 is relevant too


def test_answer_counts_only_the_best_graded_documents() -> None:
    # A question with one page that answers it (grade 2) and two that touch on it (grade 1).
    judged = {"lsof.md": 2, "ss.md": 1, "netstat.md": 1}
    assert answer_at_k(["ss.md", "netstat.md", "x", "lsof.md"], judged, 10) == 1.0
    assert answer_at_k(["ss.md", "netstat.md", "x", "lsof.md"], judged, 3) == 0.0  # related pages alone
    assert recall_at_k(["ss.md", "netstat.md", "x"], judged, 3) == pytest.approx(2 / 3)
    assert answer_at_k(["lsof.md"], judged, 1) == 1.0 and recall_at_k(["lsof.md"], judged, 1) == pytest.approx(1 / 3)
    # Equal best grades: any one of them answers; binary judgments make it success@k.
    assert answer_at_k(["x", "b"], {"a": 3, "b": 3, "c": 1}, 10) == 1.0
    assert answer_at_k(["x", "c"], {"a": 1, "c": 1}, 10) == 1.0
    assert answer_at_k(["a", "x"], {"a": 0, "b": 1}, 10) == 0.0  # grade 0 is not an answer
    with pytest.raises(ValueError, match="no relevant document"):
        answer_at_k(["a"], {"a": 0}, 10)


def test_hit_counts_any_relevant_page_and_ndcg_at_five_cuts_at_five() -> None:
    judged = {"answer.md": 2, "also.md": 1}
    # A page that also answers, first: Hit@1 counts it, Answer@1 does not.
    assert hit_at_k(["also.md", "answer.md"], judged, 1) == 1.0
    assert answer_at_k(["also.md", "answer.md"], judged, 1) == 0.0
    assert hit_at_k(["x", "answer.md"], judged, 1) == 0.0 and hit_at_k(["x", "answer.md"], judged, 2) == 1.0
    assert hit_at_k(["x", "x", "answer.md"], judged, 2) == 1.0  # a repeat is not a second rank
    assert hit_at_k(["gone.md", "answer.md"], {"gone.md": 0, "answer.md": 1}, 1) == 0.0  # grade 0
    # Rank 6 is outside nDCG@5 and inside nDCG@10; the ideal at 5 is 2 + 1/log2(3).
    late = ["a", "b", "c", "d", "also.md", "answer.md"]
    assert ndcg_at_k(late, judged, 5) == pytest.approx((1 / math.log2(6)) / (2 + 1 / LOG3))
    assert ndcg_at_k(late, judged, 10) > ndcg_at_k(late, judged, 5)
    with pytest.raises(ValueError, match="no relevant document"):
        hit_at_k(["a"], {}, 1)


def test_gain_is_the_grade_not_two_to_the_grade() -> None:
    judged = {"a": 3, "b": 1}
    ranking = ["b", "a"]
    linear = (1 + 3 / LOG3) / (3 + 1 / LOG3)  # 0.79671
    exponential = (1 + 7 / LOG3) / (7 + 1 / LOG3)  # 0.70980: what 2^rel - 1 would give
    assert ndcg_at_k(ranking, judged, 10) == pytest.approx(linear)
    assert ndcg_at_k(ranking, judged, 10) != pytest.approx(exponential)


def test_ideal_counts_relevant_documents_that_were_never_retrieved() -> None:
    judged = {"a": 1, "b": 1, "c": 1}
    # DCG = 1; ideal = 1 + 1/log2(3) + 1/log2(4) = 2.13093.
    assert ndcg_at_k(["a"], judged, 10) == pytest.approx(1 / (1 + 1 / LOG3 + 0.5))
    assert recall_at_k(["a"], judged, 10) == pytest.approx(1 / 3)


def test_ties_in_grade_order_either_way_and_ideal_cut_at_k() -> None:
    judged = {"a": 2, "b": 2, "c": 1}
    assert ndcg_at_k(["a", "b", "c"], judged, 10) == 1.0
    assert ndcg_at_k(["b", "a", "c"], judged, 10) == 1.0  # equal grades: either order is ideal
    assert ndcg_at_k(["c", "a", "b"], judged, 10) < 1.0
    many = {f"d{i}": 1 for i in range(12)}  # 12 relevant, only 10 fit: perfect top 10 is 1.0
    assert ndcg_at_k([f"d{i}" for i in range(10)], many, 10) == pytest.approx(1.0)
    assert recall_at_k([f"d{i}" for i in range(10)], many, 10) == pytest.approx(10 / 12)


def test_cutoff_excludes_rank_eleven() -> None:
    judged = {"hit": 3}
    ranking = [f"miss{i}" for i in range(10)] + ["hit"]
    assert ndcg_at_k(ranking, judged, 10) == 0.0
    assert recall_at_k(ranking, judged, 10) == 0.0
    assert reciprocal_rank_at_k(ranking, judged, 10) == 0.0
    assert recall_at_k(ranking, judged, 100) == 1.0
    assert ndcg_at_k(ranking, judged, 11) == pytest.approx(1 / math.log2(12))


def test_a_document_listed_twice_counts_once_at_its_first_rank() -> None:
    # Several chunks of one note: "a" twice, so "b" is the second distinct document.
    judged = {"a": 1, "b": 1}
    ranking = ["a", "a", "b"]
    assert ndcg_at_k(ranking, judged, 2) == 1.0
    assert recall_at_k(ranking, judged, 2) == 1.0
    assert ndcg_at_k(["x", "b", "b", "b"], {"b": 2}, 10) == pytest.approx(1 / LOG3)
    assert first_occurrences(["a", "a", "b", "a", "c", "b"]) == ["a", "b", "c"]


def test_zero_and_negative_grades_are_not_relevant() -> None:
    judged = {"a": 0, "b": -1, "c": 1}
    assert reciprocal_rank_at_k(["a", "b", "c"], judged, 10) == pytest.approx(1 / 3)
    assert recall_at_k(["a", "b", "c"], judged, 10) == 1.0
    assert ndcg_at_k(["a", "b", "c"], judged, 10) == pytest.approx(0.5)  # 1/log2(4) over 1
    assert not has_relevant({"a": 0, "b": -1})
    assert not has_relevant({})
    with pytest.raises(ValueError, match="no relevant"):
        ndcg_at_k(["a"], {"a": 0}, 10)
    with pytest.raises(ValueError, match="no relevant"):
        recall_at_k(["a"], {}, 10)
    with pytest.raises(ValueError, match="k must be"):
        ndcg_at_k(["a"], {"a": 1}, 0)


def test_mean_over_queries_like_beir() -> None:
    # Three queries: perfect, missed, relevant at rank 2.
    per_query = [
        ndcg_at_k(["a"], {"a": 1}, 10),
        ndcg_at_k(["x"], {"a": 1}, 10),
        reciprocal_rank_at_k(["x", "a"], {"a": 1}, 10),
    ]
    assert per_query == [1.0, 0.0, 0.5]
    assert mean(per_query) == 0.5
    with pytest.raises(ValueError):
        mean([])


def test_percentile_matches_numpy_default() -> None:
    import numpy as np

    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    for p in (0, 10, 50, 90, 99, 100):
        assert percentile(values, p) == pytest.approx(float(np.percentile(values, p)))
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([7.0], 99) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)
