"""The dashboard's arithmetic over events, with a fixed clock."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from vaultseek.study.dashboard import BADGES, compute, split_sessions, streaks

NOW = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)


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
              (at(2, 6), "lesson", {}), (at(95, 9), "generated", {"kind": "flashcards"})]
    board = compute(events, NOW)
    assert len(board["heatmap"]) == 90 and board["heatmap"][-1] == {"date": "2026-05-20", "count": 3}
    assert board["heatmap"][0]["date"] == "2026-02-20" and sum(d["count"] for d in board["heatmap"]) == 5
    assert board["streak"] == {"current": 3, "longest": 3}
    assert board["sessions"] == 4 and board["study_minutes"] == 9 + 1 + 1 + 1
    assert board["totals"]["quizzes"] == 1 and board["totals"]["average_score"] == 1.0
    earned = {b["id"] for b in board["badges"] if b["earned"]}
    assert earned == {"first_steps", "first_quiz", "perfect_score", "first_review", "cartographer", "streak_3",
                      "night_owl", "early_bird"}
    assert len(BADGES) >= 10 and len({b[0] for b in BADGES}) == len(BADGES)


def test_every_badge_can_be_earned() -> None:
    events = [(at(d, 12), "generated", {"kind": k}) for d, k in enumerate(["quiz", "flashcards", "workshop", "mindmap"])]
    events += [(at(d, 12), "quiz", {"score": 3, "total": 3}) for d in range(4, 14)]
    events += [(at(0, 13) + timedelta(seconds=20 * n), "review", {}) for n in range(100)]
    events += [(at(0, 14), "lesson", {})] * 3 + [(at(0, 15), "opened", {"kind": "mindmap"}), (at(0, 1), "opened", {}),
                                                 (at(0, 5), "opened", {})]
    events += [(at(0, 16) + timedelta(minutes=5 * n), "review", {}) for n in range(13)]
    board = compute(events, NOW)
    assert all(b["earned"] for b in board["badges"]), [b["id"] for b in board["badges"] if not b["earned"]]


def test_empty_history() -> None:
    board = compute([], NOW)
    assert board["study_minutes"] == 0 and board["streak"] == {"current": 0, "longest": 0}
    assert not any(b["earned"] for b in board["badges"])
