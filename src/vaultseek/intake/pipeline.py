"""Intake over one index: assess an item, route it, file it; the review queue.

    intake = Intake(index)
    outcomes = intake.take(Path("~/Downloads/article.html"), dry_run=True)
    outcomes = intake.take_inbox()               # what the watcher and the daemon run
    queue = intake.queue()                       # the review folder, with scores
    intake.accept("article.md", domain="linux")  # or intake.discard("article.md")

Every surface (CLI, watcher, daemon) calls this class; it never prints. The total is the
weighted mean of the four dimensions (``intake_weights``); ``intake_file_at`` and
``intake_review_at`` cut it into file / review / discard. Items from the inbox are moved;
files named from elsewhere are copied (the original is left where it was). After writing,
the index is synced, so a filed note is searchable like any other.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ..config import INTAKE_DIMENSIONS
from ..documents import OcrSettings
from ..engine import Index
from ..errors import ConfigError, IntakeError
from ..notes.markdown import render_frontmatter, split_frontmatter
from . import filing
from .items import Item, is_waiting, item_from_text, read_item, safe_name
from .routing import ROOT, DomainModel, Route, default_domains
from .scoring import Dimension, actionability, authority, depth

Decision = Literal["file", "review", "discard"]
ATTACHMENTS = "attachments"


@dataclass(frozen=True)
class Assessment:
    """Scores, reasons, domain and decision for one item (what ``--dry-run`` shows)."""

    dimensions: tuple[Dimension, ...]
    weights: tuple[float, ...]
    total: float
    decision: Decision
    domain: str
    route: Route
    reasons: tuple[str, ...]
    """Why this decision: the thresholds crossed, a domain forced by hand, …"""

    def score(self, name: str) -> float:
        return next(d.score for d in self.dimensions if d.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "domain": self.domain,
            "total": self.total,
            "scores": {d.name: d.score for d in self.dimensions},
            "weights": dict(zip(INTAKE_DIMENSIONS, self.weights, strict=True)),
            "reasons": {d.name: list(d.reasons) for d in self.dimensions},
            "decision_reasons": list(self.reasons),
            "domains": [{"domain": a.domain, "affinity": a.score} for a in self.route.affinities[:5]],
            "margin": self.route.margin,
        }


@dataclass(frozen=True)
class Outcome:
    """What happened to one item (``destination`` is vault-relative; None in a dry run or
    when the item could not be taken)."""

    item: str
    title: str = ""
    assessment: Assessment | None = None
    destination: str | None = None
    error: str | None = None
    dry_run: bool = False
    written: tuple[str, ...] = ()
    """Every file filing put in the vault (vault-relative): the note and its attachment. The
    index syncs just these afterwards, not the whole vault."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"item": self.item, "title": self.title, "dry_run": self.dry_run,
                               "destination": self.destination}  # fmt: skip
        if self.assessment is not None:
            out.update(self.assessment.to_dict())
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class QueuedItem:
    """A note waiting in the review queue (or in the discard folder)."""

    name: str
    path: str
    title: str
    total: float | None
    domain: str | None
    scores: dict[str, float] = field(default_factory=dict)
    source: str | None = None
    date: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "title": self.title, "total": self.total,
                "domain": self.domain, "scores": self.scores, "source": self.source, "date": self.date}  # fmt: skip


