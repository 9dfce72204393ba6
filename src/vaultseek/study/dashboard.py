"""The study dashboard, computed from the activity log alone (pure functions; the clock is an
argument, so tests use a fixed one).

* study time: events split into sessions at idle gaps of more than 30 minutes; a session
  lasts from its first to its last event plus one minute for that last action;
* streaks: days (in the clock's time zone) with at least one event; the current streak
  still counts when today has no event yet but yesterday had;
* a 90-day heatmap of events per day;
* badges, each earned from real events (see :data:`BADGES`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

Event = tuple[datetime, str, dict[str, Any]]
"""(when, kind, detail): kinds are ``generated``, ``quiz``, ``review``, ``lesson``, ``opened``."""

IDLE_GAP = timedelta(minutes=30)
LAST_ACTION = timedelta(minutes=1)
HEATMAP_DAYS = 90


@dataclass(frozen=True)
class Session:
    start: datetime
    end: datetime
    events: int

    @property
    def minutes(self) -> float:
        return (self.end - self.start + LAST_ACTION).total_seconds() / 60


def split_sessions(times: list[datetime], gap: timedelta = IDLE_GAP) -> list[Session]:
    sessions: list[Session] = []
    for at in sorted(times):
        if sessions and at - sessions[-1].end <= gap:
            last = sessions[-1]
            sessions[-1] = Session(last.start, at, last.events + 1)
        else:
            sessions.append(Session(at, at, 1))
    return sessions


def streaks(days: set[date], today: date) -> tuple[int, int]:
    """(current, longest) runs of consecutive active days."""
    longest = run = 0
    previous: date | None = None
    for day in sorted(days):
        run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
        longest = max(longest, run)
        previous = day
    current = 0
    day = today if today in days else today - timedelta(days=1)
    while day in days:
        current += 1
        day -= timedelta(days=1)
    return current, longest


def heatmap(days: Counter[date], today: date, span: int = HEATMAP_DAYS) -> list[dict[str, Any]]:
    start = today - timedelta(days=span - 1)
    return [{"date": (start + timedelta(days=i)).isoformat(), "count": days.get(start + timedelta(days=i), 0)}
            for i in range(span)]  # fmt: skip


BADGES: tuple[tuple[str, str, str], ...] = (
    ("first_steps", "First steps", "Generate your first piece of study material"),
    ("first_quiz", "Quiz taker", "Finish a quiz"),
    ("perfect_score", "Flawless", "Score 100% on a quiz of at least 3 questions"),
    ("quiz_regular", "Quiz regular", "Finish 10 quizzes"),
    ("first_review", "Card flipper", "Review a flashcard"),
    ("reviews_100", "Centurion", "Review 100 flashcards"),
    ("lesson_reader", "Apprentice", "Open 3 workshop lessons"),
    ("cartographer", "Cartographer", "Open a mind map"),
    ("all_rounder", "All-rounder", "Generate all four kinds of material"),
    ("streak_3", "On a roll", "Study 3 days in a row"),
    ("streak_7", "Week-long streak", "Study 7 days in a row"),
    ("hour_of_study", "Deep work", "Study for 60 minutes in all"),
    ("night_owl", "Night owl", "Study between midnight and 4 a.m."),
    ("early_bird", "Early bird", "Study between 5 and 7 a.m."),
)


def compute(events: list[Event], now: datetime) -> dict[str, Any]:
    """Everything the dashboard shows, as JSON-ready data."""
    tz = now.tzinfo
    local = [(at.astimezone(tz) if tz else at, kind, detail) for at, kind, detail in events]
    sessions = split_sessions([at for at, _k, _d in local])
    per_day: Counter[date] = Counter(at.date() for at, _k, _d in local)
    current, longest = streaks(set(per_day), now.date())
    kinds = Counter(kind for _at, kind, _d in local)
    quizzes = [d for _at, kind, d in local if kind == "quiz"]
    generated = {d.get("kind") for _at, kind, d in local if kind == "generated"}
    opened = Counter(d.get("kind") for _at, kind, d in local if kind == "opened")
    total_minutes = sum(s.minutes for s in sessions)
    hours = {at.hour for at, _k, _d in local}
    earned = {
        "first_steps": bool(generated),
        "first_quiz": bool(quizzes),
        "perfect_score": any(q.get("total", 0) >= 3 and q.get("score") == q.get("total") for q in quizzes),
        "quiz_regular": len(quizzes) >= 10,
        "first_review": kinds["review"] >= 1,
        "reviews_100": kinds["review"] >= 100,
        "lesson_reader": kinds["lesson"] >= 3,
        "cartographer": opened["mindmap"] >= 1,
        "all_rounder": {"quiz", "flashcards", "workshop", "mindmap"} <= generated,
        "streak_3": longest >= 3,
        "streak_7": longest >= 7,
        "hour_of_study": total_minutes >= 60,
        "night_owl": bool(hours & {0, 1, 2, 3}),
        "early_bird": bool(hours & {5, 6}),
    }
    scores = [q["score"] / q["total"] for q in quizzes if q.get("total")]
    return {
        "now": now.isoformat(timespec="seconds"),
        "study_minutes": round(total_minutes, 1),
        "sessions": len(sessions),
        "streak": {"current": current, "longest": longest},
        "totals": {"quizzes": len(quizzes), "reviews": kinds["review"], "lessons": kinds["lesson"],
                   "generated": kinds["generated"],
                   "average_score": round(sum(scores) / len(scores), 3) if scores else None},
        "badges": [{"id": bid, "name": name, "description": text, "earned": earned[bid]} for bid, name, text in BADGES],
        "heatmap": heatmap(per_day, now.date()),
    }
