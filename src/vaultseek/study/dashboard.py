"""The study dashboard, computed from the activity log alone (pure functions; the clock is an
argument, so tests use a fixed one).

* study time: events split into sessions at idle gaps of more than 30 minutes; a session
  lasts from its first to its last event plus one minute for that last action;
* streaks: days (in the clock's time zone) with at least one event; the current streak
  still counts when today has no event yet but yesterday had;
* a 90-day heatmap of events per day;
* 25 badges, each earned from real events and shown with the progress toward it (see
  :data:`BADGES`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

Event = tuple[datetime, str, dict[str, Any]]
"""(when, kind, detail): kinds are ``generated``, ``quiz``, ``review``, ``lesson``, ``opened``;
``detail`` holds the ``material_id`` the event is about (when it is about one)."""

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


@dataclass(frozen=True)
class Badge:
    """One badge: what earns it (``how``), and the figure that measures the way there, which
    earns the badge on reaching ``target`` (``unit`` names that figure, singular and plural)."""

    id: str
    name: str
    how: str
    target: int
    unit: tuple[str, str]


BADGES: tuple[Badge, ...] = (
    Badge("first_steps", "First steps", "Generate your first piece of study material.", 1, ("piece", "pieces")),
    Badge("prolific", "Prolific", "Generate 10 pieces of study material.", 10, ("piece", "pieces")),
    Badge("all_rounder", "All-rounder", "Generate each of the four kinds: quiz, flashcards, workshop and mind map.", 4, ("kind", "kinds")),
    Badge("first_quiz", "Quiz taker", "Finish a quiz.", 1, ("quiz", "quizzes")),
    Badge("quiz_regular", "Quiz regular", "Finish 10 quizzes.", 10, ("quiz", "quizzes")),
    Badge("quiz_master", "Quiz master", "Finish 50 quizzes.", 50, ("quiz", "quizzes")),
    Badge("perfect_score", "Flawless", "Score 100% on a quiz of at least 3 questions.", 1, ("perfect quiz", "perfect quizzes")),
    Badge("sharpshooter", "Sharpshooter", "Score 100% on 5 quizzes of at least 3 questions.", 5, ("perfect quiz", "perfect quizzes")),
    Badge("comeback", "Comeback", "Take a quiz again and beat your best earlier score on it.", 1, ("better retake", "better retakes")),
    Badge("first_review", "Card flipper", "Review a flashcard.", 1, ("review", "reviews")),
    Badge("reviews_100", "Centurion", "Review 100 flashcards.", 100, ("review", "reviews")),
    Badge("reviews_500", "Card shark", "Review 500 flashcards.", 500, ("review", "reviews")),
    Badge("steady_recall", "Steady recall", "Rate 50 flashcard reviews \u201cgood\u201d or \u201ceasy\u201d.", 50, ("good or easy review", "good or easy reviews")),
    Badge("lesson_reader", "Apprentice", "Open 3 different workshop lessons.", 3, ("lesson", "lessons")),
    Badge("graduate", "Graduate", "Open every lesson of one workshop.", 1, ("workshop", "workshops")),
    Badge("cartographer", "Cartographer", "Open a mind map.", 1, ("mind map", "mind maps")),
    Badge("streak_3", "On a roll", "Study 3 days in a row.", 3, ("day", "days")),
    Badge("streak_7", "Week-long streak", "Study 7 days in a row.", 7, ("day", "days")),
    Badge("streak_30", "Unstoppable", "Study 30 days in a row.", 30, ("day", "days")),
    Badge("weekend_warrior", "Weekend warrior", "Study on a Saturday and on the Sunday after it.", 2, ("day", "days")),
    Badge("hour_of_study", "Deep work", "Study for 60 minutes in all.", 60, ("minute", "minutes")),
    Badge("scholar", "Scholar", "Study for 10 hours in all.", 600, ("minute", "minutes")),
    Badge("marathon", "Marathon", "Study for 90 minutes in one session (no break longer than 30 minutes).", 90, ("minute", "minutes")),
    Badge("night_owl", "Night owl", "Study between midnight and 4 a.m.", 1, ("study action", "study actions")),
    Badge("early_bird", "Early bird", "Study between 5 and 7 a.m.", 1, ("study action", "study actions")),
)  # fmt: skip
"""25 badges, each earned from events in the activity log (:func:`measure` computes the figure
each one is measured by; nothing is granted by hand)."""

NIGHT_HOURS = frozenset({0, 1, 2, 3})
MORNING_HOURS = frozenset({5, 6})
GOOD_RATINGS = frozenset({3, 4})
"""FSRS ratings: 1 again, 2 hard, 3 good, 4 easy."""


def measure(events: list[Event], sessions: list[Session], longest_streak: int) -> dict[str, int]:
    """Badge id → the figure it is measured by, from local-time events (``detail`` holds the
    event's ``material_id`` where it has one)."""
    generated = [d for _at, kind, d in events if kind == "generated"]
    quizzes = [(d.get("material_id"), d) for _at, kind, d in events if kind == "quiz"]
    ratings = [d.get("rating") for _at, kind, d in events if kind == "review"]
    lessons = [d for _at, kind, d in events if kind == "lesson"]
    perfect = sum(1 for _m, q in quizzes if q.get("total", 0) >= 3 and q.get("score") == q.get("total"))
    comebacks = 0
    best: dict[str, float] = {}
    for material, q in quizzes:  # the log is in time order
        if material is None or not q.get("total"):
            continue
        ratio = q.get("score", 0) / q["total"]
        if material in best and ratio > best[material]:
            comebacks += 1
        best[material] = max(ratio, best.get(material, 0.0))
    read: dict[str, set[int]] = {}
    sizes: dict[str, int] = {}
    for d in lessons:
        material, position = d.get("material_id"), d.get("position")
        if material is None or not isinstance(position, int):
            continue
        read.setdefault(material, set()).add(position)
        if isinstance(d.get("lessons"), int):
            sizes[material] = d["lessons"]
    graduated = sum(1 for material, seen in read.items() if material in sizes and len(seen) >= sizes[material] > 0)
    days = {at.date() for at, _k, _d in events}
    weekend = 2 if any(day.weekday() == 5 and day + timedelta(days=1) in days for day in days) else (
        1 if any(day.weekday() >= 5 for day in days) else 0)  # fmt: skip
    total_minutes = sum(s.minutes for s in sessions)
    hours = [at.hour for at, _k, _d in events]
    return {
        "first_steps": len(generated), "prolific": len(generated),
        "all_rounder": len({d.get("kind") for d in generated} & {"quiz", "flashcards", "workshop", "mindmap"}),
        "first_quiz": len(quizzes), "quiz_regular": len(quizzes), "quiz_master": len(quizzes),
        "perfect_score": perfect, "sharpshooter": perfect, "comeback": comebacks,
        "first_review": len(ratings), "reviews_100": len(ratings), "reviews_500": len(ratings),
        "steady_recall": sum(1 for r in ratings if r in GOOD_RATINGS),
        "lesson_reader": sum(len(seen) for seen in read.values()), "graduate": graduated,
        "cartographer": sum(1 for _at, kind, d in events if kind == "opened" and d.get("kind") == "mindmap"),
        "streak_3": longest_streak, "streak_7": longest_streak, "streak_30": longest_streak,
        "weekend_warrior": weekend,
        "hour_of_study": int(total_minutes), "scholar": int(total_minutes),
        "marathon": int(max((s.minutes for s in sessions), default=0)),
        "night_owl": sum(1 for h in hours if h in NIGHT_HOURS),
        "early_bird": sum(1 for h in hours if h in MORNING_HOURS),
    }  # fmt: skip


def compute(events: list[Event], now: datetime) -> dict[str, Any]:
    """Everything the dashboard shows, as JSON-ready data."""
    tz = now.tzinfo
    local = [(at.astimezone(tz) if tz else at, kind, detail) for at, kind, detail in events]
    sessions = split_sessions([at for at, _k, _d in local])
    per_day: Counter[date] = Counter(at.date() for at, _k, _d in local)
    current, longest = streaks(set(per_day), now.date())
    kinds = Counter(kind for _at, kind, _d in local)
    quizzes = [d for _at, kind, d in local if kind == "quiz"]
    total_minutes = sum(s.minutes for s in sessions)
    figures = measure(local, sessions, longest)
    scores = [q["score"] / q["total"] for q in quizzes if q.get("total")]
    return {
        "now": now.isoformat(timespec="seconds"),
        "study_minutes": round(total_minutes, 1),
        "sessions": len(sessions),
        "streak": {"current": current, "longest": longest},
        "totals": {"quizzes": len(quizzes), "reviews": kinds["review"], "lessons": kinds["lesson"],
                   "generated": kinds["generated"],
                   "average_score": round(sum(scores) / len(scores), 3) if scores else None},
        "badges": [{"id": b.id, "name": b.name, "description": b.how, "earned": figures[b.id] >= b.target,
                    "progress": {"current": min(figures[b.id], b.target), "target": b.target, "unit": list(b.unit)}}
                   for b in BADGES],
        "heatmap": heatmap(per_day, now.date()),
    }  # fmt: skip