class Intake:
    """Intake for the vault of ``index`` (which it syncs after writing)."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.config = index.config
        self.vault = index.vault
        if self.config.intake_review_at > self.config.intake_file_at:
            raise ConfigError(
                f"intake_review_at ({self.config.intake_review_at:g}) is above intake_file_at "
                f"({self.config.intake_file_at:g})",
                hint="the review band is [intake_review_at, intake_file_at)",
            )
        self._model: DomainModel | None = None

    # -- folders ------------------------------------------------------------------------------
    @property
    def inbox(self) -> Path:
        return self.vault / self.config.intake_inbox

    @property
    def review_folder(self) -> Path:
        return self.vault / self.config.intake_review

    @property
    def discard_folder(self) -> Path:
        return self.vault / self.config.intake_discard

    def model(self) -> DomainModel:
        """The domains as the index sees them now (built once per :class:`Intake`)."""
        if self._model is None:
            paths, matrix = self.index.vectors_with_paths()
            domains = list(self.config.intake_domains) or default_domains(paths, self.config.intake_folders)
            self._model = DomainModel(paths, matrix, domains or [ROOT])
        return self._model

    # -- assessing ----------------------------------------------------------------------------
    def assess(self, item: Item, *, domain: str | None = None) -> Assessment:
        """Score ``item`` and decide where it goes (``domain`` forces the domain and files it)."""
        model = self.model()
        if domain is not None:
            domain = domain.strip("/")
            known = set(model.domains) | set(model.usable)
            if domain not in known and not (self.vault / domain).is_dir():
                raise IntakeError(
                    f"no domain folder {domain!r}",
                    hint="domains: " + (", ".join(model.usable) or "(none yet: the vault has no folders with notes)"),
                )
        route = model.route(self.index.embed(item.text), forced=domain)
        dimensions = (
            route.relevance,
            actionability(item.body),
            depth(item.body),
            authority(item.body, item.meta, self.config.intake_trusted_domains),
        )
        weights = self.config.intake_weights
        total = round(sum(w * d.score for w, d in zip(weights, dimensions, strict=True)) / sum(weights), 3)
        file_at, review_at = self.config.intake_file_at, self.config.intake_review_at
        decision: Decision
        if domain is not None:
            decision, reasons = "file", [f"domain {domain!r} chosen by hand (total {total:.3f})"]
        elif total >= file_at:
            decision, reasons = "file", [f"total {total:.3f} ≥ intake_file_at {file_at:g}"]
        elif total >= review_at:
            decision, reasons = "review", [f"intake_review_at {review_at:g} ≤ total {total:.3f} < intake_file_at {file_at:g}"]
        else:
            decision, reasons = "discard", [f"total {total:.3f} < intake_review_at {review_at:g}"]
        return Assessment(dimensions, weights, total, decision, route.domain, route, tuple(reasons))

    # -- taking items -------------------------------------------------------------------------
    def take(self, source: Path, *, dry_run: bool = False, domain: str | None = None) -> list[Outcome]:
        """Take a file or every file in a folder. Files in the inbox are moved, others copied.
        A file that cannot be read gives an outcome with ``error`` and stays where it is."""
        source = source.expanduser().absolute()
        if not source.exists():
            raise IntakeError(f"{source} does not exist")
        files = [source] if source.is_file() else sorted(
            p for p in source.rglob("*") if p.is_file() and not any(is_waiting(Path(part)) for part in p.relative_to(source).parts)
        )  # fmt: skip
        if source.resolve().is_relative_to(self.vault.resolve()) and not self._in_inbox(source):
            raise IntakeError(
                f"{source} is already in the vault",
                hint=f"drop it into {self.config.intake_inbox}/ to route it, or use `vaultseek review` for queued items",
            )
        return self._take_files(files, dry_run=dry_run, domain=domain)

    def take_inbox(self, *, dry_run: bool = False, min_age: float = 0.0) -> list[Outcome]:
        """Take everything in the inbox (not hidden files or partial downloads, and not files
        changed in the last ``min_age`` seconds: they may still be being written)."""
        if not self.inbox.is_dir():
            return []
        import time

        now = time.time()
        files = []
        for path in sorted(self.inbox.rglob("*")):
            rel = path.relative_to(self.inbox)
            if not path.is_file() or any(is_waiting(Path(part)) for part in rel.parts):
                continue
            if min_age and now - path.stat().st_mtime < min_age:
                continue
            files.append(path)
        return self._take_files(files, dry_run=dry_run, domain=None)

    def take_text(self, text: str, *, dry_run: bool = False, domain: str | None = None) -> Outcome:
        """A pasted snippet (``vaultseek intake -``)."""
        item = item_from_text(text, source="stdin")
        if not item.body.strip():
            raise IntakeError("nothing to take: the input is empty")
        with filing.intake_lock(self.vault):
            filing.recover(self.vault)
            outcome = self._take_item(item, dry_run=dry_run, domain=domain, source=None)
        if outcome.written:
            self.index.sync(paths=outcome.written)
        return outcome

    def pending(self) -> int:
        """How many items wait in the inbox."""
        if not self.inbox.is_dir():
            return 0
        return sum(1 for p in self.inbox.rglob("*") if p.is_file() and not is_waiting(p))

    def _take_files(self, files: list[Path], *, dry_run: bool, domain: str | None) -> list[Outcome]:
        outcomes = []
        with filing.intake_lock(self.vault):
            filing.recover(self.vault)
            for path in files:
                if not path.exists():  # taken by another intake while we waited for the lock
                    continue
                try:
                    item = read_item(path, ocr=OcrSettings(self.config.ocr, self.config.ocr_languages))
                except IntakeError as exc:
                    outcomes.append(Outcome(path.name, error=exc.message, dry_run=dry_run))
                    continue
                if not item.body.strip():
                    outcomes.append(Outcome(path.name, item.title, error="no text to take", dry_run=dry_run))
                    continue
                in_inbox = self._in_inbox(path)
                item = replace(item, source=self._rel(path) if in_inbox else str(path))
                outcomes.append(self._take_item(item, dry_run=dry_run, domain=domain, source=path if in_inbox else None))
        written = [path for outcome in outcomes for path in outcome.written]
        if written:
            self.index.sync(paths=written)
        return outcomes

    def _in_inbox(self, path: Path) -> bool:
        return path.resolve().is_relative_to(self.inbox.resolve())

    def _take_item(self, item: Item, *, dry_run: bool, domain: str | None, source: Path | None) -> Outcome:
        """Assess and (unless ``dry_run``) write one item; ``source`` is removed once the note
        is in place (an inbox file), None leaves the original alone."""
        assessment = self.assess(item, domain=domain)
        if dry_run:
            return Outcome(item.name, item.title, assessment, dry_run=True)
        folder = self._folder_for(assessment.decision, assessment.domain)
        move_id = _move_id(item)
        note = filing.unique_path(folder, item.name, ".md")
        attachments: list[tuple[Path, Path]] = []
        original_rel = None
        if item.original is not None:
            target = filing.unique_path(folder / ATTACHMENTS, safe_name(item.original.stem), item.original.suffix.lower())
            attachments.append((item.original, target))
            original_rel = f"{ATTACHMENTS}/{target.name}"
        record = {
            "id": move_id,
            "date": _now(),
            "source": item.source,
            "decision": assessment.decision,
            "domain": assessment.domain,
            **assessment_record(assessment),
        }
        if original_rel:
            record["original"] = original_rel
        text = compose_note(item, record, original_rel)
        sources = [source] if source is not None else []
        filing.carry_out(self.vault, filing.Move(move_id, note, text, attachments, sources))
        written = (self._rel(note), *(self._rel(target) for _original, target in attachments))
        return Outcome(item.name, item.title, assessment, destination=self._rel(note), written=written)

    def _folder_for(self, decision: Decision, domain: str) -> Path:
        if decision == "file":
            return self.vault / domain if domain else self.vault
        return self.review_folder if decision == "review" else self.discard_folder

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.vault).as_posix()

    # -- the review queue ---------------------------------------------------------------------
    def queue(self, *, discarded: bool = False) -> list[QueuedItem]:
        """The notes waiting for review (or, with ``discarded``, the discarded ones), best first."""
        folder = self.discard_folder if discarded else self.review_folder
        with filing.intake_lock(self.vault):
            filing.recover(self.vault)
        items = []
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            meta, _ = split_frontmatter(path.read_text("utf-8", "replace"))
            record = meta.get("intake")
            if not isinstance(record, dict):
                record = {}
            items.append(QueuedItem(
                name=path.name, path=self._rel(path), title=str(meta.get("title") or path.stem),
                total=record.get("total"), domain=record.get("domain"), scores=dict(record.get("scores") or {}),
                source=record.get("source"), date=record.get("date"),
            ))  # fmt: skip
        items.sort(key=lambda q: (-(q.total or 0.0), q.name))
        return items

    def accept(self, name: str, *, domain: str | None = None) -> Outcome:
        """File a queued (or discarded) note into its suggested domain, or ``domain``."""
        return self._reroute(name, "file", domain)

    def discard(self, name: str) -> Outcome:
        """Move a queued note to the discard folder (kept there, never deleted)."""
        return self._reroute(name, "discard", None)

    def _reroute(self, name: str, decision: Decision, domain: str | None) -> Outcome:
        with filing.intake_lock(self.vault):
            filing.recover(self.vault)
            path = self._find_queued(name, allow_discarded=decision == "file")
            meta, body = split_frontmatter(path.read_text("utf-8"))
            record = dict(meta.get("intake") or {}) if isinstance(meta.get("intake"), dict) else {}
            target = (domain or str(record.get("domain") or "")).strip("/")
            if decision == "file" and domain is not None and not (self.vault / target).is_dir():
                usable = self.model().usable
                if target not in usable:
                    raise IntakeError(f"no domain folder {target!r}", hint="domains: " + ", ".join(usable))
            folder = self._folder_for(decision, target)
            move_id = _move_id_of(path)
            record.update({"id": move_id, "decision": decision, "domain": target, "reviewed": _now()})
            attachments: list[tuple[Path, Path]] = []
            sources = [path]
            original = record.get("original")
            if isinstance(original, str) and (path.parent / original).is_file():
                old = path.parent / original
                new = filing.unique_path(folder / ATTACHMENTS, old.stem, old.suffix)
                attachments.append((old, new))
                sources.append(old)
                record["original"] = f"{ATTACHMENTS}/{new.name}"
                body = body.replace(f"]({original})", f"]({record['original']})")
            meta["intake"] = record
            note = filing.unique_path(folder, path.stem, ".md")
            filing.carry_out(self.vault, filing.Move(move_id, note, render_frontmatter(meta) + body, attachments, sources))
        self.index.sync(paths=[note, *(new for _old, new in attachments)])
        return Outcome(path.name, str(meta.get("title") or path.stem), destination=self._rel(note))

    def _find_queued(self, name: str, *, allow_discarded: bool) -> Path:
        folders = [self.review_folder] + ([self.discard_folder] if allow_discarded else [])
        wanted = Path(name).name
        candidates = [wanted, f"{wanted}.md"] if not wanted.endswith(".md") else [wanted]
        for folder in folders:
            for candidate in candidates:
                if (folder / candidate).is_file():
                    return folder / candidate
        raise IntakeError(
            f"no item {name!r} in the review queue" + (" or the discard folder" if allow_discarded else ""),
            hint="`vaultseek review` lists the queue",
        )


def assessment_record(assessment: Assessment) -> dict[str, Any]:
    """The scores as the note's frontmatter keeps them (``intake.total``, ``intake.scores``, …)."""
    return {
        "total": assessment.total,
        "scores": {d.name: d.score for d in assessment.dimensions},
        "reasons": {d.name: list(d.reasons) for d in assessment.dimensions},
    }


def compose_note(item: Item, record: dict[str, Any], original: str | None) -> str:
    """The filed note: the item's own frontmatter plus ``title`` and the ``intake`` record,
    then its body (a document's extracted text, after a link to the kept original)."""
    meta = {k: v for k, v in item.meta.items() if k != "intake"} if item.kind == "note" else {}
    meta.setdefault("title", item.title)
    if item.kind != "note":
        meta.update({f"source_{k}" if k in meta else k: v for k, v in item.meta.items()})
    meta["intake"] = record
    body = item.body if item.body.endswith("\n") else item.body + "\n"
    if original is not None:
        body = f"# {item.title}\n\nOriginal: [{Path(original).name}]({original})\n\n{body}"
    return render_frontmatter(meta) + body


def _move_id(item: Item) -> str:
    seed = f"{item.source}\0{item.name}\0{_dt.datetime.now(_dt.UTC).isoformat()}\0{id(item)}"
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:16]


def _move_id_of(path: Path) -> str:
    seed = f"{path}\0{_dt.datetime.now(_dt.UTC).isoformat()}"
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:16]


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()
