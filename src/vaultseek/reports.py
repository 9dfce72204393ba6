"""What the index's other commands report: a sync, the index's status, a note's links and
related notes, the deep tier and its worker, indexing progress.

Value types like those in ``records.py``, kept apart because a search uses none of them: a
fresh ``vaultseek search`` does not build these twelve dataclasses (~6 ms). ``records`` still
gives each of them by name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .records import DeepState, LinkDirection, LinkSyntax, LinkVia, ProgressPhase, SkippedFile


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one index run did."""

    scanned: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    touched: int = 0
    """Files whose size/mtime changed but whose content hash did not: no re-chunking."""
    deleted: int = 0
    skipped: tuple[SkippedFile, ...] = ()
    chunks_written: int = 0
    vectors_reused: int = 0
    reembedded: int = 0
    """Chunks re-embedded because the embedding model changed."""
    redactions: dict[str, int] = field(default_factory=dict)
    """Credential pattern name → how many were replaced (never the secrets themselves)."""
    interrupted: bool = False
    seconds: float = 0.0
    notices: tuple[str, ...] = ()
    documents_extracted: int = 0
    """Documents (PDF, DOCX, …) whose text was extracted in this run."""
    pages_extracted: int = 0
    """PDF pages read in this run (text layer or OCR)."""
    pages_ocred: int = 0
    """PDF pages run through OCR in this run."""
    pages_resumed: int = 0
    """OCRed pages taken from the checkpoints an earlier, interrupted run left."""
    full: bool = True
    """False when the run looked at named paths only (a watcher's sync after file events);
    ``scanned`` then counts those of them that are files the vault indexes."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


NO_TEXT = "no text found in it (empty, or only pictures)"
"""What every surface says of a document read without error that holds nothing to search."""


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """A snapshot of an index, for ``vaultseek status``."""

    vault: str
    db_path: str
    files: int
    chunks: int
    vectors: int
    db_bytes: int
    model: str | None
    model_fingerprint: str | None
    last_indexed: str | None
    skipped: tuple[SkippedFile, ...]
    schema_version: int
    documents: dict[str, int] = field(default_factory=dict)
    """Indexed documents by type (``{"pdf": 3, "docx": 1}``); notes are ``files`` minus these."""
    failed_documents: tuple[SkippedFile, ...] = ()
    """The documents among ``skipped``: encrypted, corrupt, unsupported, too large, …"""
    textless_documents: tuple[str, ...] = ()
    """Indexed documents in which no text was found (an empty file, slides of pictures only);
    pictures and pages waiting for OCR are not counted. Each is shown with :data:`NO_TEXT`."""
    ocr_pages: int = 0
    """Pages of the indexed documents whose text came from OCR."""
    ocr_pending: int = 0
    """Pages that need OCR but did not get it (Tesseract or a language pack missing, OCR
    off); they are OCRed on the next run that can."""
    ocr_over_limit: int = 0
    """Pages not OCRed because their document reached ``ocr_max_pages_per_document``."""
    ocr_max_pages: int = 0
    """That limit (``ocr_max_pages_per_document``), to say so beside the count."""
    deep: DeepStatus | None = None
    """The deep tier's coverage and job; None when the tier is off."""
    external_symlinks: int = 0
    """Symlinks among ``skipped`` that lead out of the vault and were not followed."""
    follow_external_symlinks: bool = False
    """The setting that would follow them (``follow_external_symlinks``)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["deep"] = None if self.deep is None else self.deep.to_dict()
        return data


@dataclass(frozen=True, slots=True)
class ResolvedLink:
    """A link from ``source`` as written, and the file it resolves to (``path``)."""

    source: str
    target: str
    """As written; a markdown link's destination URL-decoded (``other note.md``)."""
    heading: str | None
    alias: str | None
    embed: bool
    syntax: LinkSyntax
    path: str | None
    """The vault-relative path it points at; None when no indexed file matches."""
    via: LinkVia
    heading_found: bool | None = None
    """Whether ``heading`` exists in the note at ``path`` (``anchors.py``); None when not
    checked: no heading, unresolved, a block reference, a document, a backlink."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "heading": self.heading, "alias": self.alias,
            "embed": self.embed, "syntax": self.syntax, "path": self.path, "via": self.via,
            "heading_found": self.heading_found,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class NoteLinks:
    """A note's outgoing links (resolved and unresolved, in the order they appear) and its
    backlinks (one per link that points at it, by linking note)."""

    path: str
    outgoing: tuple[ResolvedLink, ...]
    backlinks: tuple[ResolvedLink, ...]
    notices: tuple[str, ...] = ()

    @property
    def unresolved(self) -> tuple[ResolvedLink, ...]:
        return tuple(link for link in self.outgoing if link.path is None)

    @property
    def missing_headings(self) -> tuple[ResolvedLink, ...]:
        """Outgoing links whose note resolves but has no such heading."""
        return tuple(link for link in self.outgoing if link.heading_found is False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "outgoing": [link.to_dict() for link in self.outgoing],
            "unresolved": len(self.unresolved),
            "missing_headings": len(self.missing_headings),
            "backlinks": [
                {"path": link.source, "target": link.target, "heading": link.heading,
                 "alias": link.alias, "embed": link.embed, "syntax": link.syntax}
                for link in self.backlinks
            ],
        }  # fmt: skip
        if self.notices:
            out["notices"] = list(self.notices)
        return out


@dataclass(frozen=True, slots=True)
class RelatedNote:
    """A note related to another, and why: by links (direct, or neighbours in common), by
    meaning (cosine similarity of the two notes' sections), or both."""

    path: str
    title: str | None
    score: float
    """The fused score (links, similarity and, with the deep tier, deep similarity; each list
    min-max normalised and weighted as ``links.related.WEIGHTS`` says)."""
    links_rank: int | None
    """1-based rank among the notes related by links; None when not related by links."""
    vector_rank: int | None
    """1-based rank among the most similar notes; None when not among them."""
    linked: LinkDirection | None
    """``to``: the note links to this one; ``from``: this one links to the note."""
    shared: tuple[str, ...]
    """Neighbours both notes link to or are linked from (at most five, strongest first)."""
    similarity: float | None
    """The best cosine similarity between a section of this note and the note's centroid."""
    deep_rank: int | None = None
    """1-based rank among the most similar notes by the deep tier's vectors; None when not
    among them or the index has no deep vectors."""
    deep_similarity: float | None = None
    """As :attr:`similarity`, by the deep tier's vectors; None without them. The deep model's
    cosines crowd together (multilingual-e5: 0.75–0.92 for most pairs), so compare them with
    each other rather than with :attr:`similarity`'s."""
    close: bool | None = None
    """True when related by links or close in meaning (a cosine at or above its model's line,
    ``links.related.CLOSE``); False when it is only among the nearest; None when no model with
    a line compared them and no link relates them."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "title": self.title, "score": round(self.score, 6),
            "links_rank": self.links_rank, "vector_rank": self.vector_rank,
            "deep_rank": self.deep_rank, "linked": self.linked, "shared": list(self.shared),
            "similarity": None if self.similarity is None else round(self.similarity, 6),
            "deep_similarity": None if self.deep_similarity is None else round(self.deep_similarity, 6),
            "close": self.close,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class RelatedNotes:
    path: str
    results: tuple[RelatedNote, ...]
    notices: tuple[str, ...] = ()
    nothing_close: bool = False
    """True when there are results and none is :attr:`~RelatedNote.close`: the nearest notes of
    a note nothing in the vault is about (a notice says so too)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path, "results": [r.to_dict() for r in self.results], "nothing_close": self.nothing_close,
        }  # fmt: skip
        if self.notices:
            out["notices"] = list(self.notices)
        return out


