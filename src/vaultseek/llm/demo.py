"""A built-in stand-in for a chat model, for demo mode (``vaultseek serve --demo``): the app
runs with no model server, and every page works.

It is honest about what it is: nothing here generates language. Answers quote the sentences
of the retrieved passages that share the most words with the question, each with its
citation, and say they come from the demo. For the study hub it builds the JSON the
generators ask for (their schema names the kind) out of the passages' own sentences:
fill-the-gap questions and flashcards, an outline with one lesson per passage, a lesson of
quoted key points, a mind map of passages and their sentences.

It reads only the messages it is given: no network, no files, no port.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .events import Done, Event, Message, Text, ToolSpec

DEMO_MODEL = "demo (no model server)"
PIECE_DELAY = 0.01
"""Seconds between streamed pieces, so the page shows an answer arriving as it would."""
PIECE_CHARS = 24

_HEADER = re.compile(r"^\[(\d+)\] (.+)$", re.M)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WORD = re.compile(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ'-]+")
_STOP = frozenset("""
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers him his how i if in into is it its just me more most my
no nor not now of off on once only or other our out over own same she should so some such
than that the their them then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your yours
tell explain describe please give show list say says said notes note sources source
""".split())  # fmt: skip


@dataclass(frozen=True)
class Passage:
    number: int
    where: str
    text: str

    @property
    def title(self) -> str:
        """The passage's label (after the ``·``), else its file name as words."""
        path, _, label = self.where.partition(" · ")
        if label.strip():
            return label.strip()[:80]
        return PurePosixPath(path).stem.replace("-", " ").replace("_", " ").strip().capitalize() or path

    def sentences(self) -> list[str]:
        return sentences_of(self.text)


def sentences_of(text: str) -> list[str]:
    """Plain sentences of Markdown text: headings, list marks, emphasis and front matter out."""
    body = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    lines = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "```", "|", "<")):
            continue
        lines.append(re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line))
    flat = re.sub(r"[*_`]+", "", " ".join(lines))
    return [s.strip() for s in _SENTENCE.split(flat) if len(_WORD.findall(s)) >= 4]


def passages_in(text: str) -> list[Passage]:
    """The numbered passages (``[1] path · label`` then the text) after the last ``Sources:``."""
    start = text.rfind("Sources:")
    body = text[start:] if start >= 0 else text
    headers = list(_HEADER.finditer(body))
    found = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(body)
        found.append(Passage(int(header.group(1)), header.group(2).strip(), body[header.end():end].strip()))
    return found


def terms(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 2 and w.lower() not in _STOP}


def _key_word(sentence: str, avoid: set[str]) -> str | None:
    """The word a fill-the-gap question blanks: the longest content word not in ``avoid``."""
    words = [w for w in _WORD.findall(sentence) if len(w) >= 5 and w.lower() not in _STOP and w.lower() not in avoid]
    return max(words, key=len) if words else None


def _gap(sentence: str, word: str) -> str:
    return re.sub(rf"\b{re.escape(word)}\b", "_____", sentence, count=1)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _facts(passages: list[Passage]) -> list[tuple[Passage, str, str]]:
    """(passage, sentence, key word) for every sentence with a key word, passages taken in
    turn so that each is used before any is used twice."""
    per = [[(p, s) for s in p.sentences()] for p in passages]
    out: list[tuple[Passage, str, str]] = []
    used: set[str] = set()
    for row in range(max((len(x) for x in per), default=0)):
        for column in per:
            if row < len(column):
                passage, sentence = column[row]
                word = _key_word(_short(sentence, 280), used)
                if word is not None:
                    used.add(word.lower())
                    out.append((passage, _short(sentence, 280), word))
    return out


