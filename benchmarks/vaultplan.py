"""The plan of a benchmark vault: which note goes where, quoting which source page.

Shares of the vault per kind of note, the areas and projects notes are filed under, unique
(case-insensitive) paths, the candidate cheatsheets, and how many sections each cheatsheet shows
so that the vault's chunk total meets its target (see `benchmarks.vaultgen`).
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.sourcedata import TldrRef, discover_powershell, discover_tldr

_SHARES = {"powershell": 0.06, "cheatsheet": 0.08, "daily": 0.04, "project": 0.025, "inbox": 0.03}
_MAX_POOL = 50
"""Largest number of tldr pages one cheatsheet may draw on (bigger topics become several notes)."""

AREA_OF_PLATFORM = {
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
"""The area (folder under ``areas/``) a tldr platform's notes belong to."""
AREAS = sorted(set(AREA_OF_PLATFORM.values()))
"""The areas, in the order their maps of content are made."""
AREA_LABELS = {
    "cli-tools": "CLI tools",
    "linux": "Linux",
    "macos": "macOS",
    "windows": "Windows",
    "android": "Android",
    "bsd": "BSD",
    "networking": "Networking",
}
"""How an area is named in titles."""
PROJECTS = (
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
"""(folder under ``projects/``, hub note title, tags) of each project a vault may have."""


@dataclass(slots=True)
class Cheat:
    """A planned cheatsheet: several tldr pages of one topic or run shown as ``##`` sections."""

    rel: str
    title: str
    area: str
    lang: str
    pool: list[TldrRef]
    """Pages this cheatsheet may show, in order; it shows the first ``size``."""
    size: int = 0


@dataclass(slots=True)
class VaultPlan:
    """Every note of a vault by kind, as (path, what it is made from), in rendering order."""

    powershell: list[tuple[str, Path]] = field(default_factory=list)
    singles: list[tuple[str, TldrRef]] = field(default_factory=list)
    cheats: list[Cheat] = field(default_factory=list)
    daily: list[tuple[str, dt.date]] = field(default_factory=list)
    projects: list[tuple[str, int, str]] = field(default_factory=list)
    """(path, index into PROJECTS, kind) with kind hub/meeting/runbook/decision/research."""
    inbox: list[tuple[str, TldrRef]] = field(default_factory=list)
    mocs: list[tuple[str, str]] = field(default_factory=list)
    """(path, area); area "" is the vault's Home note."""
    templates: list[str] = field(default_factory=list)
    english: list[TldrRef] = field(default_factory=list)
    """English pages the prose of journal, project and inbox notes quotes."""
    spare: list[TldrRef] = field(default_factory=list)
    """tldr pages no note uses, for cheatsheets that need more sections."""

    def paths(self) -> list[str]:
        """Every note's path."""
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


def plan_vault(files: int, seed: int, data: Path) -> VaultPlan:
    """Decide every note's path and source for a vault of ``files`` notes from ``data``.

    Cheatsheet sizes are left at 0: they are tuned to the chunk target once the other notes are
    rendered (see `apportion`, `nudge`, `widen_pools`). Raises `ValueError` when ``files`` is
    below 1 or more than the data can fill.
    """
    if files < 1:
        raise ValueError(f"a vault needs at least one file, not {files}")
    pages = discover_tldr(data / "tldr")
    ps_pages = discover_powershell(data / "powershell-docs" / "reference")
    n = files
    counts = {kind: math.floor(n * share) for kind, share in _SHARES.items()}
    counts["powershell"] = round(n * _SHARES["powershell"])  # so that a small vault has some
    counts["cheatsheet"] = round(n * _SHARES["cheatsheet"])
    counts["moc"] = min(len(AREAS) + 1, n // 250)
    counts["template"] = 3 if n >= 200 else 0
    counts["powershell"] = min(counts["powershell"], len(ps_pages))
    n_single = n - sum(counts.values())
    plan, paths = VaultPlan(), _PathSet()

    # PowerShell reference: whole versions in preference order, the last one sampled.
    rng = random.Random(f"{seed}:powershell")
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
    rng = random.Random(f"{seed}:pages")
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
    pools = _cheatsheet_pools(ordered[n_single:], seed)
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
        area = AREA_OF_PLATFORM.get(ref.platform, "cli-tools")
        if ref.platform not in ("common", "linux") and not title.startswith(ref.platform):
            title = f"{title} ({ref.platform})"
        folder = f"areas/{area}" if ref.lang == "en" else f"areas/{area}/{ref.lang}"
        plan.cheats.append(Cheat(paths.claim(folder, title), title, area, ref.lang, pool))
    plan.spare = [ref for _, pool in spare for ref in pool]

    rng = random.Random(f"{seed}:notes")
    english = [r for r in pages if r.lang == "en"]
    plan.english = rng.sample(english, min(len(english), 60 + n // 10))
    day = dt.date(2023, 1, 2)
    for _ in range(counts["daily"]):
        plan.daily.append((paths.claim(f"journal/{day.year}", day.isoformat()), day))
        day += dt.timedelta(days=1 + (rng.random() < 0.3) + (rng.random() < 0.1))
    n_projects = min(len(PROJECTS), max(1, math.ceil(counts["project"] / 8)))
    kinds = ("meeting", "runbook", "decision", "research")
    for i in range(counts["project"]):
        which = i % n_projects
        slug, title, _ = PROJECTS[which]
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
        for area in AREAS[: counts["moc"] - 1]:
            plan.mocs.append((paths.claim(f"areas/{area}", f"{AREA_LABELS[area]} MOC"), area))
    for name in ("Daily template", "Project template", "Meeting template")[: counts["template"]]:
        plan.templates.append(paths.claim("templates", name))
    return plan


def _cheatsheet_pools(rest: list[TldrRef], seed: int) -> list[tuple[str, list[TldrRef]]]:
    """Candidate cheatsheets, most wanted first: a topic (``git-*``) or an alphabetical run.

    Topics and English come first, as a person collects cheatsheets for the tools they use most.
    """
    rng = random.Random(f"{seed}:cheatsheets")
    groups: dict[tuple[str, str, str], list[TldrRef]] = defaultdict(list)
    for ref in sorted(rest, key=lambda r: (r.lang, r.platform, r.name)):
        groups[(ref.lang, ref.platform, ref.topic)].append(ref)
    pools: list[tuple[float, str, list[TldrRef]]] = []
    loose: dict[tuple[str, str], list[TldrRef]] = defaultdict(list)
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


# --------------------------------------------------------------------------------------------
# Cheatsheet sizes, tuned to the chunk target once every other note is rendered


def widen_pools(cheats: Sequence[Cheat], spare: list[TldrRef], needed: int) -> None:
    """Give cheatsheets more pages to show, from pages no note uses, until ``needed`` more fit.

    Only small vaults need this: a handful of cheatsheets may not hold the sections the chunk
    target asks for. A cheatsheet takes pages of its own language and platform first.
    """
    by_shelf: dict[tuple[str, str], list[TldrRef]] = defaultdict(list)
    for ref in reversed(spare):
        by_shelf[(ref.lang, ref.platform)].append(ref)
    used: set[TldrRef] = set()
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


def apportion(total: int, capacities: Sequence[int], rng: random.Random) -> list[int]:
    """Split ``total`` into one share per capacity, proportional to it, each in [1, capacity]."""
    if not capacities:
        return []
    room = sum(capacities)
    sizes = [max(1, min(c, round(c * total / room))) for c in capacities]
    nudge(sizes, capacities, total - sum(sizes), rng)
    return sizes


def nudge(sizes: list[int], capacities: Sequence[int], delta: int, rng: random.Random) -> set[int]:
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