@dataclass(frozen=True, slots=True)
class DeepStatus:
    """How far the deep tier has got (see ``deepening.py``)."""

    model: str | None
    """The deep model the stored vectors come from (None: none made yet)."""
    chunks: int
    """Chunks in the index."""
    embedded: int
    """Chunks that have a deep vector (searched by meaning in the deep list)."""
    state: DeepState
    """``complete``; ``running`` (a job is embedding this index now); ``queued`` (in the
    background worker's queue while it serves another index or rests for a search);
    ``paused`` (queued, and ``vaultseek deep --pause`` holds the worker; or the embedding
    server failed, and :attr:`problem` says how — the job resumes when it answers);
    ``waiting`` (work left and no job on it: the next ``index``, the daemon or ``vaultseek
    deep`` continues it);
    ``unavailable`` (the deep model cannot run here)."""
    rate: float | None = None
    """Chunks a second the job measured, stored as it goes (None: not measured yet)."""
    reason: str | None = None
    """Why the tier is unavailable here (state ``unavailable``)."""
    openings: int = 0
    """Files with chunks: each has an opening, its first chunk (title and introduction),
    which the job embeds before any file's later chunks."""
    openings_embedded: int = 0
    """Files whose opening has a deep vector: every note findable by meaning when it equals
    :attr:`openings`."""
    serving_model: str | None = None
    """While a newly chosen model's vectors are built (:attr:`model`, counted by
    :attr:`embedded`), the model whose vectors search still uses; None otherwise."""
    host: str | None = None
    """The embedding server (``host:port``) the deep tier sends chunks and queries to; None:
    the model runs in this process."""
    problem: str | None = None
    """Why the job stopped short: its embedding server failed (state ``paused``)."""
    work_rate: float | None = None
    """Units of work a second the job measured (``deepening.text_work``: a text's characters,
    weighted by its length), stored as it goes; None: not measured yet, or by a version that
    measured chunks alone (then :attr:`rate` estimates the time left)."""
    work_left: float | None = None
    """The work the chunks without a deep vector still need, in the same units (None: not
    counted)."""
    openings_work_left: float | None = None
    """The part of :attr:`work_left` that is openings (they go first)."""

    @property
    def pending(self) -> int:
        return self.chunks - self.embedded

    @property
    def openings_pending(self) -> int:
        return max(0, self.openings - self.openings_embedded)

    @property
    def eta_seconds(self) -> float | None:
        """Seconds left: the work left at the measured work rate (a chunk's time grows with
        its length, and the short openings go first, so a count of chunks misleads at the
        start); the chunks left at the chunk rate when the work rate is not known. None when
        unknown, 0 when complete."""
        if not self.pending:
            return 0.0
        if self.work_rate and self.work_left is not None:
            return self.work_left / self.work_rate
        return self.pending / self.rate if self.rate else None

    @property
    def openings_eta_seconds(self) -> float | None:
        """Seconds until every file's opening has a deep vector (the openings go first),
        measured as :attr:`eta_seconds` is; None when unknown, 0 when they all have one."""
        if not self.openings_pending:
            return 0.0
        if self.work_rate and self.openings_work_left is not None:
            return self.openings_work_left / self.work_rate
        return self.openings_pending / self.rate if self.rate else None

    @property
    def rate_left(self) -> float | None:
        """Chunks a second the rest goes at on average by :attr:`eta_seconds` (the measured
        chunk rate when that is all there is): what ``status`` says the estimate assumes."""
        eta = self.eta_seconds
        return self.pending / eta if eta else self.rate

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self), "eta_seconds": self.eta_seconds, "openings_eta_seconds": self.openings_eta_seconds,
            "rate_left": self.rate_left,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class DeepProgress:
    """A progress event of the deep job: chunks with a deep vector of all chunks, and the
    job's rate so far."""

    done: int
    total: int
    rate: float | None = None
    seconds_left: float | None = None
    """The job's estimate from the work left at its work rate (None: not measured yet)."""