# -- the study hub's JSON ---------------------------------------------------------------------
def _quiz(passages: list[Passage], count: int) -> dict[str, Any]:
    facts = _facts(passages)
    words = [w for _p, _s, w in facts]
    questions = []
    for n, (passage, sentence, word) in enumerate(facts[:count]):
        others = [w for w in words if w.lower() != word.lower()]
        others = [others[(n + 1 + i) % len(others)] for i in range(len(others))] if others else []
        distractors = list(dict.fromkeys(w for w in others if w.lower() != word.lower()))[:3]
        explanation = f'Source [{passage.number}] says: "{_short(sentence, 240)}"'
        if len(distractors) == 3:
            options = distractors[:]
            index = n % 4
            options.insert(index, word)
            questions.append({"type": "multiple_choice", "question": f'Which word fills the gap? "{_gap(sentence, word)}"',
                              "options": options, "correct_index": index, "explanation": explanation,
                              "source": passage.number})  # fmt: skip
        else:
            questions.append({"type": "true_false", "question": f'True or false, by your notes: "{sentence}"',
                              "options": ["True", "False"], "correct_index": 0, "explanation": explanation,
                              "source": passage.number})  # fmt: skip
    return {"questions": questions}


def _cards(passages: list[Passage], count: int) -> dict[str, Any]:
    cards = [{"front": f'Fill the gap: "{_gap(sentence, word)}"', "back": f"{word}. ({sentence})", "source": passage.number}
             for passage, sentence, word in _facts(passages)[:count]]  # fmt: skip
    return {"cards": cards}


def _topic(passages: list[Passage], focus: str) -> str:
    """What a workshop or map is about: the focus asked for, else the passages' titles."""
    if focus:
        return focus
    titles = list(dict.fromkeys(p.title for p in passages))
    if not titles:
        return "Your notes"
    return titles[0] if len(titles) == 1 else f"{titles[0]}, {titles[1]} and more" if len(titles) > 2 else " and ".join(titles)


def _outline(passages: list[Passage], count: int, focus: str) -> dict[str, Any]:
    titles: list[str] = []
    for passage in passages:
        if passage.title.lower() not in {t.lower() for t in titles}:
            titles.append(passage.title)
    base = list(titles) or ["Your notes"]
    part = 2
    while len(titles) < count:
        titles.append(f"{base[(part - 2) % len(base)]}, part {part}")
        part += 1
    return {"title": f"Workshop: {_topic(passages, focus)}"[:200],
            "summary": f"A short course built from {len(passages)} passages of your notes, one lesson at a time.",
            "lessons": [{"title": t} for t in titles[:count]]}  # fmt: skip


def _lesson(prompt: str, passages: list[Passage]) -> str:
    found = re.search(r'lesson (\d+) of the workshop "(.*?)": "(.*?)"', prompt)
    number, title = (int(found.group(1)), found.group(3)) if found else (1, "This lesson")
    wanted = terms(title)
    ranked = sorted(passages, key=lambda p: (-len(wanted & terms(p.text)), p.number))
    chosen = ranked[0] if ranked else None
    order = [chosen] + [p for p in passages if p is not chosen] if chosen else []
    points = [(p, s) for p in order for s in p.sentences()[:3]][:5]
    lines = [f"# {title}", "", f"Lesson {number}, made of what your notes say (demo mode quotes them; no model wrote this).", "",
             "## Key points", ""]  # fmt: skip
    lines += [f"- {s} [{p.number}]" for p, s in points] or ["- The notes in scope hold no full sentences to quote."]
    if points:
        lines += ["", f"**Recap:** {points[0][1]} [{points[0][0].number}]"]
    return "\n".join(lines)


def _mindmap(passages: list[Passage], count: int, focus: str) -> dict[str, Any]:
    branches = []
    for passage in passages[:count]:
        leaves = [{"label": _short(s, 90), "source": passage.number} for s in passage.sentences()[:3]]
        if leaves:
            branches.append({"label": passage.title, "source": passage.number, "children": leaves})
    return {"topic": _topic(passages[:count], focus), "branches": branches}


