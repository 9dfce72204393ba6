"""The real corpora the benchmark vault quotes: tldr-pages and the PowerShell reference.

Finds the pages under a shared data folder (see `benchmarks.vaultgen.find_shared_data`),
reads them as normalised text and parses tldr pages into title, summary and examples.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

_TLDR_NAME = re.compile(r"^[a-z0-9][a-z0-9._+-]*$")
"""tldr page names usable as Obsidian file names (drops pages such as ``[[.md`` or ``!.md``)."""
_MNEMONIC = re.compile(r"\[(\w+)\]")
_PS_VERSION_ORDER = ("7.5", "5.1", "7.4", "7.6", "7.7")
"""Which PowerShell versions a vault takes first: a current one and the Windows one, which share
most pages almost word for word, as two imported doc sets in a real vault would."""


@dataclass(frozen=True, slots=True)
class TldrRef:
    """One tldr page: its language (``en`` for ``pages/``), platform folder, name and file."""

    lang: str
    platform: str
    name: str
    path: Path

    @property
    def topic(self) -> str:
        """The tool a page belongs to: ``git`` for ``git-commit``."""
        return self.name.split("-", 1)[0]


@dataclass(frozen=True, slots=True)
class TldrDoc:
    """A parsed tldr page."""

    title: str
    body: str
    """Everything after the ``# title`` line."""
    summary: str
    examples: tuple[tuple[str, str], ...]
    """(what it does, the command) pairs."""


def discover_tldr(root: Path) -> list[TldrRef]:
    """The pages under ``pages*/<platform>/`` whose names make file names, in (lang, platform,
    name) order."""
    refs: dict[tuple[str, str, str], TldrRef] = {}
    for lang_dir in sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("pages")):
        lang = "en" if lang_dir.name == "pages" else lang_dir.name.split(".", 1)[1]
        for platform_dir in sorted(p for p in lang_dir.iterdir() if p.is_dir()):
            for name in sorted(os.listdir(platform_dir)):
                stem = name[:-3]
                if name.endswith(".md") and _TLDR_NAME.match(stem):
                    key = (lang, platform_dir.name, stem)
                    refs.setdefault(key, TldrRef(*key, platform_dir / name))
    return [refs[k] for k in sorted(refs)]


def discover_powershell(root: Path) -> list[tuple[str, Path]]:
    """(path relative to ``reference/``, file) in version preference order, then path order."""
    found = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*.md"))
    rank = {v: i for i, v in enumerate(_PS_VERSION_ORDER)}
    return sorted(found, key=lambda item: (rank.get(item[0].split("/", 1)[0], len(rank)), item[0]))


def read_text(path: Path) -> str:
    """A source file as text: byte-order mark dropped, Unix line ends, one final newline."""
    text = path.read_text("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    return text.rstrip() + "\n"


def parse_tldr(text: str) -> TldrDoc:
    """A tldr page's title, body, summary (its first ``> `` line) and examples."""
    lines = text.split("\n")
    title = lines[0][2:].strip() if lines and lines[0].startswith("# ") else ""
    body = "\n".join(lines[1:]).strip()
    summary = ""
    examples: list[tuple[str, str]] = []
    pending = ""
    for line in lines[1:]:
        if line.startswith("> ") and not summary:
            summary = line[2:].strip()
        elif line.startswith("- "):
            # "[c]reate a [f]ile:" reads "create a file"; CJK pages end with a full-width colon.
            pending = _MNEMONIC.sub(r"\1", line[2:].strip().rstrip(":："))  # noqa: RUF001 - the full-width colon, on purpose
        elif line.startswith("`") and pending:
            examples.append((pending, line.strip("`")))
            pending = ""
    return TldrDoc(title, body, summary, tuple(examples))


class Library:
    """Reads and parses source pages once each, however many notes quote them."""

    def __init__(self) -> None:
        self._docs: dict[Path, TldrDoc] = {}

    def doc(self, ref: TldrRef) -> TldrDoc:
        if ref.path not in self._docs:
            self._docs[ref.path] = parse_tldr(read_text(ref.path))
        return self._docs[ref.path]
