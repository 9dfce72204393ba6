"""The study hub: generate study material from your own documents, study it, and keep the
progress. The web app calls this object (as ``notebook.hub``), never its parts.

Times come from ``clock`` (a function returning an aware datetime), so tests can move time.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import NotFoundError, QueryError
from ..llm import ChatClient
from . import dashboard, exporting, scheduling
from .archive import KINDS, Archive
from .generators import Generator, Order, Report
from .library import KnowledgeBase
from .sources import Source
from .storage import StudyStore

Clock = Callable[[], datetime]
DEMO_VAULT = Path(__file__).parent / "demo_vault"
"""The few short notes demo mode (``vaultseek serve --demo``) serves, copied to a scratch folder."""


def system_clock() -> datetime:
    return datetime.now(UTC).astimezone()


class StudyHub:
    def __init__(self, config: Config, kb: KnowledgeBase, store: StudyStore, client: ChatClient,
                 *, clock: Clock = system_clock) -> None:  # fmt: skip
        folder = Path(config.prompt_folder).expanduser() if config.prompt_folder else None
        self.archive = Archive(store)
        self.generator = Generator(kb, client, context=config.llm_context, prompt_folder=folder)
        self.client = client
        self.clock = clock
        self._lesson_locks: dict[tuple[str, int], asyncio.Lock] = {}
        self.jobs: dict[str, asyncio.Task[dict[str, Any]]] = {}
        """Generations in progress, by job id (each leaves when it ends)."""

    # -- generating -----------------------------------------------------------------------
    async def create(self, order: Order, *, report: Report | None = None) -> dict[str, Any]:
        """Generate and keep one piece of material. ``report`` hears the stages (retrieving,
        the sources found, writing with entries begun, checking, saving); cancelling the task
        that awaits this stops the model's request and keeps nothing."""
        tell = report or (lambda _item: None)
        tell({"stage": "retrieving"})
        sources = await asyncio.to_thread(self.generator.retrieve, order)
        tell({"stage": "sources", "sources": len(sources), "paths": list(dict.fromkeys(s.path for s in sources))[:8]})
        made = await self.generator.generate(order, sources, report=tell)
        tell({"stage": "saving"})
        now = self.clock()
        cards = []
        if order.kind == "flashcards":
            cards = [(card, *scheduling.new_schedule(now)) for card in made.content.pop("cards")]
        material_id = await asyncio.to_thread(
            self.archive.add_material, order.kind, made.title, scope=order.scope,
            sources=[dataclasses.asdict(s) for s in made.sources], content=made.content, problems=made.problems,
            model=self.client.model, at=now, cards=cards,
        )  # fmt: skip
        self.archive.log(now, "generated", material_id, {"kind": order.kind})
        return self.get(material_id)

    def start(self, order: Order, report: Report) -> tuple[str, asyncio.Task[dict[str, Any]]]:
        """Begin :meth:`create` as a job that :meth:`cancel` can stop: ``(job id, task)``.
        Call it on the event loop."""
        job_id = secrets.token_urlsafe(9)
        task = asyncio.ensure_future(self.create(order, report=report))
        self.jobs[job_id] = task
        task.add_done_callback(lambda _task: self.jobs.pop(job_id, None))
        return job_id, task

    def cancel(self, job_id: str) -> bool:
        """Stop a generation in progress (its model request is closed, nothing is kept);
        ``False`` when no such job is running."""
        task = self.jobs.get(job_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    # -- the library of material ----------------------------------------------------------
    def list(self, kind: str | None = None) -> list[dict[str, Any]]:
        if kind is not None and kind not in KINDS:
            raise QueryError(f"kind must be one of {', '.join(KINDS)}")
        return self.archive.list_materials(kind)

    def get(self, material_id: str, *, opened: bool = False) -> dict[str, Any]:
        material = self.archive.find_material(material_id)
        if material is None:
            raise NotFoundError(f"no study material {material_id}")
        if material["kind"] == "quiz":
            material["attempts"] = self.archive.attempts(material_id)
        if opened:
            self.archive.log(self.clock(), "opened", material_id, {"kind": material["kind"]})
        return material

    def rename(self, material_id: str, title: Any) -> dict[str, Any]:
        if not isinstance(title, str) or not title.strip() or len(title) > 200:
            raise QueryError('"title" must be a non-empty string of at most 200 characters')
        if not self.archive.rename(material_id, title.strip(), self.clock()):
            raise NotFoundError(f"no study material {material_id}")
        return self.get(material_id)

    def delete(self, material_id: str) -> None:
        if not self.archive.delete(material_id):
            raise NotFoundError(f"no study material {material_id}")

    def export(self, material_id: str, fmt: str) -> tuple[str, str, str]:
        """``(body, media type, file name)`` for Markdown (every kind) or CSV (flashcards)."""
        material = self.get(material_id)
        if material["kind"] == "workshop":
            material["lessons"] = self.archive.lessons(material_id)
        return exporting.export(material, fmt)

    # -- studying -------------------------------------------------------------------------
    def grade(self, material_id: str, answers: Any, started_at: Any = None) -> dict[str, Any]:
        """Grade a whole quiz attempt server-side and keep it (with each answer)."""
        material = self.get(material_id)
        if material["kind"] != "quiz":
            raise QueryError(f"{material_id} is not a quiz")
        questions = material["content"]["questions"]
        if not isinstance(answers, list) or len(answers) != len(questions) or not all(
            a is None or (isinstance(a, int) and not isinstance(a, bool)) for a in answers
        ):
            raise QueryError(f'"answers" must be a list of {len(questions)} option indexes (null for unanswered)')
        by_number = {s["number"]: s for s in material["sources"]}
        graded = []
        for question, chosen in zip(questions, answers, strict=True):
            source = by_number.get(question["source"], {})
            graded.append({"chosen": chosen, "correct_index": question["correct_index"],
                           "correct": chosen == question["correct_index"], "explanation": question["explanation"],
                           "source": {k: source.get(k) for k in ("number", "path", "label", "snippet")}})  # fmt: skip
        finished = self.clock()
        started = _parse_time(started_at) or finished
        attempt_id = self.archive.record_attempt(material_id, graded, started, finished)
        score = sum(1 for g in graded if g["correct"])
        return {"attempt_id": attempt_id, "score": score, "total": len(graded), "results": graded}

    def due_cards(self, material_id: str) -> builtins.list[dict[str, Any]]:  # `list` is a method here
        material = self.get(material_id)
        if material["kind"] != "flashcards":
            raise QueryError(f"{material_id} is not a flashcard deck")
        now = self.clock()
        return [c for c in material["cards"] if datetime.fromisoformat(c["due"]) <= now]

    def review(self, card_id: int, rating: Any) -> dict[str, Any]:
        value = scheduling.rating_of(rating)
        # SQLite's integers stop at 2**63 - 1: a larger id names no card (and cannot be asked for)
        card = self.archive.find_card(card_id) if 0 < card_id < 2**63 else None
        if card is None:
            raise NotFoundError(f"no flashcard {card_id}")
        now = self.clock()
        state, due, days = scheduling.review(card["schedule"], value, now)
        self.archive.record_review(card_id, card["material_id"], value, state, due, now)
        return {"card_id": card_id, "rating": rating, "due": due, "interval_days": days}

    async def lesson(self, material_id: str, position: int) -> dict[str, Any]:
        """Lesson ``position`` of a workshop, written by the model the first time it is opened."""
        material = self.get(material_id)
        if material["kind"] != "workshop":
            raise QueryError(f"{material_id} is not a workshop")
        outline = material["content"]
        if not 0 <= position < len(outline["lessons"]):
            raise NotFoundError(f"no lesson {position + 1} in this workshop (it has {len(outline['lessons'])})")
        lock = self._lesson_locks.setdefault((material_id, position), asyncio.Lock())
        async with lock:  # two tabs opening the same lesson: the model writes it once
            markdown = self.archive.lessons(material_id).get(position)
            if markdown is None:
                sources = [Source(**s) for s in material["sources"]]
                markdown = await self.generator.lesson(outline, position, sources)
                self.archive.save_lesson(material_id, position, markdown, self.clock())
        self.archive.log(self.clock(), "lesson", material_id, {"position": position, "lessons": len(outline["lessons"])})
        return {"material_id": material_id, "position": position, "title": outline["lessons"][position],
                "markdown": markdown}  # fmt: skip

    def dashboard(self) -> dict[str, Any]:
        return dashboard.compute(self.archive.activity(), self.clock())


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else None
