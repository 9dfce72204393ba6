"""Build a realistic, reproducible Obsidian-like vault from the real corpora in ``shared/data``.

Why this exists: indexing speed and search latency only mean something when they are measured on
a vault shaped like a real one (nested folders, frontmatter, inline ``#tags``, ``[[wikilinks]]``,
long reference notes beside tiny ones) at the seed design's scale of 16,894 notes and ~50,000
chunks, and anyone must be able to get the same vault again: a given seed and data folder always
give a byte-identical vault.

The text is real (tldr-pages in 42 languages, the PowerShell reference); only the arrangement is
generated. The data is read at run time and never copied into the repository.

Mix of notes (shares of ``files``; the rest are single tldr pages under ``cli/``):

    reference/powershell/<version>/...   6%    long reference pages, ~18 chunks each
    areas/<area>/[<lang>/]<topic> ...    8%    "cheatsheets": several tldr pages as ``##`` sections
    journal/<year>/<date>.md             4%    daily notes: Log / Tasks / Notes
    projects/<project>/...               2.5%  hubs, meetings, runbooks, decisions, research
    inbox/                               3%    short fleeting notes
    Home.md, areas/<area>/<Area> MOC.md        maps of content (a handful)
    templates/                                 three templates

The chunk total is steered to ``target_chunks`` by the number of sections in the cheatsheets: every
other note is rendered first, the cheatsheets get what is left, and a few correction passes add or
remove single sections until the estimate (see `estimate_chunks`) meets the target.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vaultseek.errors import VaultseekError

SEED_FILES = 16_894
"""Markdown files in the seed design's reference vault."""
SEED_CHUNKS = 50_000
"""Chunks the seed design's chunker makes of that vault."""

MAX_SECTION_CHARS = 2_000
"""A ``##`` section longer than this is split further (at ``###``, then at paragraphs)."""
MIN_PIECE_CHARS = 30
"""Pieces shorter than this carry too little text to be worth a chunk and are dropped."""
SKIPPED_SECTION_TITLES = frozenset({"related", "see also", "links", "references"})
"""``##`` sections with these titles (compared lower-cased) hold link lists, not content."""

DATA_ENV_VAR = "VAULTSEEK_SHARED_DATA"

_TLDR_NAME = re.compile(r"^[a-z0-9][a-z0-9._+-]*$")
"""tldr page names usable as Obsidian file names (drops pages such as ``[[.md`` or ``!.md``)."""
_MNEMONIC = re.compile(r"\[(\w+)\]")
_BACKTICKED = re.compile(r"`([a-z0-9][a-z0-9._+-]*)`")
_TAG_UNSAFE = re.compile(r"[^\w/-]")

_SHARES = {"powershell": 0.06, "cheatsheet": 0.08, "daily": 0.04, "project": 0.025, "inbox": 0.03}
_MAX_POOL = 50
"""Largest number of tldr pages one cheatsheet may draw on (bigger topics become several notes)."""

_AREA_OF_PLATFORM = {
    "common": "cli-tools",
    "linux": "linux",
    "osx": "macos",
    "windows": "windows",
    "dos": "windows",
    "android": "android",
    "freebsd": "bsd",
    "netbsd": "bsd",
    "openbsd": "bsd",
    "sunos": "bsd",
    "cisco-ios": "networking",
}
_AREAS = sorted(set(_AREA_OF_PLATFORM.values()))
_AREA_LABELS = {
    "cli-tools": "CLI tools",
    "linux": "Linux",
    "macos": "macOS",
    "windows": "Windows",
    "android": "Android",
    "bsd": "BSD",
    "networking": "Networking",
}
_PS_VERSION_ORDER = ("7.5", "5.1", "7.4", "7.6", "7.7")
"""Which PowerShell versions a vault takes first: a current one and the Windows one, which share
most pages almost word for word, as two imported doc sets in a real vault would."""

_PROJECTS = (
    ("homelab", "Homelab", ("homelab", "infra")),
    ("backup-automation", "Backup automation", ("backup", "infra")),
    ("website-migration", "Website migration", ("web", "ops")),
    ("ci-pipeline", "CI pipeline", ("ci", "dev")),
    ("dotfiles", "Dotfiles", ("dev", "shell")),
    ("k8s-cluster", "Kubernetes cluster", ("k8s", "infra")),
    ("data-pipeline", "Data pipeline", ("data", "dev")),
    ("laptop-setup", "Laptop setup", ("setup",)),
    ("log-analysis", "Log analysis", ("ops", "data")),
    ("media-server", "Media server", ("homelab", "media")),
    ("security-audit", "Security audit", ("security",)),
    ("windows-fleet", "Windows fleet scripts", ("windows", "powershell")),
)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


class SharedDataNotFoundError(VaultseekError, FileNotFoundError):
    """The real corpora the benchmark vault is made from are not where we looked."""


@dataclass(frozen=True)
class VaultSpec:
    """What vault to build: how many notes, how many chunks to aim at, which random arrangement."""

    files: int = SEED_FILES
    target_chunks: int = SEED_CHUNKS
    seed: int = 7

    @classmethod
    def scaled(cls, files: int, *, seed: int = 7) -> VaultSpec:
        """A smaller (or larger) vault with the seed design's chunks-per-file ratio."""
        return cls(files=files, target_chunks=round(files * SEED_CHUNKS / SEED_FILES), seed=seed)


@dataclass(frozen=True)
class VaultStats:
    """What `build_vault` wrote, for the benchmark report."""

    files: int
    bytes: int
    estimated_chunks: int
    seconds: float


# --------------------------------------------------------------------------------------------
# Chunk estimate


