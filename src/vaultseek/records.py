"""Value types shared by every layer: what a note becomes, what a search returns.

They are plain frozen dataclasses with no behaviour beyond conversion to JSON-ready dicts, so
any surface (CLI, MCP, hooks, HTTP) can render them without knowing how they were produced.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

SearchMode = Literal["hybrid", "bm25", "vector"]
SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "bm25", "vector")


@dataclass(frozen=True, slots=True)
class Link:
    """A wiki link or embed found in a note: ``[[target#heading|alias]]`` / ``![[target]]``."""

    target: str
    heading: str | None = None
    alias: str | None = None
    embed: bool = False


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

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape of a result (``text`` and ``chunk_id`` stay internal)."""
        return {
            "path": self.path,
            "section": self.section,
            "heading_context": self.heading_context,
            "snippet": self.snippet,
            "score": round(self.score, 6),
            "bm25_rank": self.bm25_rank,
            "vec_rank": self.vec_rank,
        }


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """Results of one query plus anything the user should be told about how they were made."""

    query: str
    mode: SearchMode
    results: tuple[SearchResult, ...]
    notices: tuple[str, ...] = ()
    """E.g. "vector search unavailable (…); showing BM25 results"."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "results": [r.to_dict() for r in self.results],
        }
        if self.notices:
            out["notices"] = list(self.notices)
        return out


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file the indexer could not take, and why."""

    path: str
    reason: str


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


ProgressPhase = Literal["scan", "index", "embed", "delete", "done"]


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress event the core emits through a callback; the CLI draws it."""

    phase: ProgressPhase
    done: int
    total: int
    path: str = ""
