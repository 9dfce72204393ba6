"""The four generators, each the same defensive pipeline:

    scoped retrieval → prompt (a filled-in example, exact counts) → generation under a JSON
    schema → tolerant parsing → per-item validation (malformed items dropped) → trimmed to
    the requested count

with exactly one retry, for the workshop outline only (a partial outline is useless). Lessons
are plain Markdown, written only when opened, with the model's chat filler removed.

Progress goes through a callback (``report``), as plain dicts the web adapter streams to the
page: ``{"stage": "writing", "items": 3, "of": 5, "chars": 812}`` while the model writes
(``items`` counts the entries begun so far in its JSON), ``{"stage": "checking"}`` when the
reply is parsed. Stopping is cancelling: cancel the task that runs :meth:`Generator.generate`
and the upstream model request is closed.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LLMError, QueryError
from ..llm import ChatClient, Message, Text
from ..llm.structured import parse_items, parse_object, strip_filler
from ..records import SearchFilter
from . import prompting
from .library import KnowledgeBase
from .sources import Source, SourceList
from .validators import (
    keep_valid,
    validate_card,
    validate_mindmap,
    validate_outline,
    validate_question,
)

COUNTS = {"quiz": (1, 30, 5), "flashcards": (1, 50, 10), "workshop": (2, 10, 4), "mindmap": (2, 8, 4)}
"""kind → (least, most, default) questions / cards / lessons / branches."""
GENERIC_QUERY = "main ideas key facts definitions rules"
SOURCES_K = 8
Report = Callable[[dict[str, Any]], None]
"""Where progress goes (see the module docstring)."""
ITEM_KEY = {"quiz": re.compile(r'"question"\s*:'), "flashcards": re.compile(r'"front"\s*:'),
            "workshop": re.compile(r'[\[,]\s*\{\s*"title"\s*:'), "mindmap": re.compile(r'"children"\s*:')}  # fmt: skip
"""What begins one entry of each kind in the model's JSON (a lesson is an object in a list,
holding a title; a branch holds children), for counting entries while they stream."""
REPORT_EVERY = 0.15
"""Seconds between two progress reports about the same entry (fewer, not every token)."""


def _quiet(_item: dict[str, Any]) -> None:
    pass


@dataclass(frozen=True)
class Order:
    kind: str
    count: int
    scope: dict[str, Any] = field(default_factory=dict)
    topic: str = ""
    title: str = ""

    @classmethod
    def from_json(cls, data: Any) -> Order:
        if not isinstance(data, dict):
            raise QueryError("the request body must be a JSON object")
        kind = data.get("kind")
        if kind not in COUNTS:
            raise QueryError('"kind" must be one of "quiz", "flashcards", "workshop", "mindmap"')
        least, most, default = COUNTS[kind]
        count = data.get("count", default)
        if isinstance(count, bool) or not isinstance(count, int) or not least <= count <= most:
            raise QueryError(f'"count" for a {kind} must be a whole number from {least} to {most}')
        scope = data.get("scope") or {}
        if not isinstance(scope, dict):
            raise QueryError('"scope" must be an object such as {"categories": ["law"]}')
        topic, title = data.get("topic") or "", data.get("title") or ""
        if not isinstance(topic, str) or not isinstance(title, str) or len(topic) > 500 or len(title) > 200:
            raise QueryError('"topic" and "title" must be short strings')
        return cls(kind, count, scope, topic.strip(), title.strip())


@dataclass
class Generated:
    title: str
    content: dict[str, Any]
    sources: list[Source]
    problems: list[str]


class Generator:
    def __init__(self, kb: KnowledgeBase, client: ChatClient, *, context: int, prompt_folder: Path | None) -> None:
        self.kb = kb
        self.client = client
        self.context = context
        self.prompt_folder = prompt_folder

    def retrieve(self, order: Order) -> list[Source]:
        """Sources from the chosen scope: the topic's best chunks (hybrid), or with no topic
        the chunks nearest to a generic 'key ideas' query (vector)."""
        scope: SearchFilter = self.kb.scope_filter(order.scope)
        mode = "hybrid" if order.topic else "vector"
        response = self.kb.search(order.topic or GENERIC_QUERY, scope, mode=mode, view="chunks", k=SOURCES_K, syntax=False)  # a topic
        sources = SourceList()
        sources.add_within(response.results, self.context // 2)
        if not sources.items:
            raise QueryError("nothing in the chosen scope to study from",
                             hint="pick other categories, folders or tags, or index some notes first")  # fmt: skip
        return sources.items

    async def ask(self, prompt: str, schema: dict[str, Any] | None, *, report: Report = _quiet,
                  kind: str = "", count: int = 0) -> str:  # fmt: skip
        """The model's whole reply; while it streams, ``report`` hears how far it has got."""
        messages: list[Message] = [{"role": "user", "content": prompt}]
        text = ""
        items = reported = 0
        last = 0.0
        key = ITEM_KEY.get(kind)
        async for event in self.client.chat_stream(messages, format=schema):
            if not isinstance(event, Text):
                continue
            before = len(text)
            text += event.text
            if key is not None:  # only matches that end in the new text: each is counted once
                items += sum(1 for m in key.finditer(text, max(0, before - 24)) if m.end() > before)
            now = time.monotonic()
            if items != reported or now - last >= REPORT_EVERY:
                reported, last = items, now
                report({"stage": "writing", "items": min(items, count) if count else items, "of": count, "chars": len(text)})
        return text

    def _prompt(self, name: str, order: Order, sources: list[Source], **extra: Any) -> str:
        blocks = "\n\n".join(s.prompt_block() for s in sources)
        focus = f"Focus on: {order.topic}\n" if order.topic else ""
        return prompting.render(name, self.prompt_folder, count=order.count, sources=blocks, focus=focus, **extra)

    async def generate(self, order: Order, sources: list[Source], *, report: Report = _quiet) -> Generated:
        numbers = {s.number for s in sources}
        if order.kind in ("quiz", "flashcards"):
            wrapper, keys, schema, check = (
                ("questions", ("question",), prompting.quiz_schema(order.count), validate_question)
                if order.kind == "quiz"
                else ("cards", ("front", "back"), prompting.flashcards_schema(order.count), validate_card)
            )
            reply = await self.ask(self._prompt(order.kind, order, sources), schema, report=report, kind=order.kind, count=order.count)
            report({"stage": "checking"})
            parsed = parse_items(reply, wrapper, keys)
            items, dropped = keep_valid(parsed.items, lambda raw: check(raw, numbers), order.count)
            problems = parsed.problems + dropped
            if not items:
                raise LLMError(f"the model's reply held no usable {wrapper}",
                               hint="; ".join(problems[:5]) or "try again, or a larger model")  # fmt: skip
            if len(items) < order.count:
                problems.append(f"{order.count} asked for, {len(items)} usable")
            title = order.title or _title(order, sources, "Quiz" if order.kind == "quiz" else "Flashcards")
            return Generated(title, {wrapper: items}, sources, problems)
        if order.kind == "mindmap":
            reply = await self.ask(self._prompt("mindmap", order, sources), prompting.mindmap_schema(order.count),
                                   report=report, kind=order.kind, count=order.count)  # fmt: skip
            report({"stage": "checking"})
            raw, problems = parse_object(reply, ("branches",))
            tree, problem = validate_mindmap(raw, numbers, order.count)
            if tree is None:
                raise LLMError("the model's reply held no usable mind map", hint=problem or "; ".join(problems[:5]))
            return Generated(order.title or tree["topic"], tree, sources, problems)
        return await self._outline(order, sources, report)

    async def _outline(self, order: Order, sources: list[Source], report: Report) -> Generated:
        problems: list[str] = []
        for attempt, template in enumerate(("outline", "outline_retry")):
            if attempt:
                report({"stage": "retrying", "reason": problems[-1] if problems else "the outline was unusable"})
            reply = await self.ask(self._prompt(template, order, sources), prompting.outline_schema(order.count),
                                   report=report, kind=order.kind, count=order.count)  # fmt: skip
            report({"stage": "checking"})
            raw, found = parse_object(reply, ("title", "lessons"))
            outline, problem = validate_outline(raw, order.count)
            if outline is not None:
                if attempt:
                    problems.append("the first outline was unusable; the one retry worked")
                return Generated(order.title or outline["title"], outline, sources, problems + found)
            problems += found + ([problem] if problem else [])
        raise LLMError("the model did not produce a usable workshop outline (tried twice)",
                       hint="; ".join(problems[:5]) or "try a narrower scope or a larger model")  # fmt: skip

    async def lesson(self, outline: dict[str, Any], position: int, sources: list[Source]) -> str:
        prompt = prompting.render(
            "lesson", self.prompt_folder, number=position + 1, workshop=outline["title"], summary=outline["summary"],
            lesson=outline["lessons"][position], lessons="; ".join(outline["lessons"]),
            sources="\n\n".join(s.prompt_block() for s in sources),
        )  # fmt: skip
        markdown = strip_filler(await self.ask(prompt, None))
        if not markdown:
            raise LLMError("the model wrote an empty lesson", hint="open the lesson again to retry")
        return markdown


def _title(order: Order, sources: list[Source], noun: str) -> str:
    about = order.topic or ", ".join(dict.fromkeys(Path(s.path).stem for s in sources[:2]))
    return f"{noun}: {about}"[:200]
