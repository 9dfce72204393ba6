"""The study hub on disk: generated material (quizzes, flashcard decks, workshops, mind maps),
lazily written lessons, flashcard schedules, and every study event — quiz attempts and their
answers, card reviews, and the activity log the dashboard is computed from.

All of the hub's SQL lives here; it shares the study database's connection and lock
(:class:`~.storage.StudyStore`, whose migration ``m002_study_hub`` made the tables).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .storage import StudyStore

KINDS = ("quiz", "flashcards", "workshop", "mindmap")


def _iso(at: datetime) -> str:
    return at.isoformat(timespec="seconds")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class Archive:
    def __init__(self, store: StudyStore) -> None:
        self.store = store

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.store.lock:
            return self.store.conn.execute(sql, params).fetchall()

    # -- material -------------------------------------------------------------------------
    def add_material(self, kind: str, title: str, *, scope: dict[str, Any], sources: list[dict[str, Any]],
                     content: Any, problems: list[str], model: str, at: datetime,
                     cards: Sequence[tuple[dict[str, Any], str, str]] = ()) -> str:  # fmt: skip
        """Store one piece of material (and, for a deck, its cards with their first
        schedule: ``(card, schedule_json, due_iso)``) in one transaction."""
        material_id = uuid.uuid4().hex[:16]
        with self.store.lock, self.store.conn:
            self.store.conn.execute(
                "INSERT INTO materials(id, kind, title, scope, sources, content, problems, model, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (material_id, kind, title[:200], _dumps(scope), _dumps(sources), _dumps(content), _dumps(problems),
                 model, _iso(at), _iso(at)),
            )  # fmt: skip
            for position, (card, schedule, due) in enumerate(cards):
                self.store.conn.execute(
                    "INSERT INTO cards(material_id, position, front, back, source, schedule, due) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (material_id, position, card["front"], card["back"], card.get("source"), schedule, due),
                )
        return material_id

    def list_materials(self, kind: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT id, kind, title, created_at, updated_at, content FROM materials"
        params: tuple[Any, ...] = ()
        if kind:
            sql += " WHERE kind = ?"
            params = (kind,)
        out = []
        for mid, mkind, title, created, updated, content in self._rows(sql + " ORDER BY created_at DESC, rowid DESC", params):
            out.append({"id": mid, "kind": mkind, "title": title, "created_at": created, "updated_at": updated,
                        "size": _size(mkind, json.loads(content), mid, self)})  # fmt: skip
        return out

    def find_material(self, material_id: str) -> dict[str, Any] | None:
        rows = self._rows(
            "SELECT id, kind, title, scope, sources, content, problems, model, created_at, updated_at "
            "FROM materials WHERE id = ?", (material_id,))  # fmt: skip
        if not rows:
            return None
        mid, kind, title, scope, sources, content, problems, model, created, updated = rows[0]
        material = {"id": mid, "kind": kind, "title": title, "scope": json.loads(scope), "sources": json.loads(sources),
                    "content": json.loads(content), "problems": json.loads(problems), "model": model,
                    "created_at": created, "updated_at": updated}  # fmt: skip
        if kind == "flashcards":
            material["cards"] = self.cards(mid)
        if kind == "workshop":
            material["lessons_written"] = sorted(self.lessons(mid))
        return material

    def rename(self, material_id: str, title: str, at: datetime) -> bool:
        with self.store.lock, self.store.conn:
            self.store.conn.execute("UPDATE materials SET title = ?, updated_at = ? WHERE id = ?",
                                    (title[:200], _iso(at), material_id))  # fmt: skip
            changed = self.store.conn.changes()
        return bool(changed)

    def delete(self, material_id: str) -> bool:
        with self.store.lock, self.store.conn:
            self.store.conn.execute("DELETE FROM materials WHERE id = ?", (material_id,))
            changed = self.store.conn.changes()
        return bool(changed)

    # -- lessons --------------------------------------------------------------------------
    def lessons(self, material_id: str) -> dict[int, str]:
        return dict(self._rows("SELECT position, markdown FROM lessons WHERE material_id = ?", (material_id,)))

    def save_lesson(self, material_id: str, position: int, markdown: str, at: datetime) -> None:
        with self.store.lock, self.store.conn:
            self.store.conn.execute(
                "INSERT INTO lessons(material_id, position, markdown, created_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(material_id, position) DO UPDATE SET markdown = excluded.markdown",
                (material_id, position, markdown, _iso(at)),
            )

    # -- cards ----------------------------------------------------------------------------
    def cards(self, material_id: str) -> list[dict[str, Any]]:
        return [
            {"id": cid, "position": pos, "front": front, "back": back, "source": source, "due": due,
             "schedule": json.loads(schedule)}
            for cid, pos, front, back, source, schedule, due in self._rows(
                "SELECT id, position, front, back, source, schedule, due FROM cards WHERE material_id = ? "
                "ORDER BY position", (material_id,))
        ]  # fmt: skip

    def find_card(self, card_id: int) -> dict[str, Any] | None:
        rows = self._rows("SELECT id, material_id, front, back, schedule, due FROM cards WHERE id = ?", (card_id,))
        if not rows:
            return None
        cid, mid, front, back, schedule, due = rows[0]
        return {"id": cid, "material_id": mid, "front": front, "back": back, "schedule": json.loads(schedule), "due": due}

    def record_review(self, card_id: int, material_id: str, rating: int, schedule: str, due: str, at: datetime) -> None:
        with self.store.lock, self.store.conn:
            self.store.conn.execute("UPDATE cards SET schedule = ?, due = ? WHERE id = ?", (schedule, due, card_id))
            self.store.conn.execute(
                "INSERT INTO reviews(card_id, material_id, rating, reviewed_at, due) VALUES (?, ?, ?, ?, ?)",
                (card_id, material_id, rating, _iso(at), due),
            )
            self._log(at, "review", material_id, {"card_id": card_id, "rating": rating})

    # -- quiz attempts --------------------------------------------------------------------
    def record_attempt(self, material_id: str, graded: list[dict[str, Any]], started: datetime, finished: datetime) -> int:
        score = sum(1 for g in graded if g["correct"])
        with self.store.lock, self.store.conn:
            self.store.conn.execute(
                "INSERT INTO attempts(material_id, score, total, started_at, finished_at) VALUES (?, ?, ?, ?, ?)",
                (material_id, score, len(graded), _iso(started), _iso(finished)),
            )
            attempt_id = int(self.store.conn.last_insert_rowid())
            for number, item in enumerate(graded):
                self.store.conn.execute(
                    "INSERT INTO answers(attempt_id, question, chosen, correct) VALUES (?, ?, ?, ?)",
                    (attempt_id, number, item["chosen"], int(item["correct"])),
                )
            self._log(finished, "quiz", material_id, {"attempt_id": attempt_id, "score": score, "total": len(graded)})
        return attempt_id

    def attempts(self, material_id: str) -> list[dict[str, Any]]:
        return [
            {"id": aid, "score": score, "total": total, "finished_at": at}
            for aid, score, total, at in self._rows(
                "SELECT id, score, total, finished_at FROM attempts WHERE material_id = ? ORDER BY id DESC", (material_id,))
        ]  # fmt: skip

    # -- the activity log -----------------------------------------------------------------
    def log(self, at: datetime, kind: str, material_id: str | None = None, detail: dict[str, Any] | None = None) -> None:
        with self.store.lock, self.store.conn:
            self._log(at, kind, material_id, detail or {})

    def _log(self, at: datetime, kind: str, material_id: str | None, detail: dict[str, Any]) -> None:
        self.store.conn.execute("INSERT INTO activity(at, kind, material_id, detail) VALUES (?, ?, ?, ?)",
                                (_iso(at), kind, material_id, _dumps(detail)))  # fmt: skip

    def activity(self) -> list[tuple[datetime, str, dict[str, Any]]]:
        """Every event in time order; ``detail`` carries the event's ``material_id`` (if any)."""
        return [
            (datetime.fromisoformat(at), kind, {**json.loads(detail), **({"material_id": mid} if mid else {})})
            for at, kind, mid, detail in self._rows("SELECT at, kind, material_id, detail FROM activity ORDER BY at, id")
        ]


def _size(kind: str, content: Any, material_id: str, archive: Archive) -> int:
    if kind == "quiz":
        return len(content.get("questions", []))
    if kind == "workshop":
        return len(content.get("lessons", []))
    if kind == "mindmap":
        return len(content.get("branches", []))
    return int(archive._rows("SELECT count(*) FROM cards WHERE material_id = ?", (material_id,))[0][0])
