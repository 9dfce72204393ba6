"""Study material as files: Markdown for every kind, and for flashcards also a CSV that Anki
imports (File → Import: comma-separated, fields front, back, tags; no header line)."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from ..errors import QueryError


def _slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()[:60] or "study"


def _cite(material: dict[str, Any], number: int | None) -> str:
    source = next((s for s in material["sources"] if s["number"] == number), None)
    if source is None:
        return ""
    return f"[{number}: {source['path']}{' · ' + source['label'] if source.get('label') else ''}]"


def to_markdown(material: dict[str, Any]) -> str:
    kind, content = material["kind"], material["content"]
    lines = [f"# {material['title']}", ""]
    if kind == "quiz":
        for n, q in enumerate(content["questions"], 1):
            lines += [f"## {n}. {q['question']}", ""]
            lines += [f"- [{'x' if i == q['correct_index'] else ' '}] {o}" for i, o in enumerate(q["options"])]
            lines += ["", f"*{q['explanation']}* {_cite(material, q['source'])}", ""]
    elif kind == "flashcards":
        for card in material["cards"]:
            lines += [f"**{card['front']}**", "", f"{card['back']} {_cite(material, card['source'])}", "", "---", ""]
    elif kind == "workshop":
        lines += [content["summary"], ""]
        written = material.get("lessons", {})
        for n, title in enumerate(content["lessons"]):
            lines += [f"## Lesson {n + 1}: {title}", "", written.get(n, "*(not opened yet)*"), ""]
    elif kind == "mindmap":
        lines += [f"- **{content['topic']}**"]
        for branch in content["branches"]:
            lines.append(f"  - {branch['label']} {_cite(material, branch.get('source'))}".rstrip())
            lines += [f"    - {leaf['label']} {_cite(material, leaf['source'])}" for leaf in branch["children"]]
        lines.append("")
    lines += ["## Sources", ""]
    lines += [f"{s['number']}. {s['path']}{' · ' + s['label'] if s.get('label') else ''}" for s in material["sources"]]
    return "\n".join(lines).rstrip() + "\n"


def to_anki_csv(material: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    tag = "vaultseek " + _slug(material["title"])
    for card in material["cards"]:
        writer.writerow([card["front"], card["back"], tag])
    return buffer.getvalue()


def export(material: dict[str, Any], fmt: str) -> tuple[str, str, str]:
    name = _slug(material["title"])
    if fmt in ("md", "markdown"):
        return to_markdown(material), "text/markdown; charset=utf-8", f"{name}.md"
    if fmt == "csv" and material["kind"] == "flashcards":
        return to_anki_csv(material), "text/csv; charset=utf-8", f"{name}.csv"
    raise QueryError(f"cannot export a {material['kind']} as {fmt!r}",
                     hint="use format=md (any kind) or format=csv (flashcards, for Anki)")  # fmt: skip
