"""The text of each kind of benchmark note, rendered from a `VaultPlan`.

Single tldr pages, cheatsheets, daily notes, project notes, inbox notes, maps of content and
templates, with Obsidian-style frontmatter, ``#tags`` and ``[[wikilinks]]``; generated prose is
made of real tldr descriptions and examples. Every choice comes from seeded random streams, so
the same plan and seed always give the same bytes.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchmarks.sourcedata import Library, TldrDoc, TldrRef, read_text
from benchmarks.vaultplan import AREA_LABELS, AREA_OF_PLATFORM, PROJECTS, Cheat, VaultPlan

_BACKTICKED = re.compile(r"`([a-z0-9][a-z0-9._+-]*)`")
_TAG_UNSAFE = re.compile(r"[^\w/-]")
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
        library: Library,
        english: Sequence[TldrRef],
        note_of: dict[tuple[str, str], str],
        links: _Links,
    ) -> None:
        self.rng, self.library, self.english = rng, library, list(english)
        self.note_of, self.links = note_of, links

    def pick(self) -> tuple[TldrRef, TldrDoc]:
        ref = self.rng.choice(self.english)
        return ref, self.library.doc(ref)

    def mention(self, ref: TldrRef) -> str:
        rel = self.note_of.get((ref.lang, ref.name))
        return self.links.to(rel) if rel and self.rng.random() < 0.6 else f"`{ref.name}`"

    def example(self) -> tuple[TldrRef, str, str]:
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


class Renderer:
    """Turns the plan into note texts; every choice comes from one seeded stream, in plan order."""

    def __init__(self, plan: VaultPlan, seed: int) -> None:
        self.plan, self.seed = plan, seed
        self.library = Library()
        self.links = _Links(plan.paths())
        self.note_of = {(ref.lang, ref.name): rel for rel, ref in plan.singles}
        self.singles_by_area: dict[str, list[str]] = defaultdict(list)
        for rel, ref in plan.singles:
            if ref.lang == "en":
                self.singles_by_area[AREA_OF_PLATFORM.get(ref.platform, "cli-tools")].append(rel)
        self.moc_of = {area: rel for rel, area in plan.mocs}
        self.hubs = {which: rel for rel, which, kind in plan.projects if kind == "hub"}

    def prose(self, stage: str) -> _Prose:
        rng = random.Random(f"{self.seed}:{stage}")
        return _Prose(rng, self.library, self.plan.english, self.note_of, self.links)

    def render_fixed(self) -> dict[str, str]:
        """Every note but the cheatsheets, whose sizes are tuned afterwards."""
        notes: dict[str, str] = {}
        for rel, path in self.plan.powershell:
            notes[rel] = read_text(path)
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

    def single(self, rel: str, ref: TldrRef, rng: random.Random) -> str:
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
            area = AREA_OF_PLATFORM.get(ref.platform, "cli-tools")
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

    def cheatsheet(self, cheat: Cheat) -> str:
        """The cheatsheet's text, showing the first ``cheat.size`` pages of its pool."""
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
        slug, _, tags = PROJECTS[which]
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

    def inbox(self, rel: str, ref: TldrRef, prose: _Prose) -> str:
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
        label = AREA_LABELS[area]
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
