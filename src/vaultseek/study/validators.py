"""Per-item checks for generated study material. Each validator takes one item as the model
wrote it (any JSON value) and the source numbers the model was shown, and returns the item in
its one stored shape, or ``None`` with the reason it was dropped. Nothing here raises on
model data.

Stored shapes:

    question   {"type": "multiple_choice" | "true_false", "question", "options": [...4 or 2],
                "correct_index": int, "explanation": "1–2 sentences", "source": n}
    card       {"front", "back", "source": n}
    outline    {"title", "summary", "lessons": ["title", ...]}
    mind map   {"topic", "branches": [{"label", "source": n | None,
                                       "children": [{"label", "source": n}, ...]}]}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Any

Result = tuple[dict[str, Any] | None, str | None]
MAX_TEXT = 600
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_TYPES = {
    "multiple_choice": "multiple_choice", "multiple-choice": "multiple_choice", "mc": "multiple_choice",
    "multiple choice": "multiple_choice", "mcq": "multiple_choice", "choice": "multiple_choice",
    "true_false": "true_false", "true-false": "true_false", "true/false": "true_false", "tf": "true_false",
    "true or false": "true_false", "boolean": "true_false",
}  # fmt: skip
OPTION_COUNT = {"multiple_choice": 4, "true_false": 2}


def text_of(value: Any, limit: int = MAX_TEXT) -> str | None:
    """A non-empty string, whitespace collapsed; ``None`` for anything else or too long."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text if text and len(text) <= limit else None


def source_of(value: Any, sources: Collection[int]) -> int | None:
    """A source number the model was shown: ``2``, ``"2"`` or ``"[2]"``; else ``None``."""
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        match = re.fullmatch(r"\s*\[?\s*(?:source\s*)?(\d{1,4})\s*\]?\s*", value, re.I)
        value = int(match.group(1)) if match else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value in sources else None


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def validate_question(raw: Any, sources: Collection[int]) -> Result:
    if not isinstance(raw, dict):
        return None, "a question is not an object"
    question = text_of(raw.get("question"))
    if question is None:
        return None, "a question has no question text"
    options_raw = raw.get("options")
    kind = _TYPES.get(str(raw.get("type", "")).strip().lower())
    if kind is None and isinstance(options_raw, list):
        kind = {4: "multiple_choice", 2: "true_false"}.get(len(options_raw))
    if kind is None:
        return None, f"question {question[:40]!r} has an unknown type"
    if kind == "true_false" and options_raw is None:
        options_raw = ["True", "False"]
    if not isinstance(options_raw, list) or len(options_raw) != OPTION_COUNT[kind]:
        return None, f"question {question[:40]!r} does not have exactly {OPTION_COUNT[kind]} options"
    options = [text_of(o, 300) for o in options_raw]
    if any(o is None for o in options) or len({str(o).lower() for o in options}) != len(options):
        return None, f"question {question[:40]!r} has empty or repeated options"
    index = raw.get("correct_index")
    if isinstance(index, str) and index.strip().lower() in {str(o).lower() for o in options}:
        return None, f"question {question[:40]!r} repeats the answer text instead of its index"
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(options):
        return None, f"question {question[:40]!r} has no valid correct_index"
    explanation = text_of(raw.get("explanation"), 1_000)
    if explanation is None:
        return None, f"question {question[:40]!r} has no explanation"
    explanation = " ".join(sentences(explanation)[:2])
    source = source_of(raw.get("source"), sources)
    if source is None:
        return None, f"question {question[:40]!r} does not cite a source it was given"
    return {"type": kind, "question": question, "options": options, "correct_index": index,
            "explanation": explanation, "source": source}, None  # fmt: skip


def validate_card(raw: Any, sources: Collection[int]) -> Result:
    if not isinstance(raw, dict):
        return None, "a flashcard is not an object"
    front, back = text_of(raw.get("front")), text_of(raw.get("back"))
    if front is None or back is None:
        return None, "a flashcard has an empty or missing front or back"
    if front.lower() == back.lower():
        return None, f"flashcard {front[:40]!r} has the same text on both sides"
    source = source_of(raw.get("source"), sources)
    if source is None:
        return None, f"flashcard {front[:40]!r} does not cite a source it was given"
    return {"front": front, "back": back, "source": source}, None


def validate_outline(raw: Any, lessons: int) -> Result:
    if not isinstance(raw, dict):
        return None, "the outline is not an object"
    title, summary = text_of(raw.get("title"), 200), text_of(raw.get("summary"), 1_000)
    if title is None or summary is None:
        return None, "the outline has no title or summary"
    items = raw.get("lessons")
    if not isinstance(items, list):
        return None, "the outline has no list of lessons"
    titles: list[str] = []
    for item in items:
        name = text_of(item.get("title") if isinstance(item, dict) else item, 200)
        if name is not None and name.lower() not in {t.lower() for t in titles}:
            titles.append(name)
    if not titles:
        return None, "the outline has no usable lesson titles"
    return {"title": title, "summary": summary, "lessons": titles[:lessons]}, None


def validate_mindmap(raw: Any, sources: Collection[int], branches: int) -> Result:
    """Central topic → branches → leaves. Leaves need a source they were given; a branch
    needs a label and at least one good leaf; the map needs at least one branch."""
    if not isinstance(raw, dict):
        return None, "the mind map is not an object"
    topic = text_of(raw.get("topic") or raw.get("central") or raw.get("title"), 200)
    if topic is None:
        return None, "the mind map has no central topic"
    items = raw.get("branches") or raw.get("children")
    if not isinstance(items, list):
        return None, "the mind map has no list of branches"
    kept = []
    for branch in items:
        if not isinstance(branch, dict) or (label := text_of(branch.get("label"), 200)) is None:
            continue
        leaves = []
        for leaf in branch.get("children") or branch.get("leaves") or []:
            if isinstance(leaf, dict) and (name := text_of(leaf.get("label"), 300)) is not None:
                source = source_of(leaf.get("source"), sources)
                if source is not None:
                    leaves.append({"label": name, "source": source})
        if leaves:
            kept.append({"label": label, "source": source_of(branch.get("source"), sources), "children": leaves})
    if not kept:
        return None, "no branch of the mind map has a leaf citing a source it was given"
    return {"topic": topic, "branches": kept[:branches]}, None


def keep_valid(items: list[Any], check: Callable[[Any], Result], count: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Validate every item, drop the malformed ones (with their reasons), trim to ``count``."""
    kept: list[dict[str, Any]] = []
    problems: list[str] = []
    for item in items:
        value, problem = check(item)
        if value is None:
            problems.append(problem or "an entry was malformed")
        elif len(kept) < count:
            kept.append(value)
    if len(kept) == count and len(items) > count:
        problems.append(f"{len(items)} entries came back; kept the first {count} good ones")
    return kept, problems
