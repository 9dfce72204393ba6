"""The dashboard's arithmetic over events, with a fixed clock: sessions, streaks, the heatmap,
and each of the 25 badges earned by the events that should earn it and not by the events that
fall just short."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from vaultseek.study.dashboard import BADGES, compute, split_sessions, streaks

NOW = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)  # a Wednesday
Events = list[tuple[datetime, str, dict[str, Any]]]


def at(days_ago: int, hour: int, minute: int = 0) -> datetime:
    return (NOW - timedelta(days=days_ago)).replace(hour=hour, minute=minute)


def test_sessions_split_at_idle_gaps_over_30_minutes() -> None:
    times = [at(0, 9, 0), at(0, 9, 20), at(0, 9, 50), at(0, 10, 21), at(0, 10, 30)]
    sessions = split_sessions(times)
    assert [(s.start, s.end, s.events) for s in sessions] == [
        (at(0, 9, 0), at(0, 9, 50), 3), (at(0, 10, 21), at(0, 10, 30), 2)]
    assert [s.minutes for s in sessions] == [51.0, 10.0]
    assert split_sessions([]) == []


def test_streaks_current_and_longest() -> None:
    today = NOW.date()
    days = {today - timedelta(days=n) for n in (1, 2, 3, 10, 11, 12, 13, 14)}
    assert streaks(days, today) == (3, 5)  # today not yet studied: yesterday's run still counts
    assert streaks(days | {today}, today) == (4, 5)
    assert streaks({today - timedelta(days=2)}, today) == (0, 1)
    assert streaks(set(), today) == (0, 0)
    assert streaks({date(2026, 2, 28), date(2026, 3, 1)}, date(2026, 3, 1)) == (2, 2)


def test_compute_heatmap_badges_and_totals() -> None:
    events = [(at(0, 9), "generated", {"kind": "quiz"}), (at(0, 9, 5), "quiz", {"score": 3, "total": 3}),
              (at(0, 9, 8), "review", {"rating": 3}), (at(1, 2), "opened", {"kind": "mindmap"}),
              (at(2, 6), "lesson", {"material_id": "w", "position": 0, "lessons": 4}),
              (at(95, 9), "generated", {"kind": "flashcards"})]  # fmt: skip
    board = compute(events, NOW)
    assert len(board["heatmap"]) == 90 and board["heatmap"][-1] == {"date": "2026-05-20", "count": 3}
    assert board["heatmap"][0]["date"] == "2026-02-20" and sum(d["count"] for d in board["heatmap"]) == 5
    assert board["streak"] == {"current": 3, "longest": 3}
    assert board["sessions"] == 4 and board["study_minutes"] == 9 + 1 + 1 + 1
    assert board["totals"]["quizzes"] == 1 and board["totals"]["average_score"] == 1.0
    earned = {b["id"] for b in board["badges"] if b["earned"]}
    assert earned == {"first_steps", "first_quiz", "perfect_score", "first_review", "cartographer", "streak_3",
                      "night_owl", "early_bird"}
    by_id = {b["id"]: b for b in board["badges"]}
    assert by_id["prolific"]["progress"] == {"current": 2, "target": 10, "unit": ["piece", "pieces"]}
    assert by_id["lesson_reader"]["progress"]["current"] == 1
    assert by_id["first_steps"]["progress"] == {"current": 1, "target": 1, "unit": ["piece", "pieces"]}  # capped


def test_there_are_25_badges_each_explained() -> None:
    assert len(BADGES) == 25 and len({b.id for b in BADGES}) == 25 and len({b.name for b in BADGES}) == 25
    for badge in BADGES:
        assert badge.how.endswith(".") and badge.target >= 1 and all(badge.unit)


# -- each badge: the events that earn it, and the nearest events that do not --------------------
def generated(*kinds: str) -> Events:
    return [(at(0, 12, n), "generated", {"kind": k}) for n, k in enumerate(kinds)]


def quizzes(*scores: tuple[int, int], material: str = "q") -> Events:
    return [(at(0, 12, n), "quiz", {"material_id": material, "score": s, "total": t}) for n, (s, t) in enumerate(scores)]


def reviews(*ratings: int) -> Events:
    return [(at(0, 12) + timedelta(seconds=5 * n), "review", {"material_id": "d", "rating": r}) for n, r in enumerate(ratings)]


def lessons(*opened: tuple[str, int, int]) -> Events:
    return [(at(0, 12, n), "lesson", {"material_id": m, "position": p, "lessons": of}) for n, (m, p, of) in enumerate(opened)]


def on_days(*days_ago: int, hour: int = 12) -> Events:
    return [(at(d, hour), "opened", {"kind": "quiz"}) for d in days_ago]


def at_minutes(*minutes: int, days_ago: int = 0) -> Events:
    return [(at(days_ago, 12) + timedelta(minutes=m), "review", {"rating": 3}) for m in minutes]


SATURDAY = 4  # days ago: 2026-05-16
CASES: dict[str, tuple[Events, Events]] = {
    "first_steps": (generated("quiz"), on_days(0) + quizzes((1, 2))),
    "prolific": (generated(*["quiz"] * 10), generated(*["quiz"] * 9)),
    "all_rounder": (generated("quiz", "flashcards", "workshop", "mindmap"), generated("quiz", "flashcards", "workshop", "quiz")),
    "first_quiz": (quizzes((0, 2)), generated("quiz") + on_days(0)),
    "quiz_regular": (quizzes(*[(1, 2)] * 10), quizzes(*[(1, 2)] * 9)),
    "quiz_master": (quizzes(*[(1, 2)] * 50), quizzes(*[(1, 2)] * 49)),
    "perfect_score": (quizzes((3, 3)), quizzes((2, 2), (2, 3), (4, 5))),
    "sharpshooter": (quizzes(*[(3, 3)] * 5), quizzes(*[(3, 3)] * 4, (2, 2), (3, 4))),
    "comeback": (quizzes((1, 3), (2, 3)), quizzes((2, 3), (2, 3), (1, 3)) + quizzes((3, 3), material="other")),
    "first_review": (reviews(1), generated("flashcards")),
    "reviews_100": (reviews(*[1] * 100), reviews(*[4] * 99)),
    "reviews_500": (reviews(*[2] * 500), reviews(*[3] * 499)),
    "steady_recall": (reviews(*[3, 4] * 25), reviews(*[3] * 49, *[1, 2] * 30)),
    "lesson_reader": (lessons(("w", 0, 5), ("w", 1, 5), ("v", 0, 5)), lessons(*[("w", 0, 5)] * 5, ("w", 1, 5))),
    "graduate": (lessons(("w", 0, 3), ("w", 2, 3), ("w", 1, 3)), lessons(("w", 0, 3), ("w", 1, 3), ("w", 1, 3), ("v", 0, 2))),
    "cartographer": ([(at(0, 12), "opened", {"kind": "mindmap"})], generated("mindmap") + on_days(0)),
    "streak_3": (on_days(5, 6, 7), on_days(1, 2, 4, 5)),
    "streak_7": (on_days(*range(10, 17)), on_days(*range(10, 16), 17)),
    "streak_30": (on_days(*range(30)), on_days(*range(29), 30)),
    "weekend_warrior": (on_days(SATURDAY, SATURDAY - 1), on_days(SATURDAY - 1, SATURDAY + 6, SATURDAY + 1)),
    "hour_of_study": (at_minutes(0, 10, 20, 30, 40, 50, 59), at_minutes(0, 10, 20, 30, 40, 50, 58)),
    "scholar": ([e for d in range(10) for e in at_minutes(0, 20, 40, 59, days_ago=d)],
                [e for d in range(10) for e in at_minutes(0, 20, 40, 59 if d else 58, days_ago=d)]),
    "marathon": (at_minutes(0, 20, 40, 60, 80, 89), at_minutes(0, 20, 40, 59, 91, 111, 131, 150)),
    "night_owl": (on_days(0, hour=1), on_days(0, hour=4) + on_days(1, hour=23)),
    "early_bird": (on_days(0, hour=5), on_days(0, hour=4) + on_days(1, hour=7)),
}  # fmt: skip


def test_every_badge_has_a_case() -> None:
    assert set(CASES) == {b.id for b in BADGES}


@pytest.mark.parametrize("badge", sorted(CASES))
def test_each_badge_is_earned_by_its_events_and_not_by_near_misses(badge: str) -> None:
    earning, near_miss = CASES[badge]
    earned = {b["id"]: b for b in compute(earning, NOW)["badges"]}[badge]
    assert earned["earned"], earned
    assert earned["progress"]["current"] == earned["progress"]["target"]
    missed = {b["id"]: b for b in compute(near_miss, NOW)["badges"]}[badge]
    assert not missed["earned"], missed
    assert missed["progress"]["current"] < missed["progress"]["target"]


def test_every_badge_together_and_empty_history() -> None:
    everything = [event for earning, _near in CASES.values() for event in earning]
    board = compute(everything, NOW)
    assert all(b["earned"] for b in board["badges"]), [b["id"] for b in board["badges"] if not b["earned"]]
    empty = compute([], NOW)
    assert empty["study_minutes"] == 0 and empty["streak"] == {"current": 0, "longest": 0}
    assert not any(b["earned"] for b in empty["badges"])
    assert all(b["progress"]["current"] == 0 for b in empty["badges"])