def estimate_chunks(text: str) -> int:
    """How many chunks the seed design's chunker makes of one note.

    A stand-in for the project's chunker, which is written concurrently, so that the vault can be
    tuned without importing it. Rules: frontmatter removed; the note is cut at ``## `` headings
    (outside code fences; the text before the first one is a section too); sections titled as in
    `SKIPPED_SECTION_TITLES` are dropped; a section longer than `MAX_SECTION_CHARS` is cut at
    ``### `` headings and any part still too long is packed greedily from its blank-line separated
    paragraphs into pieces of at most `MAX_SECTION_CHARS` (one longer paragraph stays whole);
    pieces shorter than `MIN_PIECE_CHARS` (stripped, heading line excluded) are dropped.
    """
    count = 0
    for title, section in _split_at_heading(_strip_frontmatter(text), "## "):
        if title.strip().rstrip(":").strip().lower() in SKIPPED_SECTION_TITLES:
            continue
        count += _count_pieces(section.strip())
    return count


def _count_pieces(section: str) -> int:
    if len(section) <= MAX_SECTION_CHARS:
        return int(len(section) >= MIN_PIECE_CHARS)
    count = 0
    for _, sub in _split_at_heading(section, "### "):
        sub = sub.strip()
        if len(sub) <= MAX_SECTION_CHARS:
            count += len(sub) >= MIN_PIECE_CHARS
        else:
            count += sum(len(p) >= MIN_PIECE_CHARS for p in _pack_paragraphs(sub))
    return count


def _strip_frontmatter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 3)
        if end != -1 and text[end + 4 : end + 5] in ("\n", ""):
            return text[end + 5 :]
    return text


def _split_at_heading(text: str, marker: str) -> Iterator[tuple[str, str]]:
    """(title, body) pairs, cutting at lines that start with ``marker`` outside code fences."""
    title, in_fence = "", False
    lines: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if not in_fence and line.startswith(marker):
            yield title, "\n".join(lines)
            title, lines = line[len(marker) :].strip(), []
        else:
            lines.append(line)
    yield title, "\n".join(lines)


def _pack_paragraphs(text: str) -> list[str]:
    pieces: list[str] = []
    current = ""
    for para in (p.strip() for p in re.split(r"\n[ \t]*\n", text)):
        if not para:
            continue
        if current and len(current) + 2 + len(para) > MAX_SECTION_CHARS:
            pieces.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    if current:
        pieces.append(current)
    return pieces


# --------------------------------------------------------------------------------------------
# Source data


def find_shared_data(data_dir: Path | None = None) -> Path | None:
    """The shared data folder holding ``tldr/`` and ``powershell-docs/``, or None when absent.

    Looks at ``data_dir``, else ``$VAULTSEEK_SHARED_DATA``, else ``<repo>/../shared/data`` (where
    the workplace and CI lay it beside the repository), else ``../shared/data`` from the working
    folder (for an installed, non-editable vaultseek run from the repository root).
    """
    data_dir = Path(data_dir) if data_dir is not None else _default_data_dir()
    if (data_dir / "tldr").is_dir() and (data_dir / "powershell-docs" / "reference").is_dir():
        return data_dir
    return None


def get_shared_data(data_dir: Path | None = None) -> Path:
    """Like `find_shared_data`, but raises `SharedDataNotFoundError` naming the folder looked at."""
    found = find_shared_data(data_dir)
    if found is not None:
        return found
    looked_at = Path(data_dir) if data_dir is not None else _default_data_dir()
    raise SharedDataNotFoundError(
        f"benchmark data folder not found: {looked_at.resolve()} "
        "(needs tldr/ and powershell-docs/reference/)",
        hint=f"lay shared/data beside the repository or set {DATA_ENV_VAR}",
    )


def _default_data_dir() -> Path:
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env)
    # parents: bench, vaultseek, src, the repository root (in a source checkout).
    beside_repo = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
    if beside_repo.is_dir():
        return beside_repo
    # Installed into a virtualenv (CI installs non-editable) the module is far from the checkout;
    # the tests and benchmarks run from the repository root, so look beside the working folder.
    beside_cwd = Path.cwd() / ".." / "shared" / "data"
    return beside_cwd if beside_cwd.is_dir() else beside_repo


@dataclass(frozen=True, slots=True)
class _TldrRef:
    lang: str
    platform: str
    name: str
    path: Path

    @property
    def topic(self) -> str:
        return self.name.split("-", 1)[0]


@dataclass(frozen=True, slots=True)
class _TldrDoc:
    title: str
    body: str
    """Everything after the ``# title`` line."""
    summary: str
    examples: tuple[tuple[str, str], ...]
    """(what it does, the command) pairs."""


def _discover_tldr(root: Path) -> list[_TldrRef]:
    refs: dict[tuple[str, str, str], _TldrRef] = {}
    for lang_dir in sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("pages")):
        lang = "en" if lang_dir.name == "pages" else lang_dir.name.split(".", 1)[1]
        for platform_dir in sorted(p for p in lang_dir.iterdir() if p.is_dir()):
            for name in sorted(os.listdir(platform_dir)):
                stem = name[:-3]
                if name.endswith(".md") and _TLDR_NAME.match(stem):
                    key = (lang, platform_dir.name, stem)
                    refs.setdefault(key, _TldrRef(*key, platform_dir / name))
    return [refs[k] for k in sorted(refs)]


def _discover_powershell(root: Path) -> list[tuple[str, Path]]:
    """(path relative to ``reference/``, file) in version preference order, then path order."""
    found = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*.md"))
    rank = {v: i for i, v in enumerate(_PS_VERSION_ORDER)}
    return sorted(found, key=lambda item: (rank.get(item[0].split("/", 1)[0], len(rank)), item[0]))