@dataclass(frozen=True, slots=True)
class DeepReport:
    """What one run of the deep job did."""

    embedded: int = 0
    """Texts embedded by this run."""
    done: int = 0
    """Chunks with a deep vector when it ended."""
    total: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    """Stopped (Ctrl-C, a time budget, a limit) before every chunk had a deep vector."""
    reset: bool = False
    """The stored deep vectors came from another model and were dropped first."""
    pruned: int = 0
    """Deep vectors no chunk used any more, deleted."""

    @property
    def complete(self) -> bool:
        return self.done >= self.total

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "complete": self.complete}


@dataclass(frozen=True, slots=True)
class DeepQueueEntry:
    """One index in the background worker's queue (``index/deep_queue.py``)."""

    vault: str
    index: str
    """The index file, or ``URL (collection NAME)`` for PostgreSQL."""
    deep: DeepStatus | None = None
    """Its coverage and state; None when it cannot be opened now (``problem`` says why)."""
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"vault": self.vault, "index": self.index, "problem": self.problem,
                "deep": None if self.deep is None else self.deep.to_dict()}  # fmt: skip


@dataclass(frozen=True, slots=True)
class DeepWorkerStatus:
    """The background worker that serves every queued index, for ``vaultseek status``."""

    state: Literal["running", "paused", "stopped"]
    """``stopped``: no worker runs (it exits when nothing is left; the next ``index`` starts
    one)."""
    pid: int | None
    entries: tuple[DeepQueueEntry, ...]
    log: str
    """Where the worker writes what it did: indexes finished or dropped, errors."""
    threads: int | None = None
    """The running worker's engine threads (``deep_threads``; None: none runs)."""

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "pid": self.pid, "threads": self.threads, "log": self.log,
                "indexes": [entry.to_dict() for entry in self.entries]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress event the core emits through a callback; the CLI draws it."""

    phase: ProgressPhase
    done: int
    total: int
    path: str = ""


MapRole = Literal["core", "member", "bridge", "island"]


@dataclass(frozen=True, slots=True)
class MapRequest:
    """What map to draw: the whole vault (kept in the index and updated as notes change), or
    the notes inside ``filters`` (computed fresh); ``rebuild`` lays the kept map out anew;
    ``clusters`` fixes how many clusters (default: grows with the vault)."""

    filters: Any = None
    """A :class:`~vaultseek.records.SearchFilter`, or None for every note."""
    rebuild: bool = False
    clusters: int | None = None


@dataclass(frozen=True, slots=True)
class MapPoint:
    """One note on the map; ``x`` and ``y`` lie in [0, 1]."""

    path: str
    title: str | None
    x: float
    y: float
    cluster: int
    folder: str
    tags: tuple[str, ...]
    modified: float | None
    links: int
    """Resolved links in and out."""
    role: MapRole
    bridge: float
    """0–1: how evenly its nearest notes split between its cluster and another."""
    density: float
    """0–1: how close its nearest notes are, as a percentile of all notes."""

    def to_dict(self) -> dict[str, Any]:
        # Said out, not asdict(): a map has 20k of them, and asdict deep-copies every field.
        return {
            "path": self.path, "title": self.title, "x": self.x, "y": self.y, "cluster": self.cluster,
            "folder": self.folder, "tags": list(self.tags), "modified": self.modified, "links": self.links,
            "role": self.role, "bridge": self.bridge, "density": self.density,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class MapCluster:
    """A region of the map, named by its distinctive words and most central notes."""

    id: int
    label: str
    words: tuple[str, ...]
    central: tuple[str, ...]
    size: int
    x: float
    y: float
    density: float
    thin: bool

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "words": list(self.words), "central": list(self.central)}


@dataclass(frozen=True, slots=True)
class Passage:
    """A chunk quoted as the reason two notes are close."""

    chunk_id: int
    heading: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class MissingLink:
    """Two notes close in meaning that do not link to each other; ``link`` is what to paste
    into ``source`` to link ``target``."""

    source: str
    target: str
    similarity: float
    source_passage: Passage | None
    target_passage: Passage | None
    link: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class VaultMap:
    """The map of a vault or of a scope (``vaultseek map``)."""

    space: str
    """Which vectors placed the notes: ``static`` or ``static+deep``."""
    deep_share: float
    built_at: float
    updated_at: float
    notes: tuple[MapPoint, ...]
    clusters: tuple[MapCluster, ...]
    missing_links: tuple[MissingLink, ...]
    notices: tuple[str, ...] = ()
    how: Literal["kept", "updated", "built", "scoped"] = "kept"
    """Whether the kept map served as it was, was updated for changed notes, was built anew,
    or (with filters) was computed for the scope alone."""
    moved: int = 0
    """Notes placed anew by this call (all of them when built)."""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "space": self.space, "deep_share": self.deep_share, "built_at": self.built_at,
            "updated_at": self.updated_at, "how": self.how, "moved": self.moved, "seconds": self.seconds,
            "notes": [n.to_dict() for n in self.notes], "clusters": [c.to_dict() for c in self.clusters],
            "missing_links": [m.to_dict() for m in self.missing_links], "notices": list(self.notices),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class MapNeighbour:
    """A note near another on the map."""

    path: str
    title: str | None
    similarity: float
    """Cosine on the map's own note vectors (both models, centred): it orders the list; read
    :attr:`close` to know whether the two notes are alike."""
    cluster: int
    linked: bool
    close: bool | None = None
    """As :attr:`RelatedNote.close`: related by links, or close in meaning by the best model
    that compared the two notes; False when it is only among the nearest; None when no model
    with a line compared them."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class MapNote:
    """A note's place on the map: its cluster, role, nearest notes and missing links."""

    path: str
    title: str | None
    cluster: MapCluster
    role: MapRole
    bridge: float
    density: float
    neighbours: tuple[MapNeighbour, ...]
    missing_links: tuple[MissingLink, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "title": self.title,
            "cluster": {"id": self.cluster.id, "label": self.cluster.label},
            "role": self.role, "bridge": self.bridge, "density": self.density,
            "neighbours": [n.to_dict() for n in self.neighbours],
            "missing_links": [m.to_dict() for m in self.missing_links],
        }  # fmt: skip