def structured(schema: dict[str, Any], prompt: str) -> str:
    """The JSON reply a study-hub generator asked for (its schema says which kind)."""
    passages = passages_in(prompt)
    props = schema.get("properties", {})
    focus_found = re.search(r"^Focus on: (.+)$", prompt, re.M)
    focus = focus_found.group(1).strip() if focus_found else ""

    def count(key: str) -> int:
        return int(props.get(key, {}).get("minItems", 4))

    if "questions" in props:
        data = _quiz(passages, count("questions"))
    elif "cards" in props:
        data = _cards(passages, count("cards"))
    elif "branches" in props:
        data = _mindmap(passages, count("branches"), focus)
    elif "lessons" in props:
        data = _outline(passages, count("lessons"), focus)
    else:
        data = {}
    return json.dumps(data, ensure_ascii=False, indent=1)


# -- chat -------------------------------------------------------------------------------------
NOTICE = "*Demo mode: these sentences are quoted from your notes; no language model wrote this answer.*"


def answer(question: str, passages: list[Passage], *, limit: int = 3) -> str:
    """Markdown quoting the passages' sentences that share most words with the question."""
    if not passages:
        return f"I found nothing in your notes about that.\n\n{NOTICE}"
    wanted = terms(question)
    scored = [(len(wanted & terms(s)), -p.number, -i, p, s) for p in passages for i, s in enumerate(p.sentences())]
    best = sorted((x for x in scored if x[0] > 0), key=lambda x: x[:3], reverse=True)[:limit]
    if not best:
        first = next(((p, s) for p in passages for s in p.sentences()), None)
        if first is None:
            return f"The passages found hold no full sentences to quote.\n\n{NOTICE}"
        return f"Nothing in your notes matches that closely. The nearest passage says:\n\n> {first[1]} [{first[0].number}]\n\n{NOTICE}"
    best.sort(key=lambda x: (-x[1], -x[2]))  # in the order of the sources
    quotes = "\n\n".join(f"> {s} [{p.number}]" for _score, _n, _i, p, s in best)
    return f"From your notes:\n\n{quotes}\n\n{NOTICE}"


def reply_to(messages: list[Message], format: str | dict[str, Any] | None = None) -> str:
    """The whole reply to one request."""
    user = next((str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "user"), "")
    system = next((str(m.get("content", "")) for m in messages if m.get("role") == "system"), "")
    if isinstance(format, dict):
        return structured(format, user)
    if format == "json":
        return "{}"
    if "You are writing lesson" in user and "Sources:" in user:
        return _lesson(user, passages_in(user))
    if system:
        return answer(user, passages_in(system))
    # A request of the app's own (summarise a document, compare two): the first sentences.
    said = sentences_of(user.split("\n", 1)[-1])[:3]
    return (" ".join(said) or "Nothing to summarise.") + "\n\n" + NOTICE


class DemoClient:
    """A :class:`~vaultseek.llm.ChatClient` that needs no model server (see the module
    docstring)."""

    backend = "demo"

    def __init__(self, model: str = DEMO_MODEL, *, delay: float = PIECE_DELAY) -> None:
        self.model = model
        self.delay = delay

    @property
    def url(self) -> str:
        return "built-in demo (no model server)"

    async def check(self) -> dict[str, Any]:
        return {"ok": True, "demo": True, "version": "demo",
                "message": "demo mode: answers quote your notes; no language model runs"}  # fmt: skip

    async def vision(self, model: str | None = None) -> bool | None:
        return False  # it reads text only: an attached image is not looked at

    async def models(self) -> list[dict[str, Any]]:
        return [{"name": self.model, "vision": False}]

    async def chat_stream(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        think: bool = False,
        format: str | dict[str, Any] | None = None,
        model: str | None = None,
    ) -> AsyncIterator[Event]:
        text = reply_to(messages, format)
        pieces = [text[i:i + PIECE_CHARS] for i in range(0, len(text), PIECE_CHARS)]
        for piece in pieces:
            yield Text(piece)
            if self.delay:
                await asyncio.sleep(self.delay)
        yield Done(reason="stop", prompt_tokens=sum(len(str(m.get("content", ""))) for m in messages) // 4,
                   completion_tokens=len(pieces), server_ms=0.0)  # fmt: skip