def _read_text(path: Path) -> str:
    text = path.read_text("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    return text.rstrip() + "\n"


def _parse_tldr(text: str) -> _TldrDoc:
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
            pending = _MNEMONIC.sub(r"\1", line[2:].strip().rstrip(":："))
        elif line.startswith("`") and pending:
            examples.append((pending, line.strip("`")))
            pending = ""
    return _TldrDoc(title, body, summary, tuple(examples))


class _Library:
    """Reads and parses source pages once each, however many notes quote them."""

    def __init__(self) -> None:
        self._docs: dict[Path, _TldrDoc] = {}

    def doc(self, ref: _TldrRef) -> _TldrDoc:
        if ref.path not in self._docs:
            self._docs[ref.path] = _parse_tldr(_read_text(ref.path))
        return self._docs[ref.path]


# --------------------------------------------------------------------------------------------
# Plan: which note goes where


@dataclass(slots=True)
class _Cheat:
    rel: str
    title: str
    area: str
    lang: str
    pool: list[_TldrRef]
    """Pages this cheatsheet may show, in order; it shows the first ``size``."""
    size: int = 0


@dataclass(slots=True)
class _Plan:
    powershell: list[tuple[str, Path]] = field(default_factory=list)
    singles: list[tuple[str, _TldrRef]] = field(default_factory=list)
    cheats: list[_Cheat] = field(default_factory=list)
    daily: list[tuple[str, dt.date]] = field(default_factory=list)
    projects: list[tuple[str, int, str]] = field(default_factory=list)
    """(path, index into _PROJECTS, kind) with kind hub/meeting/runbook/decision/research."""
    inbox: list[tuple[str, _TldrRef]] = field(default_factory=list)
    mocs: list[tuple[str, str]] = field(default_factory=list)
    """(path, area); area "" is the vault's Home note."""
    templates: list[str] = field(default_factory=list)
    english: list[_TldrRef] = field(default_factory=list)
    """English pages the prose of journal, project and inbox notes quotes."""
    spare: list[_TldrRef] = field(default_factory=list)
    """tldr pages no note uses, for cheatsheets that need more sections."""

    def paths(self) -> list[str]:
        return (
            [p for p, _ in self.powershell]
            + [p for p, _ in self.singles]
            + [c.rel for c in self.cheats]
            + [p for p, _ in self.daily]
            + [p for p, _, _ in self.projects]
            + [p for p, _ in self.inbox]
            + [p for p, _ in self.mocs]
            + self.templates
        )


class _PathSet:
    """Hands out unique note paths (case-insensitively, so a vault also works on macOS)."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def claim(self, folder: str, stem: str) -> str:
        n = 1
        while True:
            rel = f"{folder}/{stem}.md" if n == 1 else f"{folder}/{stem} {n}.md"
            rel = rel.lstrip("/")
            if rel.lower() not in self._taken:
                self._taken.add(rel.lower())
                return rel
            n += 1


def _plan(spec: VaultSpec, data: Path) -> _Plan:
    if spec.files < 1:
        raise ValueError(f"a vault needs at least one file, not {spec.files}")
    pages = _discover_tldr(data / "tldr")
    ps_pages = _discover_powershell(data / "powershell-docs" / "reference")
    n = spec.files
    counts = {kind: math.floor(n * share) for kind, share in _SHARES.items()}
    counts["powershell"] = round(n * _SHARES["powershell"])  # so that a small vault has some
    counts["cheatsheet"] = round(n * _SHARES["cheatsheet"])
    counts["moc"] = min(len(_AREAS) + 1, n // 250)
    counts["template"] = 3 if n >= 200 else 0
    counts["powershell"] = min(counts["powershell"], len(ps_pages))
    n_single = n - sum(counts.values())
    plan, paths = _Plan(), _PathSet()

    # PowerShell reference: whole versions in preference order, the last one sampled.
    rng = random.Random(f"{spec.seed}:powershell")
    chosen: list[tuple[str, Path]] = []
    by_version: dict[str, list[tuple[str, Path]]] = defaultdict(list)
    for rel, path in ps_pages:
        by_version[rel.split("/", 1)[0]].append((rel, path))
    for group in by_version.values():  # insertion order is the preference order
        room = counts["powershell"] - len(chosen)
        chosen += group if len(group) <= room else rng.sample(group, room)
    plan.powershell = [
        (paths.claim("reference/powershell", rel[:-3]), p) for rel, p in sorted(chosen)
    ]

    # Single tldr pages: pages outside multi-page topics first, English ones preferred.
    rng = random.Random(f"{spec.seed}:pages")
    topic_sizes = Counter((r.lang, r.platform, r.topic) for r in pages)
    ordered = sorted(
        pages,
        key=lambda r: (
            topic_sizes[(r.lang, r.platform, r.topic)] >= 3,
            rng.random() * (0.35 if r.lang == "en" else 1.0),
        ),
    )
    if n_single > len(ordered):
        raise ValueError(f"{n} files is more than the data can fill ({len(ordered)} tldr pages)")
    singles = ordered[:n_single]
    pools = _cheatsheet_pools(ordered[n_single:], spec.seed)
    chosen_pools, spare = pools[: counts["cheatsheet"]], pools[counts["cheatsheet"] :]
    for _ in range(counts["cheatsheet"] - len(chosen_pools)):
        # Too few pools for the cheatsheets wanted: the files left over become single pages.
        biggest = max(chosen_pools, key=lambda p: len(p[1]), default=None)
        if biggest is None or len(biggest[1]) < 2:
            raise ValueError(f"{n} files is more than the data can fill")
        singles.append(biggest[1].pop())
    for ref in sorted(singles, key=lambda r: (r.lang, r.platform, r.name)):
        folder = (
            f"cli/{ref.platform}" if ref.lang == "en" else f"cli/i18n/{ref.lang}/{ref.platform}"
        )
        plan.singles.append((paths.claim(folder, ref.name), ref))
    for title, pool in chosen_pools:
        ref = pool[0]
        area = _AREA_OF_PLATFORM.get(ref.platform, "cli-tools")
        if ref.platform not in ("common", "linux") and not title.startswith(ref.platform):
            title = f"{title} ({ref.platform})"
        folder = f"areas/{area}" if ref.lang == "en" else f"areas/{area}/{ref.lang}"
        plan.cheats.append(_Cheat(paths.claim(folder, title), title, area, ref.lang, pool))
    plan.spare = [ref for _, pool in spare for ref in pool]

    rng = random.Random(f"{spec.seed}:notes")
    english = [r for r in pages if r.lang == "en"]
    plan.english = rng.sample(english, min(len(english), 60 + n // 10))
    day = dt.date(2023, 1, 2)
    for _ in range(counts["daily"]):
        plan.daily.append((paths.claim(f"journal/{day.year}", day.isoformat()), day))
        day += dt.timedelta(days=1 + (rng.random() < 0.3) + (rng.random() < 0.1))
    n_projects = min(len(_PROJECTS), max(1, math.ceil(counts["project"] / 8)))
    kinds = ("meeting", "runbook", "decision", "research")
    for i in range(counts["project"]):
        which = i % n_projects
        slug, title, _ = _PROJECTS[which]
        if i < n_projects:
            kind, stem = "hub", title
        else:
            kind = rng.choice(kinds)
            ref = rng.choice(plan.english)
            stem = {
                "meeting": f"Meeting {dt.date(2023, 3, 1) + dt.timedelta(days=rng.randrange(600))}",
                "runbook": f"Runbook - {ref.name}",
                "decision": f"Decision - use {ref.name}",
                "research": f"Research - {ref.name}",
            }[kind]
        plan.projects.append((paths.claim(f"projects/{slug}", stem), which, kind))
    stamp = dt.datetime(2024, 6, 1, 8, 0)
    for _ in range(counts["inbox"]):
        ref = rng.choice(plan.english)
        stamp += dt.timedelta(minutes=rng.randrange(20, 2_000))
        plan.inbox.append((paths.claim("inbox", f"{stamp:%Y%m%d%H%M} {ref.name}"), ref))
    if counts["moc"]:
        plan.mocs.append((paths.claim("", "Home"), ""))
        for area in _AREAS[: counts["moc"] - 1]:
            plan.mocs.append((paths.claim(f"areas/{area}", f"{_AREA_LABELS[area]} MOC"), area))
    for name in ("Daily template", "Project template", "Meeting template")[: counts["template"]]:
        plan.templates.append(paths.claim("templates", name))
    return plan


def _cheatsheet_pools(rest: list[_TldrRef], seed: int) -> list[tuple[str, list[_TldrRef]]]:
    """Candidate cheatsheets, most wanted first: a topic (``git-*``) or an alphabetical run.

    Topics and English come first, as a person collects cheatsheets for the tools they use most.
    """
    rng = random.Random(f"{seed}:cheatsheets")
    groups: dict[tuple[str, str, str], list[_TldrRef]] = defaultdict(list)
    for ref in sorted(rest, key=lambda r: (r.lang, r.platform, r.name)):
        groups[(ref.lang, ref.platform, ref.topic)].append(ref)
    pools: list[tuple[float, str, list[_TldrRef]]] = []
    loose: dict[tuple[str, str], list[_TldrRef]] = defaultdict(list)
    for (lang, platform, topic), refs in groups.items():
        if len(refs) < 3:
            loose[(lang, platform)] += refs
            continue
        for start in range(0, len(refs), _MAX_POOL):
            weight = rng.random() * (0.3 if lang == "en" else 1.0) * 0.5
            pools.append((weight, f"{topic} cheatsheet", refs[start : start + _MAX_POOL]))
    for (lang, platform), refs in loose.items():
        start = 0
        while start < len(refs):
            part = refs[start : start + rng.randint(12, 40)]
            start += len(part)
            weight = rng.random() * (0.3 if lang == "en" else 1.0)
            pools.append((weight, f"{platform} commands {part[0].name} to {part[-1].name}", part))
    pools.sort(key=lambda p: p[0])
    return [(title, pool) for _, title, pool in pools]


def _widen_pools(cheats: Sequence[_Cheat], spare: list[_TldrRef], needed: int) -> None:
    """Give cheatsheets more pages to show, from pages no note uses, until ``needed`` more fit.

    Only small vaults need this: a handful of cheatsheets may not hold the sections the chunk
    target asks for. A cheatsheet takes pages of its own language and platform first.
    """
    by_shelf: dict[tuple[str, str], list[_TldrRef]] = defaultdict(list)
    for ref in reversed(spare):
        by_shelf[(ref.lang, ref.platform)].append(ref)
    used: set[_TldrRef] = set()
    leftovers = list(reversed(spare))
    while cheats and needed > 0 and len(used) < len(spare):
        for cheat in cheats:
            shelf = by_shelf[(cheat.lang, cheat.pool[0].platform)]
            while shelf and shelf[-1] in used:
                shelf.pop()
            source = shelf if shelf else leftovers
            while source and source[-1] in used:
                source.pop()
            if not source or needed <= 0:
                continue
            ref = source.pop()
            used.add(ref)
            cheat.pool.append(ref)
            needed -= 1


def _apportion(total: int, capacities: Sequence[int], rng: random.Random) -> list[int]:
    """Split ``total`` into one share per capacity, proportional to it, each in [1, capacity]."""
    if not capacities:
        return []
    room = sum(capacities)
    sizes = [max(1, min(c, round(c * total / room))) for c in capacities]
    _nudge(sizes, capacities, total - sum(sizes), rng)
    return sizes


def _nudge(sizes: list[int], capacities: Sequence[int], delta: int, rng: random.Random) -> set[int]:
    """Move ``delta`` units across ``sizes`` one at a time, each within [1, capacity].

    Returns the indexes that moved.
    """
    changed: set[int] = set()
    order = list(range(len(sizes)))
    step = 1 if delta > 0 else -1
    while delta:
        rng.shuffle(order)
        moved = False
        for i in order:
            if delta and 1 <= sizes[i] + step <= capacities[i]:
                sizes[i] += step
                delta -= step
                changed.add(i)
                moved = True
        if not moved:
            break
    return changed


# --------------------------------------------------------------------------------------------
# Rendering


class _Links:
    """Obsidian-style links: ``[[stem]]`` when the name is unique in the vault, else the path."""

    def __init__(self, paths: Sequence[str]) -> None:
        self._stem_counts = Counter(Path(p).stem.lower() for p in paths)

    def to(self, rel: str, *, heading: str | None = None) -> str:
        stem = rel.rsplit("/", 1)[-1][:-3]
        anchor = f"#{heading}" if heading else ""
        if self._stem_counts[stem.lower()] == 1:
            return f"[[{stem}{anchor}]]"
        return f"[[{rel[:-3]}{anchor}|{stem}]]"


def _frontmatter(fields: Mapping[str, object], rng: random.Random) -> str:
    """YAML written by hand so the bytes are stable; lists as flow or block style, as people mix."""
    lines = ["---"]
    block = rng.random() < 0.5
    for key, value in fields.items():
        if isinstance(value, (list, tuple)):
            items = [json.dumps(v, ensure_ascii=False) if not _plain(v) else v for v in value]
            if block:
                lines.append(f"{key}:")
                lines += [f"  - {v}" for v in items]
            else:
                lines.append(f"{key}: [{', '.join(items)}]")
        else:
            lines.append(f"{key}: {value}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def _plain(value: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z][\w/-]*", value))


def _tag(value: str) -> str:
    tag = _TAG_UNSAFE.sub("", value.replace(".", "-").replace("+", "p")).strip("-")
    return tag if tag and not tag.isdigit() else ""


def _tags(*values: str) -> list[str]:
    out: list[str] = []
    for value in values:
        tag = _tag(value)
        if tag and tag not in out:
            out.append(tag)
    return out


class _Prose:
    """Sentences made of real tldr descriptions and examples, so generated text has real words."""

    def __init__(
        self,
        rng: random.Random,
        library: _Library,
        english: Sequence[_TldrRef],
        note_of: dict[tuple[str, str], str],
        links: _Links,
    ) -> None:
        self.rng, self.library, self.english = rng, library, list(english)
        self.note_of, self.links = note_of, links

    def pick(self) -> tuple[_TldrRef, _TldrDoc]:
        ref = self.rng.choice(self.english)
        return ref, self.library.doc(ref)

    def mention(self, ref: _TldrRef) -> str:
        rel = self.note_of.get((ref.lang, ref.name))
        return self.links.to(rel) if rel and self.rng.random() < 0.6 else f"`{ref.name}`"

    def example(self) -> tuple[_TldrRef, str, str]:
        ref, doc = self.pick()
        if not doc.examples:
            return ref, doc.summary or ref.name, ref.name
        what, code = self.rng.choice(doc.examples)
        return ref, what, code

    def sentence(self) -> str:
        ref, what, code = self.example()
        doc = self.library.doc(ref)
        what = _lower_first(what)
        name = self.mention(ref)
        return self.rng.choice(
            (
                f"Used {name} to {what}.",
                f"Remember: `{code}` to {what}.",
                f"Looked into {name} again. {doc.summary}",
                f"TODO: write down how to {what} with {name}.",
                f"The trick that finally worked: `{code}`.",
                f"Still not sure {name} is the right tool here; {_lower_first(doc.summary)}",
                f"Note to self: {doc.summary} Check the flags before running it on the NAS.",
                f"Compared {name} with the alternatives; for now I {what}.",
            )
        )

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))


class _Renderer:
    """Turns the plan into note texts; every choice comes from one seeded stream, in plan order."""

    def __init__(self, plan: _Plan, seed: int) -> None:
        self.plan, self.seed = plan, seed
        self.library = _Library()
        self.links = _Links(plan.paths())
        self.note_of = {(ref.lang, ref.name): rel for rel, ref in plan.singles}
        self.singles_by_area: dict[str, list[str]] = defaultdict(list)
        for rel, ref in plan.singles:
            if ref.lang == "en":
                self.singles_by_area[_AREA_OF_PLATFORM.get(ref.platform, "cli-tools")].append(rel)
        self.moc_of = {area: rel for rel, area in plan.mocs}
        self.hubs = {which: rel for rel, which, kind in plan.projects if kind == "hub"}

    def prose(self, stage: str) -> _Prose:
        rng = random.Random(f"{self.seed}:{stage}")
        return _Prose(rng, self.library, self.plan.english, self.note_of, self.links)

    def render_fixed(self) -> dict[str, str]:
        """Every note but the cheatsheets, whose sizes are tuned afterwards."""
        notes: dict[str, str] = {}
        for rel, path in self.plan.powershell:
            notes[rel] = _read_text(path)
        rng = random.Random(f"{self.seed}:singles")
        for rel, ref in self.plan.singles:
            notes[rel] = self.single(rel, ref, rng)
        prose = self.prose("daily")
        for rel, day in self.plan.daily:
            notes[rel] = self.daily(day, prose)
        prose = self.prose("projects")
        for rel, which, kind in self.plan.projects:
            notes[rel] = self.project(rel, which, kind, prose)
        prose = self.prose("inbox")
        for rel, ref in self.plan.inbox:
            notes[rel] = self.inbox(rel, ref, prose)
        prose = self.prose("moc")
        for rel, area in self.plan.mocs:
            notes[rel] = self.moc(area, prose)
        for rel in self.plan.templates:
            notes[rel] = _TEMPLATES[rel.rsplit("/", 1)[-1][:-3]]
        return notes

    def single(self, rel: str, ref: _TldrRef, rng: random.Random) -> str:
        doc = self.library.doc(ref)
        body = doc.body
        if rng.random() < 0.5:  # "See also: `gzip`" becomes a wikilink when that note exists

            def link(m: re.Match[str]) -> str:
                rel = self.note_of.get((ref.lang, m.group(1)))
                return self.links.to(rel) if rel else m.group(0)

            body = "\n".join(
                _BACKTICKED.sub(link, ln) if ln.startswith(">") else ln for ln in body.split("\n")
            )
        parts = [f"# {doc.title or ref.name}\n\n{body}\n"]
        roll = rng.random()
        if roll < 0.12:
            parts.append(f"\n#cli/{_tag(ref.platform)} #{_tag(ref.topic) or 'cli'}\n")
        if rng.random() < 0.06:
            prose = self.prose(f"single:{ref.lang}:{ref.platform}:{ref.name}")
            parts.append(_section("My notes", prose.paragraph(rng.randint(2, 4))))
        if rng.random() < 0.12:
            area = _AREA_OF_PLATFORM.get(ref.platform, "cli-tools")
            peers = self.singles_by_area.get(area) or [r for r, _ in self.plan.singles]
            targets = set(rng.sample(peers, min(len(peers), rng.randint(2, 4)))) - {rel}
            parts.append(_section("Related", self.link_list(sorted(targets))))
        text = "".join(parts)
        if rng.random() < 0.25:
            fields: dict[str, object] = {
                "type": "reference",
                "tags": _tags("cli", ref.platform, ref.topic),
                "source": "tldr-pages",
            }
            if ref.lang != "en":
                fields["lang"] = ref.lang
            if rng.random() < 0.3:
                fields["aliases"] = [f"{ref.name} command"]
            text = _frontmatter(fields, rng) + text
        return text

    def cheatsheet(self, cheat: _Cheat) -> str:
        rng = random.Random(f"{self.seed}:cheat:{cheat.rel}")
        ref = cheat.pool[0]
        head = []
        if rng.random() < 0.7:
            fields: dict[str, object] = {
                "type": "cheatsheet",
                "tags": _tags("cheatsheet", cheat.area, ref.topic),
            }
            if rng.random() < 0.4:
                fields["aliases"] = [f"{ref.topic} commands"]
            head.append(_frontmatter(fields, rng))
        moc = self.moc_of.get(cheat.area) or self.moc_of.get("")
        intro = "Commands I keep looking up, collected from tldr-pages."
        intro += f" #cheatsheet #{_tag(cheat.area)}"
        if moc:
            intro += f"\nPart of {self.links.to(moc)}."
        head.append(f"# {cheat.title}\n\n{intro}\n")
        for page in cheat.pool[: cheat.size]:
            doc = self.library.doc(page)
            head.append(_section(doc.title or page.name, doc.body))
        peers = self.singles_by_area.get(cheat.area, [])
        if peers and rng.random() < 0.3:
            targets = sorted(set(rng.sample(peers, min(len(peers), 3))))
            head.append(_section("See also", self.link_list(targets)))
        return "".join(head)

    def daily(self, day: dt.date, prose: _Prose) -> str:
        rng = prose.rng
        parts = []
        if rng.random() < 0.6:
            fields = {"type": "daily", "date": day.isoformat(), "tags": ["daily"]}
            parts.append(_frontmatter(fields, rng))
        weekday, month = _WEEKDAYS[day.weekday()], _MONTHS[day.month - 1]
        parts.append(f"# {weekday}, {day.day} {month} {day.year}\n")
        log = []
        minute = 8 * 60 + rng.randrange(90)
        for _ in range(rng.randint(2, 5)):
            line = prose.sentence()
            if self.hubs and rng.random() < 0.4:
                hub = self.hubs[rng.choice(sorted(self.hubs))]
                line = f"Worked on {self.links.to(hub)}. {line}"
            log.append(f"- {minute // 60:02d}:{minute % 60:02d} {line}")
            minute += rng.randrange(30, 150)
        parts.append(_section("Log", "\n".join(log)))
        if rng.random() < 0.7:
            tasks = []
            for _ in range(rng.randint(1, 4)):
                ref, what, _ = prose.example()
                tasks.append(f"{_checkbox(rng, 0.5)} {what} ({prose.mention(ref)})")
            parts.append(_section("Tasks", "\n".join(tasks)))
        if rng.random() < 0.5:
            parts.append(_section("Notes", prose.paragraph(rng.randint(2, 5))))
        return "".join(parts)

    def project(self, rel: str, which: int, kind: str, prose: _Prose) -> str:
        rng = prose.rng
        slug, _, tags = _PROJECTS[which]
        stem = rel.rsplit("/", 1)[-1][:-3]
        hub = self.hubs.get(which)
        fields: dict[str, object] = {
            "type": "project" if kind == "hub" else kind,
            "tags": _tags("project", *tags),
        }
        if kind == "hub":
            fields["status"] = rng.choice(("active", "active", "paused", "done"))
            fields["aliases"] = [slug]
        parts = [_frontmatter(fields, rng), f"# {stem}\n"]
        if hub and kind != "hub":
            parts.append(f"\nPart of {self.links.to(hub)}. #project/{slug}\n")

        def section(name: str, body: str) -> None:
            parts.append(_section(name, body))

        def sentences(low: int, high: int, prefix: str = "") -> str:
            return "\n".join(f"- {prefix}{prose.sentence()}" for _ in range(rng.randint(low, high)))

        def examples(n: int) -> str:
            out = []
            for _ in range(n):
                _, what, code = prose.example()
                out.append(f"- {what}:\n\n`{code}`")
            return "\n\n".join(out)

        if kind == "hub":
            section("Goal", prose.paragraph(rng.randint(2, 4)))
            plan = (f"{_checkbox(rng, 0.4)} {prose.sentence()}" for _ in range(rng.randint(3, 6)))
            section("Plan", "\n".join(plan))
            section("Commands", examples(rng.randint(3, 6)))
            start = dt.date(2023, 1, 1)
            log = (
                f"- {start + dt.timedelta(days=rng.randrange(700))}: {prose.sentence()}"
                for _ in range(rng.randint(2, 5))
            )
            section("Log", "\n".join(log))
        elif kind == "meeting":
            section("Agenda", sentences(2, 4))
            section("Notes", prose.paragraph(rng.randint(3, 6)))
            section("Action items", sentences(1, 3, "[ ] "))
        elif kind == "runbook":
            section("Steps", examples(rng.randint(3, 7)))
            section("Rollback", prose.paragraph(rng.randint(1, 3)))
        elif kind == "decision":
            section("Context", prose.paragraph(rng.randint(2, 4)))
            section("Decision", prose.paragraph(rng.randint(1, 3)))
            section("Consequences", prose.paragraph(rng.randint(1, 3)))
        else:
            section("Findings", prose.paragraph(rng.randint(3, 6)))
            section("Open questions", sentences(1, 3))
            ref, _ = prose.pick()
            section("References", f"- {prose.mention(ref)}\n- <https://tldr.sh>")
        others = [r for r, w, _ in self.plan.projects if w == which and r != rel]
        if others:
            section("Related", self.link_list(sorted(rng.sample(others, min(3, len(others))))))
        return "".join(parts)

    def inbox(self, rel: str, ref: _TldrRef, prose: _Prose) -> str:
        rng = prose.rng
        doc = self.library.doc(ref)
        stem = rel.rsplit("/", 1)[-1][:-3]
        parts = []
        if rng.random() < 0.3:
            fields = {"tags": ["inbox"], "created": f"{stem[:4]}-{stem[4:6]}-{stem[6:8]}"}
            parts.append(_frontmatter(fields, rng))
        parts.append(f"# {stem}\n\n{doc.summary} {prose.paragraph(rng.randint(1, 3))}\n")
        if doc.examples and rng.random() < 0.6:
            what, code = rng.choice(doc.examples)
            parts.append(f"\n{what}:\n\n`{code}`\n")
        parts.append("\n#inbox\n" if rng.random() < 0.7 else "")
        return "".join(parts)

    def moc(self, area: str, prose: _Prose) -> str:
        rng = prose.rng
        if not area:
            parts = ["# Home\n\nStart here. Everything else is linked from the maps below.\n"]
            parts.append(_section("Areas", self.link_list([r for r, a in self.plan.mocs if a])))
            if self.hubs:
                parts.append(
                    _section("Projects", self.link_list([self.hubs[w] for w in sorted(self.hubs)]))
                )
            if self.plan.daily:
                parts.append(
                    _section("Journal", self.link_list([r for r, _ in self.plan.daily[-7:]]))
                )
            return "".join(parts)
        label = _AREA_LABELS[area]
        parts = [
            _frontmatter({"type": "moc", "tags": _tags("moc", area)}, rng),
            f"# {label} MOC\n\nMap of everything I keep about {label}. {prose.sentence()}\n",
        ]
        mine = sorted(
            (c for c in self.plan.cheats if c.area == area), key=lambda c: (c.lang != "en", c.rel)
        )
        if mine:
            parts.append(_section("Cheatsheets", self.link_list([c.rel for c in mine[:40]])))
        if self.singles_by_area.get(area):
            parts.append(_section("Commands", self.link_list(self.singles_by_area[area][:40])))
        return "".join(parts)

    def link_list(self, rels: Sequence[str]) -> str:
        return "\n".join(f"- {self.links.to(rel)}" for rel in rels)


def _section(heading: str, body: str) -> str:
    return f"\n## {heading}\n\n{body}\n"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _checkbox(rng: random.Random, done: float) -> str:
    return "- [x]" if rng.random() < done else "- [ ]"


_TEMPLATES = {
    "Daily template": (
        "---\ntype: daily\ndate: {{date}}\ntags: [daily]\n---\n# {{date}}\n\n"
        "## Log\n\n- \n\n## Tasks\n\n- [ ] \n\n## Notes\n\n"
    ),
    "Project template": (
        "---\ntype: project\nstatus: active\ntags: [project]\n---\n# {{title}}\n\n"
        "## Goal\n\n## Plan\n\n- [ ] \n\n## Commands\n\n## Log\n\n## Related\n\n"
    ),
    "Meeting template": (
        "---\ntype: meeting\ntags: [project]\n---\n# Meeting {{date}}\n\n"
        "## Agenda\n\n- \n\n## Notes\n\n## Action items\n\n- [ ] \n"
    ),
}
"""Obsidian templates as people keep them in the vault: ``{{date}}`` makes the daily one's
frontmatter invalid YAML, an edge case the indexer must survive."""


# --------------------------------------------------------------------------------------------
# Public entry points


def render_vault(spec: VaultSpec = VaultSpec(), *, data_dir: Path | None = None) -> dict[str, str]:
    """The vault's notes as {relative path: text}, tuned to ``spec.target_chunks``, without writing.

    Raises `SharedDataNotFoundError` when the data folder is missing.
    """
    return _render_tuned(spec, data_dir)[0]


def _render_tuned(spec: VaultSpec, data_dir: Path | None) -> tuple[dict[str, str], int]:
    """The notes, and their estimated chunk total."""
    data = get_shared_data(data_dir)
    plan = _plan(spec, data)
    renderer = _Renderer(plan, spec.seed)
    notes = renderer.render_fixed()
    fixed_chunks = sum(estimate_chunks(t) for t in notes.values())
    cheats = plan.cheats
    rng = random.Random(f"{spec.seed}:tune")
    # Each cheatsheet's intro is a chunk and each section about one more.
    wanted = spec.target_chunks - fixed_chunks - len(cheats)
    if wanted > sum(len(c.pool) for c in cheats):
        _widen_pools(cheats, plan.spare, wanted - sum(len(c.pool) for c in cheats))
    capacities = [len(c.pool) for c in cheats]
    sizes = _apportion(max(wanted, len(cheats)), capacities, rng)
    for cheat, size in zip(cheats, sizes, strict=True):
        cheat.size = size
    estimates: dict[str, int] = {}
    for cheat in cheats:
        notes[cheat.rel] = renderer.cheatsheet(cheat)
        estimates[cheat.rel] = estimate_chunks(notes[cheat.rel])
    for _ in range(8):  # sections are not all exactly one chunk: correct the remainder
        delta = spec.target_chunks - fixed_chunks - sum(estimates.values())
        sizes = [c.size for c in cheats]
        changed = _nudge(sizes, capacities, delta, rng)
        if not delta or not changed:
            break
        for i in sorted(changed):
            cheats[i].size = sizes[i]
            notes[cheats[i].rel] = renderer.cheatsheet(cheats[i])
            estimates[cheats[i].rel] = estimate_chunks(notes[cheats[i].rel])
    return dict(sorted(notes.items())), fixed_chunks + sum(estimates.values())


def build_vault(
    dest: Path, spec: VaultSpec = VaultSpec(), *, data_dir: Path | None = None
) -> VaultStats:
    """Write the vault for ``spec`` into ``dest`` (which must not exist or be empty).

    Raises `SharedDataNotFoundError` when the data folder is missing, `FileExistsError` when
    ``dest`` already holds files (a half-overwritten vault would not be the seed's vault).
    """
    start = time.perf_counter()
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(f"vault destination is not an empty folder: {dest}")
    notes, chunks = _render_tuned(spec, data_dir)
    total_bytes = 0
    made: set[Path] = set()
    for rel, text in notes.items():
        path = dest / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        data = text.encode("utf-8")
        path.write_bytes(data)
        total_bytes += len(data)
    return VaultStats(len(notes), total_bytes, chunks, time.perf_counter() - start)


_EDIT_TEMPLATES = (
    "Update {date}: revisited {title} while cleaning up these notes. The first example still "
    "works, but double-check the flags on macOS before trusting it, and keep the output in the "
    "backup folder.",
    "Follow-up {date}: ran into {title} again during the migration. Writing this down so I stop "
    "searching for it: test on a copy first, then run it for real and compare the results.",
    "{date} - a colleague asked about {title}; the short version is in the first section, the rest "
    "is background. Worth linking from the project page next time I touch it.",
)


def edit_one_file(vault: Path, seed: int = 0) -> Path:
    """Append a realistic paragraph to one note, as a user edits one file between index runs.

    Which note and which words depend only on ``seed`` and the vault's contents, so the
    "one edited file re-indexed" benchmark is reproducible. Returns the edited file's path.
    """
    vault = Path(vault)
    notes = sorted(p for p in vault.rglob("*.md") if p.is_file())
    if not notes:
        raise FileNotFoundError(f"no markdown notes to edit in {vault}")
    rng = random.Random(f"edit:{seed}")
    path = rng.choice(notes)
    day = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(365))
    paragraph = rng.choice(_EDIT_TEMPLATES).format(date=day.isoformat(), title=path.stem)
    text = path.read_text("utf-8")
    path.write_text(text.rstrip("\n") + "\n\n" + paragraph + "\n", "utf-8", newline="\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m vaultseek.bench.vaultgen DEST [--files N] [--seed S]``: build, print stats."""
    parser = argparse.ArgumentParser(
        prog="python -m vaultseek.bench.vaultgen", description=main.__doc__
    )
    parser.add_argument("dest", type=Path, help="folder to create the vault in (must be empty)")
    parser.add_argument(
        "--files", type=int, default=SEED_FILES, help=f"markdown files (default {SEED_FILES})"
    )
    parser.add_argument("--seed", type=int, default=VaultSpec.seed)
    parser.add_argument(
        "--chunks",
        type=int,
        default=None,
        help="chunk target (default: the seed design's chunks per file times --files)",
    )
    parser.add_argument(
        "--data-dir", type=Path, default=None, help=f"shared data folder (or ${DATA_ENV_VAR})"
    )
    args = parser.parse_args(argv)
    spec = VaultSpec.scaled(args.files, seed=args.seed)
    if args.chunks is not None:
        spec = VaultSpec(files=args.files, target_chunks=args.chunks, seed=args.seed)
    try:
        stats = build_vault(args.dest, spec, data_dir=args.data_dir)
    except (SharedDataNotFoundError, FileExistsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"vault      {args.dest}")
    print(f"files      {stats.files:,}")
    print(f"bytes      {stats.bytes:,}")
    print(f"chunks     {stats.estimated_chunks:,} estimated (target {spec.target_chunks:,})")
    print(f"seconds    {stats.seconds:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
