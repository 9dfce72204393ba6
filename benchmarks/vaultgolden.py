"""Judged queries taken from a real vault's own structure (the signals and links benchmarks' sets).

The vault is the PowerShell documentation in ``../shared/data/powershell-docs/reference``: the
7.5 cmdlet reference and the conceptual articles, 1,110 notes with YAML frontmatter (``title``,
``aliases``, ``description``, ``ms.date``) and about 2,800 relative markdown links between them —
the structure a personal vault has, written by people who did not know it would be searched.
Its authors' own metadata becomes the judgments, so no query is invented:

- **alias**: each frontmatter alias (``gci``, ``ls``, ``dir``) → its note. What someone who
  remembers the short name types.
- **title**: each note's frontmatter title (``Get-ChildItem``, ``about_Profiles``,
  ``What's New in PowerShell-Docs for 2021``) → its note. Known-item search by name; most are
  identifiers, which is where query-intent weighting should help.
- **description**: the frontmatter description (a one-line summary written apart from the body,
  e.g. "Describes how to create and use a PowerShell profile.") → its note. A natural-language
  known-item query.
- **neighbourhood**: the description again, but the notes the described note links to count
  too (grade 1; the note itself grade 2), as a reader following the topic would. Where a
  link-graph signal should help — and the set is built from links, so read it as an upper
  bound on what links can add.

Only the 7.5 version of the reference is used: the other version folders are near-copies, and
a known-item query with five equally right answers measures nothing. The copy keeps every
file's path (so links resolve) and sets its modification time from ``ms.date``, so a recency
signal meets real dates.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from vaultseek.notes.markdown import split_frontmatter

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SOURCE_FOLDERS = ("7.5", "docs-conceptual")
"""Folders of ``powershell-docs/reference`` copied into the vault."""
SETS = ("alias", "title", "description", "neighbourhood")
_MD_LINK = re.compile(r"\]\(([^)\s]+\.md)(?:#[^)]*)?\)")


@dataclass(frozen=True, slots=True)
class VaultNote:
    path: str
    """Relative to the vault, ``/``-separated."""
    title: str | None
    aliases: tuple[str, ...]
    description: str | None
    date: datetime | None
    links: tuple[str, ...]
    """Vault paths this note links to with relative markdown links (existing notes only)."""


def powershell_source(data: Path = DATA) -> Path:
    return data / "powershell-docs" / "reference"


def build_vault(source: Path, vault: Path) -> list[VaultNote]:
    """Copy the chosen folders into ``vault`` (replacing it) and return what each note's
    metadata says. Modification times come from ``ms.date`` (noon UTC), else stay as copied."""
    if vault.exists():
        shutil.rmtree(vault)
    copied: dict[str, str] = {}
    for folder in SOURCE_FOLDERS:
        for path in sorted((source / folder).rglob("*.md")):
            rel = path.relative_to(source).as_posix()
            target = vault / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text("utf-8", errors="replace")
            target.write_text(text, "utf-8")
            copied[rel] = text
    notes = [_describe(rel, text, copied) for rel, text in sorted(copied.items())]
    for note in notes:
        if note.date is not None:
            stamp = note.date.timestamp()
            os.utime(vault / note.path, (stamp, stamp))
    return notes


def _describe(rel: str, text: str, existing: dict[str, str]) -> VaultNote:
    meta, _body = split_frontmatter(text)
    aliases = meta.get("aliases") or ()
    if isinstance(aliases, str):
        aliases = (aliases,)
    links = []
    folder = Path(rel).parent
    for raw in _MD_LINK.findall(text):
        if "://" in raw:
            continue
        target = os.path.normpath((folder / unquote(raw)).as_posix()).replace(os.sep, "/")
        if target in existing and target != rel and target not in links:
            links.append(target)
    return VaultNote(
        rel,
        _text(meta.get("title")),
        tuple(a.strip() for a in aliases if isinstance(a, str) and a.strip()),
        _text(meta.get("description")),
        _date(meta.get("ms.date")),
        tuple(links),
    )


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _date(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.strptime(value.strip(), "%m/%d/%Y").replace(hour=12, tzinfo=UTC)
    except ValueError:
        return None


def golden_sets(notes: list[VaultNote]) -> dict[str, list[dict[str, Any]]]:
    """The four judged sets (see the module docstring), as golden-file rows. A query text that
    names two notes (the same alias or title on two notes) is kept with both as relevant."""
    sets: dict[str, list[dict[str, Any]]] = {name: [] for name in SETS}
    for name, pairs in (
        ("alias", ((a, n) for n in notes for a in n.aliases)),
        ("title", ((n.title, n) for n in notes if n.title)),
        ("description", ((n.description, n) for n in notes if n.description)),
    ):
        grouped: dict[str, dict[str, int]] = {}
        for query, note in pairs:
            grouped.setdefault(query, {})[note.path] = 1
        sets[name] = [
            {"id": f"{name}-{i}", "query": query, "relevant": relevant}
            for i, (query, relevant) in enumerate(sorted(grouped.items()))
        ]
    for i, note in enumerate(n for n in notes if n.description and n.links):
        relevant = dict.fromkeys(note.links, 1)
        relevant[note.path] = 2
        sets["neighbourhood"].append({"id": f"neighbourhood-{i}", "query": note.description, "relevant": relevant})
    return sets


def write_golden(sets: dict[str, list[dict[str, Any]]], folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, rows in sets.items():
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
        written[name] = path
    return written


def iter_rows(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            yield json.loads(line)
