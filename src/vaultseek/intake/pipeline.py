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

A filed note's frontmatter gets a few flat keys (:data:`NOTE_KEYS`: id, date, decision,
domain, total) that Obsidian's Properties panel can show; the full assessment — scores,
reasons, weights, the domain ranking — is kept under the note's id in the vault's intake
folder (:func:`filing.save_assessment`), which the index never reads and which follows the
note wherever it is moved. Notes written in the older form, one nested ``intake:`` mapping
with everything in it, are still read, and rewritten in the flat form when reviewed.

Every destination is checked before anything is written: a domain — from ``--domain``, the
configuration or a queued note's own frontmatter — is a vault-relative folder
(:func:`routing.check_domain`), and the note and its attachment must land inside the vault,
through no symlink out of it (:func:`filing.check_destination`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from ..config import INTAKE_DIMENSIONS
from ..documents import OcrSettings
from ..engine import Index
from ..errors import ConfigError, IntakeError, VaultseekError
from ..notes.markdown import render_frontmatter, split_frontmatter
from . import filing
from .items import Item, is_waiting, item_from_text, read_item, safe_name
from .routing import ROOT, DomainModel, Route, check_domain, default_domains
from .scoring import Dimension, actionability, authority, depth

Decision = Literal["file", "review", "discard"]
ATTACHMENTS = "attachments"
NOTE_KEYS = {"id": "intake_id", "date": "intake_date", "decision": "intake_decision",
             "domain": "intake_domain", "total": "intake_score", "original": "intake_original"}  # fmt: skip
"""The flat frontmatter keys intake writes (``intake_original`` only for a document, whose
file is kept in ``attachments/``), by the name the assessment record uses for each."""


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
    reasons: dict[str, list[str]] = field(default_factory=dict)
    """Each dimension's reasons, from the assessment kept beside the note."""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "title": self.title, "total": self.total,
                "domain": self.domain, "scores": self.scores, "source": self.source, "date": self.date,
                "reasons": self.reasons}  # fmt: skip


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
            domain = check_domain(domain)
            filing.check_folder(self.vault, self.vault / domain)
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
        outcomes: list[Outcome] = []
        try:
            self._take_each(files, outcomes, dry_run=dry_run, domain=domain)
        except VaultseekError:  # items filed before it (a full disk, a refused domain) are indexed too
            with contextlib.suppress(VaultseekError):  # best effort: the first error is the one to report
                self._sync_written(outcomes)
            raise
        self._sync_written(outcomes)
        return outcomes

    def _take_each(self, files: list[Path], outcomes: list[Outcome], *, dry_run: bool, domain: str | None) -> None:
        """Take ``files`` one by one under the intake lock, appending each one's outcome."""
        with filing.intake_lock(self.vault):
            filing.recover(self.vault)
            for path in files:
                if not path.exists():  # taken by another intake while we waited for the lock
                    continue
                try:
                    ocr = OcrSettings(self.config.ocr, self.config.ocr_languages, self.config.ocr_max_pages_per_document)
                    item = read_item(path, ocr=ocr, max_note_bytes=self.config.max_file_bytes,
                                     max_document_bytes=self.config.max_document_bytes)
                except IntakeError as exc:
                    outcomes.append(Outcome(path.name, error=exc.message, dry_run=dry_run))
                    continue
                if not item.body.strip():
                    outcomes.append(Outcome(path.name, item.title, error="no text to take", dry_run=dry_run))
                    continue
                in_inbox = self._in_inbox(path)
                item = replace(item, source=self._rel(path) if in_inbox else str(path))
                outcomes.append(self._take_item(item, dry_run=dry_run, domain=domain, source=path if in_inbox else None))

    def _sync_written(self, outcomes: list[Outcome]) -> None:
        written = [path for outcome in outcomes for path in outcome.written]
        if written:
            self.index.sync(paths=written)

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
        record = {"id": move_id, "date": _now(), "item": item.name, "title": item.title, "source": item.source,
                  **assessment.to_dict()}  # fmt: skip
        if original_rel:
            record["original"] = original_rel
        text = compose_note(item, note_fields(record), original_rel)
        sources = [source] if source is not None else []
        move = filing.Move(move_id, note, text, attachments, sources)
        for path in (note, *(target for _original, target in attachments)):
            filing.check_destination(self.vault, path)  # before the assessment is kept, too
        filing.save_assessment(self.vault, move_id, record)
        try:
            filing.carry_out(self.vault, move)
        except Exception:
            filing.forget_assessment(self.vault, move_id)
            raise
        written = (self._rel(note), *(self._rel(target) for _original, target in attachments))
        return Outcome(item.name, item.title, assessment, destination=self._rel(note), written=written)

    def _folder_for(self, decision: Decision, domain: str) -> Path:
        """The folder an item goes to; a domain (routed, chosen or read from a note) is checked
        as untrusted text first."""
        if decision == "file":
            domain = check_domain(domain)
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
            record = self._record_of(meta)
            scores, reasons = record.get("scores"), record.get("reasons")
            items.append(QueuedItem(
                name=path.name, path=self._rel(path), title=str(meta.get("title") or path.stem),
                total=_number(record.get("total")), domain=_text(record.get("domain")),
                scores={k: v for k, v in scores.items() if isinstance(v, (int, float))} if isinstance(scores, dict) else {},
                source=_text(record.get("source")), date=_text(record.get("date")),
                reasons={k: [str(r) for r in v] for k, v in reasons.items() if isinstance(v, list)} if isinstance(reasons, dict) else {},
            ))  # fmt: skip
        items.sort(key=lambda q: (-(q.total or 0.0), q.name))
        return items

    def _record_of(self, meta: dict[str, Any]) -> dict[str, Any]:
        """What intake knows about a note: the assessment kept under its id, overlaid with
        what its frontmatter says now (flat keys, or the older nested ``intake:`` mapping,
        which held the scores and reasons itself) — the frontmatter wins, since a user may
        have edited it (e.g. the domain, to re-route an item before accepting it)."""
        nested = meta.get("intake")
        fields: dict[str, Any] = dict(nested) if isinstance(nested, dict) else {}
        fields.update({name: meta[key] for name, key in NOTE_KEYS.items() if key in meta})
        kept = filing.find_assessment(self.vault, fields.get("id")) or {}
        return {**kept, **fields}

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
            record = self._record_of(meta)
            written = record.get("domain")
            if decision != "file":  # recorded as it is; checked if the item is ever accepted
                target = written if isinstance(written, str) else ""
            elif domain is None and written is not None and not isinstance(written, str):
                raise IntakeError(f"{path.name}: its intake_domain is not a folder name", hint="fix it in the note, or pass --domain")
            else:
                target = check_domain(domain if domain is not None else written or "")
            if decision == "file" and domain is not None and not (self.vault / target).is_dir():
                usable = self.model().usable
                if target not in usable:
                    raise IntakeError(f"no domain folder {target!r}", hint="domains: " + ", ".join(usable))
            folder = self._folder_for(decision, target)
            move_id = str(record["id"]) if filing.is_move_id(record.get("id")) else _move_id_of(path)
            record.update({"id": move_id, "decision": decision, "domain": target, "reviewed": _now()})
            attachments: list[tuple[Path, Path]] = []
            sources = [path]
            original = record.get("original")
            old = self._attachment_of(path, original) if original is not None else None
            if old is not None:
                new = filing.unique_path(folder / ATTACHMENTS, old.stem, old.suffix)
                attachments.append((old, new))
                sources.append(old)
                record["original"] = f"{ATTACHMENTS}/{new.name}"
                body = body.replace(f"]({original})", f"]({record['original']})")
            meta = {k: v for k, v in meta.items() if k != "intake" and k not in NOTE_KEYS.values()}
            meta.update(note_fields(record))
            note = filing.unique_path(folder, path.stem, ".md")
            move = filing.Move(move_id, note, render_frontmatter(meta) + body, attachments, sources)
            for destination in (note, *(new for _old, new in attachments)):
                filing.check_destination(self.vault, destination)
            kept = filing.find_assessment(self.vault, move_id)
            filing.save_assessment(self.vault, move_id, record)
            try:
                filing.carry_out(self.vault, move)
            except Exception:  # the note stays queued: so does what was kept about it
                if kept is not None:
                    filing.save_assessment(self.vault, move_id, kept)
                else:
                    filing.forget_assessment(self.vault, move_id)
                raise
        self.index.sync(paths=[note, *(new for _old, new in attachments)])
        return Outcome(path.name, str(meta.get("title") or path.stem), destination=self._rel(note))

    def _attachment_of(self, note: Path, original: object) -> Path | None:
        """The kept original a queued note names, ``attachments/<file>`` beside it (None if it
        is no longer there), or :class:`IntakeError`: the name comes from the note's own
        frontmatter, so it may not point anywhere else, nor be a symlink."""
        parts = PurePosixPath(original).parts if isinstance(original, str) else ()
        if len(parts) != 2 or parts[0] != ATTACHMENTS or parts[1] in ("..", ".") or "\\" in parts[1]:
            raise IntakeError(f"{note.name}: its intake_original {original!r} is not a file in {ATTACHMENTS}/",
                              hint="fix or remove intake_original in the note")  # fmt: skip
        path = note.parent / ATTACHMENTS / parts[1]
        if path.is_symlink():
            raise IntakeError(f"{note.name}: its original {original} is a symlink", hint="put the file itself there")
        return path if path.is_file() else None

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


def note_fields(record: dict[str, Any]) -> dict[str, Any]:
    """The flat frontmatter keys for an assessment record (:data:`NOTE_KEYS`), scalars only."""
    return {key: record[name] for name, key in NOTE_KEYS.items()
            if isinstance(record.get(name), (str, int, float)) and not isinstance(record.get(name), bool)}  # fmt: skip


def compose_note(item: Item, fields: dict[str, Any], original: str | None) -> str:
    """The filed note: the item's own frontmatter (less any intake keys it came with) plus
    ``title`` and the flat intake ``fields``, then its body (a document's extracted text,
    after a link to the kept original)."""
    own = {k: v for k, v in item.meta.items() if k != "intake" and k not in NOTE_KEYS.values()}
    meta = own if item.kind == "note" else {}
    meta.setdefault("title", item.title)
    if item.kind != "note":
        meta.update({f"source_{k}" if k in meta else k: v for k, v in item.meta.items()})
    meta.update(fields)
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


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
