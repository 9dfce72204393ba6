"""Value types shared by every layer: what a note becomes, what a search returns.

They are plain frozen dataclasses with no behaviour beyond conversion to JSON-ready dicts, so
any surface (CLI, MCP, hooks, HTTP) can render them without knowing how they were produced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

SearchMode = Literal["hybrid", "bm25", "vector", "deep"]
SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "bm25", "vector", "deep")
"""``vector`` is the fast static model's list, ``deep`` the deep tier's alone (chunks without a
deep vector yet are not in it); ``hybrid`` fuses BM25, the static list and the deep list."""

SearchView = Literal["notes", "chunks"]
SEARCH_VIEWS: tuple[SearchView, ...] = ("notes", "chunks")
"""``notes``: one result per file, with its best sections (``search/grouping.py``); ``chunks``:
every ranked section on its own, so one note may take several places."""


LinkSyntax = Literal["wiki", "markdown"]


@dataclass(frozen=True, slots=True)
class Link:
    """A link or embed found in a note: ``[[target#heading|alias]]`` / ``![[target]]``, or a
    markdown link to a local file, ``[alias](target#heading)`` / ``![alias](target)``."""

    target: str
    heading: str | None = None
    alias: str | None = None
    embed: bool = False
    syntax: LinkSyntax = "wiki"
    """``markdown`` links are URL-decoded and resolved relative to the linking note first."""


@dataclass(frozen=True, slots=True)
class Note:
    """A parsed markdown note: metadata plus the body the chunker splits."""

    title: str
    body: str
    """The note text after the frontmatter, with Obsidian ``%% comments %%`` removed."""
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    type: str | None = None
    links: tuple[Link, ...] = ()
    frontmatter: dict[str, Any] = field(default_factory=dict)
    frontmatter_error: str | None = None
    """Why the frontmatter could not be parsed, when it could not (the note is still indexed)."""


@dataclass(frozen=True, slots=True)
class Location:
    """Where in a document a chunk comes from, precise enough to open the spot: a PDF page,
    a slide, a spreadsheet sheet and its rows (1-based, as the application shows them).
    Notes have none: their ``section`` already says where to look."""

    page: int | None = None
    slide: int | None = None
    sheet: str | None = None
    row_start: int | None = None
    row_end: int | None = None
    page_end: int | None = None
    """The last page of a chunk that runs over pages (``pp. 3–4``); None for one page."""

    def to_dict(self) -> dict[str, Any]:
        """Only the parts that are set, e.g. ``{"page": 3}``."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Location:
        keys = ("page", "slide", "sheet", "row_start", "row_end", "page_end")
        return cls(**{k: data[k] for k in keys if k in data})

    def words(self, *, short: bool = True) -> list[str]:
        """The location's parts in words: short for display (``p. 3``, ``slide 4``, ``Q1``,
        ``rows 2–21``), long for a chunk's heading context (``page 3``, ``sheet Q1``)."""
        parts = []
        if self.page is not None and self.page_end is not None and self.page_end != self.page:
            parts.append(f"{'pp.' if short else 'pages'} {self.page}–{self.page_end}")
        elif self.page is not None:
            parts.append(f"{'p.' if short else 'page'} {self.page}")
        if self.slide is not None:
            parts.append(f"slide {self.slide}")
        if self.sheet is not None:
            parts.append(self.sheet if short else f"sheet {self.sheet}")
        if self.row_start is not None:
            end = self.row_end if self.row_end is not None else self.row_start
            parts.append(f"rows {self.row_start}–{end}" if end != self.row_start or not short else f"row {end}")
        return parts

    def label(self) -> str:
        """Short human form: ``p. 3``, ``slide 4``, ``Q1 rows 2–21``."""
        return " ".join(self.words())


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """One searchable piece of a note, before it is stored."""

    section: str
    """The heading of the section the chunk comes from ("" for text before the first heading)."""
    heading_context: str
    """"Note title | type | tag1, tag2 | Note > Section > Subsection": what the chunk is about."""
    text: str
    """The chunk's readable text (links rendered, comments removed)."""
    position: int
    """0-based order of the chunk within its note."""
    location: Location | None = None
    """Page, slide or sheet rows for a document chunk; None for notes."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One ranked hit. The ranks are the fusion's own record of why it ranked where it did."""

    path: str
    """Relative to the vault, with forward slashes."""
    section: str
    heading_context: str
    snippet: str
    score: float
    bm25_rank: int | None
    """1-based rank in the lexical list, None when the chunk was not in it."""
    vec_rank: int | None
    """1-based rank in the vector list, None when the chunk was not in it."""
    chunk_id: int
    text: str = field(repr=False, default="")
    location: Location | None = None
    """Page / slide / sheet and rows for a document hit; None for a note."""
    signals: Mapping[str, float] = field(default_factory=dict)
    """What each post-fusion signal that ran did to the score (``title``: the amount added,
    ``recency``: the factor applied); empty when none ran."""
    deep_rank: int | None = None
    """1-based rank in the deep tier's list; None when the chunk was not in it or the search
    had no deep list."""
    relevance: float | None = None
    """The probability that the hit answers the query (``search/relevance.py``), calibrated
    on judged prompts: 0.5 and above counts as relevant; None when it was not judged."""

    @property
    def label(self) -> str:
        """Where in its file the hit is, in words: a document's location (``p. 3``,
        ``Q1 rows 2–21``) or a note's section."""
        return self.location.label() if self.location is not None else self.section

    def to_dict(self) -> dict[str, Any]:
        """The result as the search contract's JSON (``vaultseek.contract``): every field,
        always present (``null`` / ``{}`` when empty), the score rounded to 6 places."""
        return {
            "path": self.path,
            "section": self.section,
            "heading_context": self.heading_context,
            "label": self.label,
            "snippet": self.snippet,
            "score": round(self.score, 6),
            "bm25_rank": self.bm25_rank,
            "vec_rank": self.vec_rank,
            "deep_rank": self.deep_rank,
            "relevance": None if self.relevance is None else round(self.relevance, 4),
            "signals": dict(self.signals),
            "location": self.location.to_dict() if self.location is not None else None,
            "chunk_id": self.chunk_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchResult:
        """The result :meth:`to_dict` wrote (``text`` is not in it)."""
        location = data.get("location")
        return cls(
            path=data["path"], section=data["section"], heading_context=data["heading_context"],
            snippet=data["snippet"], score=data["score"], bm25_rank=data["bm25_rank"],
            vec_rank=data["vec_rank"], chunk_id=data["chunk_id"],
            location=Location.from_dict(location) if location else None,
            signals=dict(data.get("signals") or {}), deep_rank=data.get("deep_rank"),
            relevance=data.get("relevance"),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class NoteResult:
    """One file of the note view: its best sections, best first (always at least one). A
    note ranks by its best section's score plus a share of its next two
    (``search.grouping.note_score``)."""

    path: str
    """Relative to the vault, with forward slashes."""
    title: str
    """The file's title as indexed: a note's frontmatter ``title``, a document's own title,
    else the file's name without its suffix."""
    sections: tuple[SearchResult, ...]
    ranked: float | None = None
    """The score the note ranks by (None: its best section's)."""

    @property
    def best(self) -> SearchResult:
        """The note's best section."""
        return self.sections[0]

    @property
    def score(self) -> float:
        """What the note ranks by: :attr:`ranked`, else its best section's score."""
        return self.sections[0].score if self.ranked is None else self.ranked

    def to_dict(self) -> dict[str, Any]:
        """The note as the search contract's JSON: ``path``, ``title``, ``score`` (what it
        ranks by), ``relevance`` (its best section's) and ``sections``, each a chunk result as
        the chunk view gives it, best first."""
        relevance = self.sections[0].relevance if self.sections else None
        return {
            "path": self.path,
            "title": self.title,
            "score": round(self.score, 6),
            "relevance": None if relevance is None else round(relevance, 4),
            "sections": [s.to_dict() for s in self.sections],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NoteResult:
        """The note :meth:`to_dict` wrote."""
        return cls(data["path"], data["title"], tuple(SearchResult.from_dict(s) for s in data["sections"]), data.get("score"))


ComparisonOp = Literal["<", "<=", ">", ">=", "!="]
COMPARISON_OPS: tuple[ComparisonOp, ...] = ("<", "<=", ">", ">=", "!=")


@dataclass(frozen=True, slots=True)
class FieldComparison:
    """One frontmatter comparison, ``key OP value`` (``priority<3``, ``created>=2024-01``,
    ``status!=done``); :func:`vaultseek.search.filters.parse_where` reads them and states the rules.

    The value is resolved once, when the filter is read, into the number and/or the point in
    time it stands for, so an age such as ``30d`` means one moment for the whole search (and
    for every list of it), as ``modified_after`` does."""

    key: str
    op: ComparisonOp
    value: str
    """The value as written back by :meth:`SearchFilter.to_dict`: a number as frontmatter
    numbers are stored, a point in time as an ISO time with its offset (so an age written
    back does not move), a year as its four digits; for ``!=`` the value it must not equal."""
    number: float | None = None
    """The value as a number, when it is one."""
    moment: datetime | None = None
    """The value as a point in time, when it is one (a bare year is both)."""

    def __str__(self) -> str:
        return f"{self.key}{self.op}{self.value}"


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """Which files a search may return: applied before ranking, so the top k are all from
    inside the scope. Fields combine with AND, the values of one field with OR; ``None``
    means "no restriction" while an empty tuple matches nothing (an empty category).
    :func:`vaultseek.search.filters.parse_filter` builds one from the JSON shape users write.

    Request-local by design: it travels with one ``search`` call and is never stored on
    the index, so concurrent searches under different scopes cannot mix."""

    paths: tuple[str, ...] | None = None
    """Exact vault-relative paths."""
    folders: tuple[str, ...] | None = None
    """Vault-relative folders; their subfolders are included."""
    tags: tuple[str, ...] | None = None
    """Tags without ``#``, case-insensitive; a nested tag ``a/b`` matches the filter ``a``."""
    kinds: tuple[str, ...] | None = None
    """``note`` or a document type (``pdf``, ``docx``, …)."""
    where: tuple[tuple[str, str | None], ...] | None = None
    """Frontmatter conditions ``(key, value)``; value None: the key is set. Conditions on one
    key are alternatives, different keys must all hold (matching rules: ``filters``)."""
    comparisons: tuple[FieldComparison, ...] | None = None
    """Frontmatter comparisons (``priority<3``); every one must hold, so two on one key make
    a range. Written in the JSON shape's ``where`` list beside the ``(key, value)`` pairs."""
    modified_after: datetime | None = None
    """Files modified at or after this time."""
    modified_before: datetime | None = None
    """Files modified before this time."""
    path_contains: tuple[str, ...] | None = None
    """Text the vault-relative path holds (``path:`` in a query), ASCII letters compared
    without case."""
    name_contains: tuple[str, ...] | None = None
    """Text the file name holds (``file:`` in a query), ASCII letters compared without case."""
    inside: SearchFilter | None = None
    """A further filter every file must be inside as well: how the filter a query's own
    operators ask for (``tag:x``) narrows a request's ``filters``, field by field as the two
    would alone (``search.syntax``). Made while searching, never part of the JSON shape."""

    @property
    def unrestricted(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))

    def within(self, other: SearchFilter | None) -> SearchFilter:
        """The files inside both this filter and ``other`` (None: this filter)."""
        if other is None or other.unrestricted:
            return self
        if self.unrestricted:
            return other
        return replace(self, inside=other if self.inside is None else self.inside.within(other))

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape :func:`~vaultseek.search.filters.parse_filter` reads (fields that are
        set; :attr:`inside` is not written)."""
        out: dict[str, Any] = {}
        for name in ("paths", "folders", "tags", "kinds", "path_contains", "name_contains"):
            values = getattr(self, name)
            if values is not None:
                out[name] = list(values)
        if self.where is not None or self.comparisons is not None:
            out["where"] = [key if value is None else f"{key}:{value}" for key, value in self.where or ()]
            out["where"] += [str(comparison) for comparison in self.comparisons or ()]
        for name in ("modified_after", "modified_before"):
            moment = getattr(self, name)
            if moment is not None:
                out[name] = moment.isoformat()
        return out


@dataclass(frozen=True, slots=True)
class QueryParse:
    """What a search read from the operators in its query (``search.syntax``), shown by every
    surface so that what was searched is never a guess."""

    text: str
    """The words searched: the query without its operators, phrases unquoted, each
    ``prefix*`` as the index words it was embedded as."""
    required: tuple[str, ...] = ()
    """The quoted phrases every result's chunk holds."""
    excluded: tuple[str, ...] = ()
    """What no result's note holds: words, phrases, ``prefix*``."""
    prefixes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Each ``prefix*`` and the commonest index words starting with it (empty: none)."""
    fields: tuple[str, ...] = ()
    """The field operators as typed (``tag:work``, ``after:2w``, ``[status:done]``)."""
    filters: Mapping[str, Any] = field(default_factory=dict)
    """The filter those fields make, in the JSON shape of a request's ``filters`` (relative
    dates as the moments they were read as); it narrows the request's own filters."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "required": list(self.required),
            "excluded": list(self.excluded),
            "prefixes": {prefix: list(words) for prefix, words in self.prefixes.items()},
            "fields": list(self.fields),
            "filters": dict(self.filters),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QueryParse:
        return cls(
            data["text"], tuple(data.get("required") or ()), tuple(data.get("excluded") or ()),
            {prefix: tuple(words) for prefix, words in (data.get("prefixes") or {}).items()},
            tuple(data.get("fields") or ()), dict(data.get("filters") or {}),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Reranking:
    """What the reranker did to one search (``search/rerank.py``)."""

    reranker: str
    """Which one: ``llama:MODEL``, ``tei`` or ``chat:MODEL``."""
    candidates: int
    """How many of the hybrid's best sections it re-scored."""
    ms: float
    """The reranker's wall time, in milliseconds."""

    def to_dict(self) -> dict[str, Any]:
        return {"reranker": self.reranker, "candidates": self.candidates, "ms": round(self.ms, 1)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reranking:
        return cls(data["reranker"], data["candidates"], data["ms"])


@dataclass(frozen=True, slots=True)
class Expansion:
    """What query expansion searched besides the query (``search/expansion.py``)."""

    model: str
    """The chat model that wrote the sub-queries."""
    lexical: tuple[str, ...]
    """Keyword sub-queries, searched with BM25."""
    semantic: tuple[str, ...]
    """Rephrasings, searched by meaning (the vector lists)."""
    passage: str | None
    """A hypothetical answer passage, searched by meaning; None when the model wrote none."""
    language: str | None
    """The language the model was asked to write in (the vault's), None when not known."""
    cached: bool
    """Read from the cache rather than asked for."""
    ms: float
    """The time the expansion took (the model, or the cache), in milliseconds."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model, "lexical": list(self.lexical), "semantic": list(self.semantic),
            "passage": self.passage, "language": self.language, "cached": self.cached, "ms": round(self.ms, 1),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Expansion:
        return cls(
            data["model"], tuple(data.get("lexical") or ()), tuple(data.get("semantic") or ()), data.get("passage"),
            data.get("language"), bool(data.get("cached")), data.get("ms") or 0.0,
        )  # fmt: skip


def searched_words(alternatives: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """What a search took for the query's missing words (``SearchResponse.alternatives``) as
    words a text holds, to mark or cut snippets around: a form's start without its ``*``."""
    return tuple(word.rstrip("*") for found in alternatives.values() for word in found)


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """Results of one query plus anything the user should be told about how they were made."""

    query: str
    mode: SearchMode
    results: tuple[SearchResult, ...]
    """The ranked sections, best first: in the chunk view every one; in the note view each
    note's best section (``notes[i].best``), one per note."""
    notices: tuple[str, ...] = ()
    """E.g. "vector search unavailable (…); showing BM25 results"."""
    intent: str | None = None
    """``identifier`` or ``question`` when the intent option shifted the list weights."""
    view: SearchView = "chunks"
    notes: tuple[NoteResult, ...] = ()
    """The note view's notes, best first, each with its sections (empty in the chunk view)."""
    no_match: bool = False
    """The relevance judgment finds nothing here that answers the query
    (``search/relevance.py``): the results are only the closest the index holds, and a
    notice says so."""
    parsed: QueryParse | None = None
    """What the query's operators asked for; None when it used none (or syntax was off)."""
    reranking: Reranking | None = None
    """What the reranker did; None when the search was not reranked (off, or it failed: then
    a notice says why)."""
    expansion: Expansion | None = None
    """What query expansion searched besides the query; None when it did not run."""
    alternatives: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Each query word no chunk holds, as typed, and what was searched in its place or beside
    it (``search/vocabulary.py``): a typo's correction (``{"obsidain": ["obsidian"]}``), the
    start its other forms share (``{"komprimieren": ["komprimi*"]}``), the vault's word of like
    meaning (``{"nap": ["sleeping"]}``). Empty when every word was searched as typed. Surfaces
    mark these words in snippets beside the query's own."""

    @property
    def alternative_words(self) -> tuple[str, ...]:
        """The words of :attr:`alternatives` as text holds them (:func:`searched_words`)."""
        return searched_words(self.alternatives)

    def to_dict(self) -> dict[str, Any]:
        """The response as the search contract's JSON, the one every surface answers with
        (the CLI's ``--json``, the daemon, MCP, HTTP): every field always present. ``results``
        holds the view's items: notes (:meth:`NoteResult.to_dict`) or sections
        (:meth:`SearchResult.to_dict`)."""
        items = self.notes if self.view == "notes" else self.results
        return {
            "query": self.query,
            "mode": self.mode,
            "view": self.view,
            "results": [r.to_dict() for r in items],
            "notices": list(self.notices),
            "intent": self.intent,
            "no_match": self.no_match,
            "parsed": self.parsed.to_dict() if self.parsed is not None else None,
            "reranking": self.reranking.to_dict() if self.reranking is not None else None,
            "expansion": self.expansion.to_dict() if self.expansion is not None else None,
            "alternatives": {word: list(found) for word, found in self.alternatives.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchResponse:
        """The response :meth:`to_dict` wrote (e.g. a daemon's answer, to render it); one
        without a ``view`` is a chunk view."""
        notices, intent, no_match = tuple(data.get("notices") or ()), data.get("intent"), bool(data.get("no_match"))
        parsed = QueryParse.from_dict(data["parsed"]) if data.get("parsed") else None
        reranking = Reranking.from_dict(data["reranking"]) if data.get("reranking") else None
        expansion = Expansion.from_dict(data["expansion"]) if data.get("expansion") else None
        alternatives = {word: tuple(found) for word, found in (data.get("alternatives") or {}).items()}
        if data.get("view") == "notes":
            notes = tuple(NoteResult.from_dict(n) for n in data["results"])
            best = tuple(n.best for n in notes)
            return cls(
                data["query"], data["mode"], best, notices, intent=intent, view="notes", notes=notes, no_match=no_match,
                parsed=parsed, reranking=reranking, expansion=expansion, alternatives=alternatives,
            )  # fmt: skip
        return cls(
            data["query"], data["mode"], tuple(SearchResult.from_dict(r) for r in data["results"]),
            notices, intent=intent, no_match=no_match, parsed=parsed, reranking=reranking, expansion=expansion,
            alternatives=alternatives,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file the indexer could not take, and why."""

    path: str
    reason: str


LinkVia = Literal["self", "path", "name", "alias", "none"]
"""How a link found its file: ``self`` (``[[#Heading]]``), ``path`` (a path from the vault
root or the linking note), ``name`` (a file name, maybe with folders), ``alias`` (a
frontmatter alias); ``none``: dangling."""

LinkDirection = Literal["to", "from", "both"]
"""How two related notes link directly: ``to`` (the note links to the other), ``from`` (the
other links to the note), or ``both``."""

ProgressPhase = Literal["scan", "index", "extract", "ocr", "embed", "delete", "done"]
"""``extract`` and ``ocr`` report pages of one document: ``done`` is the page being worked
on, ``total`` the document's pages, ``path`` the document."""

DeepState = Literal["complete", "running", "queued", "paused", "waiting", "unavailable"]

if TYPE_CHECKING:
    from .reports import DeepProgress as DeepProgress
    from .reports import DeepQueueEntry as DeepQueueEntry
    from .reports import DeepReport as DeepReport
    from .reports import DeepStatus as DeepStatus
    from .reports import DeepWorkerStatus as DeepWorkerStatus
    from .reports import IndexStatus as IndexStatus
    from .reports import NoteLinks as NoteLinks
    from .reports import Progress as Progress
    from .reports import RelatedNote as RelatedNote
    from .reports import RelatedNotes as RelatedNotes
    from .reports import ResolvedLink as ResolvedLink
    from .reports import SyncReport as SyncReport

_REPORTS = frozenset({
    "DeepProgress", "DeepQueueEntry", "DeepReport", "DeepStatus", "DeepWorkerStatus", "IndexStatus",
    "NoteLinks", "Progress", "RelatedNote", "RelatedNotes", "ResolvedLink", "SyncReport",
})  # fmt: skip


def __getattr__(name: str) -> Any:
    """The report types (``reports.py``) by this module's name for them, imported on first use:
    a search builds none of them."""
    if name in _REPORTS:
        from . import reports

        return getattr(reports, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
