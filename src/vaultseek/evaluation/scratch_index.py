"""A BEIR corpus as a scratch vault, one note per document, and its index, cached by fingerprint."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine import Index, open_index
from ..errors import ConfigError
from .judged_sets import BeirSet, _json_objects

if TYPE_CHECKING:
    from ..index.sync import ProgressCallback

LAYOUT_VERSION = 2
"""Bump when the way a corpus becomes notes changes, so cached scratch vaults are rebuilt."""

_KEPT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", *(f"{d}{i}" for d in ("COM", "LPT") for i in range(10))})


def note_names(doc_ids: Sequence[str]) -> dict[str, str]:
    """Document id → a note file name, safe on every common file system and unique even where
    names are case-insensitive. Letters, digits, ``-`` and ``_`` stay; any other character
    becomes ``%XX`` per UTF-8 byte (so ``.``, ``/`` and ``..`` cannot escape, hide or nest);
    ``~``, which the encoding never produces, marks the rare adjustments: long ids, reserved
    Windows names and case clashes."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for doc_id in doc_ids:
        stem = "".join(c if c in _KEPT else "".join(f"%{b:02X}" for b in c.encode()) for c in doc_id)
        if len(stem) > 120:
            stem = stem[:100] + "~" + hashlib.sha256(doc_id.encode()).hexdigest()[:16]
        if stem.upper() in _RESERVED:
            stem = "~" + stem
        unique, n = stem, 1
        while unique.casefold() in taken:
            n += 1
            unique = f"{stem}~{n}"
        taken.add(unique.casefold())
        names[doc_id] = unique + ".md"
    return names


def note_text(title: str, text: str) -> str:
    """``# <title>``, a blank line, the text: what the note would look like in a vault. The
    title is also set in frontmatter, so the note's name is the title and not the document id
    (an id in the heading context would be searched and embedded as noise). A document
    without a title (NPL, MEDLINE) gets no heading rather than an empty one."""
    title = " ".join(title.split())
    if not title:
        return f"{text}\n"
    return f"---\ntitle: {json.dumps(title, ensure_ascii=False)}\n---\n# {title}\n\n{text}\n"


def _write_vault(corpus: Path, vault: Path) -> dict[str, str]:
    """Write every document as a note; returns note path → document id."""
    docs: dict[str, tuple[str, str]] = {}
    for number, item in _json_objects(corpus, "corpus file"):
        doc_id = str(item.get("_id", ""))
        if not doc_id or doc_id in docs:
            problem = "is used twice" if doc_id else "is missing or empty"
            raise ConfigError(f'{corpus}, line {number}: the document "_id" {problem}')
        docs[doc_id] = (str(item.get("title") or ""), str(item.get("text") or ""))
    names = note_names(list(docs))
    vault.mkdir(parents=True)
    for doc_id, (title, text) in docs.items():
        (vault / names[doc_id]).write_text(note_text(title, text), encoding="utf-8")
    return {name: doc_id for doc_id, name in names.items()}


def _fingerprint(corpus: Path) -> str:
    digest = hashlib.sha256(f"layout {LAYOUT_VERSION}\n".encode())
    with corpus.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def scratch_index(
    collection: BeirSet,
    workdir: Path,
    *,
    progress: ProgressCallback | None = None,
    db: str | None = None,
    **settings: Any,
) -> tuple[Index, dict[str, str], float]:
    """The collection's vault and index under ``workdir/<name>``: reused while the manifest
    matches the corpus, rewritten when not. A sync runs either way; on an unchanged vault it
    takes a fraction of a second, and it catches up an interrupted run or a changed model.
    ``db``: a PostgreSQL database URL to index into instead (the collection named after the
    BEIR set).

    Returns the open index, note path → document id, and the sync's seconds."""
    home = workdir / collection.name
    vault, manifest = home / "vault", home / "manifest.json"
    local = home / "index.db"
    if db is not None:
        settings = {"collection": collection.name.replace("-", "_"), **settings}
    corpus = collection.folder / "corpus.jsonl"
    fingerprint = _fingerprint(corpus)
    try:
        cached = json.loads(manifest.read_text("utf-8"))
    except (OSError, ValueError):
        cached = {}
    if cached.get("fingerprint") == fingerprint and vault.is_dir():
        doc_of_path: dict[str, str] = cached["notes"]
    else:
        manifest.unlink(missing_ok=True)  # written last: it exists only beside a complete vault
        shutil.rmtree(vault, ignore_errors=True)
        for stale in (local, Path(f"{local}-wal"), Path(f"{local}-shm")):
            stale.unlink(missing_ok=True)
        doc_of_path = _write_vault(corpus, vault)
        manifest.write_text(json.dumps({"fingerprint": fingerprint, "notes": doc_of_path}), "utf-8")
    index = open_index(vault, db=db or local, create=True, **settings)
    try:
        report = index.sync(progress=progress, remember=False)
    except BaseException:
        index.close()
        raise
    return index, doc_of_path, report.seconds

