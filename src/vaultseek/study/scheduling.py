"""Flashcard scheduling with FSRS (the Free Spaced Repetition Scheduler, FSRS-6 through the
maintained ``fsrs`` package — the one module that imports it).

Why FSRS and not SM-2: FSRS models each card's memory (stability, difficulty) and schedules
the next review for a target recall probability (90% here); on the open-spaced-repetition
benchmark it needs noticeably fewer reviews than SM-2 for the same retention, and it is what
Anki ships as its modern scheduler. SM-2 would only have been the fallback had no maintained
implementation been installable.

A card's state is stored as the package's own JSON (``Card.to_dict``); fuzzing of intervals
is off so the same reviews always give the same schedule (and tests can use a fake clock).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import MissingExtraError, QueryError

try:
    from fsrs import Card, Rating, Scheduler
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

if TYPE_CHECKING:
    from fsrs.card import CardDict

RATINGS = {"again": Rating.Again, "hard": Rating.Hard, "good": Rating.Good, "easy": Rating.Easy}
_SCHEDULER = Scheduler(desired_retention=0.9, enable_fuzzing=False)


def new_schedule(now: datetime, card_id: int = 0) -> tuple[str, str]:
    """A new card's state, due now: ``(state_json, due_iso)``."""
    card = Card(card_id=card_id or None, due=now)
    return json.dumps(card.to_dict()), card.due.isoformat(timespec="seconds")


def rating_of(name: object) -> int:
    if not isinstance(name, str) or name.lower() not in RATINGS:
        raise QueryError('"rating" must be one of "again", "hard", "good", "easy"')
    return int(RATINGS[name.lower()])


def review(state: CardDict, rating: int, now: datetime) -> tuple[str, str, float]:
    """The state after one review: ``(state_json, next_due_iso, interval_days)``."""
    card = Card.from_dict(state)
    after, _log = _SCHEDULER.review_card(card, Rating(rating), now)
    days = (after.due - now).total_seconds() / 86400
    return json.dumps(after.to_dict()), after.due.isoformat(timespec="seconds"), round(days, 4)
