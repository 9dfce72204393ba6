"""What the study hub sends a model: prompt templates (editable text files) and the JSON
schema each kind of answer must follow (``format`` for Ollama, ``response_format`` for
OpenAI-compatible servers, where the server turns it into a decoding grammar).

Templates live in ``study/prompts/*.txt`` and use ``$name`` placeholders
(:class:`string.Template`, so the JSON examples in them need no escaping). A file of the same
name in the folder named by the ``prompt_folder`` setting replaces the built-in one.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from ..errors import ConfigError

BUILTIN = Path(__file__).parent / "prompts"
TEMPLATES = ("quiz", "flashcards", "outline", "outline_retry", "lesson", "mindmap")


def load_template(name: str, folder: Path | None = None) -> string.Template:
    """The template ``name``: the user's copy in ``folder`` if there is one, else the built-in."""
    if name not in TEMPLATES:
        raise ConfigError(f"no prompt template {name!r}")
    for base in (folder, BUILTIN):
        if base is not None and (base / f"{name}.txt").is_file():
            try:
                return string.Template((base / f"{name}.txt").read_text("utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"cannot read the prompt template {base / f'{name}.txt'}: {exc}",
                                  hint="fix or delete the file to use the built-in template") from exc  # fmt: skip
    raise ConfigError(f"the built-in prompt template {name} is missing", hint="reinstall vaultseek")


def render(name: str, folder: Path | None = None, **values: Any) -> str:
    """The filled-in prompt; unknown placeholders in a user's template stay as written."""
    return load_template(name, folder).safe_substitute({k: str(v) for k, v in values.items()})


def _source_number() -> dict[str, Any]:
    return {"type": "integer", "minimum": 1}


def quiz_schema(count: int) -> dict[str, Any]:
    """Multiple choice (exactly 4 options) or true/false (exactly 2), as two exact shapes so
    the grammar itself enforces the option counts and the index range."""

    def shape(kind: str, options: int) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": [kind]},
                "question": {"type": "string"},
                "options": {"type": "array", "items": {"type": "string"}, "minItems": options, "maxItems": options},
                "correct_index": {"type": "integer", "minimum": 0, "maximum": options - 1},
                "explanation": {"type": "string"},
                "source": _source_number(),
            },
            "required": ["type", "question", "options", "correct_index", "explanation", "source"],
        }

    return _wrapped("questions", {"anyOf": [shape("multiple_choice", 4), shape("true_false", 2)]}, count)


def flashcards_schema(count: int) -> dict[str, Any]:
    card = {
        "type": "object",
        "properties": {"front": {"type": "string"}, "back": {"type": "string"}, "source": _source_number()},
        "required": ["front", "back", "source"],
    }
    return _wrapped("cards", card, count)


def outline_schema(count: int) -> dict[str, Any]:
    lesson = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    return {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "summary": {"type": "string"},
            "lessons": {"type": "array", "items": lesson, "minItems": count, "maxItems": count},
        },
        "required": ["title", "summary", "lessons"],
    }


def mindmap_schema(count: int) -> dict[str, Any]:
    leaf = {"type": "object", "properties": {"label": {"type": "string"}, "source": _source_number()},
            "required": ["label", "source"]}  # fmt: skip
    branch = {
        "type": "object",
        "properties": {"label": {"type": "string"}, "source": _source_number(),
                       "children": {"type": "array", "items": leaf, "minItems": 1, "maxItems": 4}},
        "required": ["label", "source", "children"],
    }  # fmt: skip
    return {
        "type": "object",
        "properties": {"topic": {"type": "string"},
                       "branches": {"type": "array", "items": branch, "minItems": count, "maxItems": count}},
        "required": ["topic", "branches"],
    }  # fmt: skip


def _wrapped(key: str, item: dict[str, Any], count: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {"type": "array", "items": item, "minItems": count, "maxItems": count}},
        "required": [key],
    }
