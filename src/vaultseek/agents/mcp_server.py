"""The MCP server: the one module that imports ``mcp`` (the 2.x SDK, ``MCPServer``).

``vaultseek mcp`` serves one index over stdio (or streamable HTTP with ``--http``) with six
tools — ``search``, ``get_note``, ``get_chunk``, ``links``, ``related``, ``status`` — built by
:func:`build_mcp_server` around an open :class:`Index`; nothing is registered at import. The
SDK runs plain tool functions on worker threads, so every call takes a lock: an ``Index`` is
used by one thread at a time. Results are compact dicts with vault-relative paths; errors are
vaultseek's own messages and hints, raised as tool errors the model can read.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from typing_extensions import TypedDict  # the SDK's pydantic wants this one on Python 3.11

from .. import __version__
from ..engine import Index
from ..errors import VaultseekError

INSTRUCTIONS = """\
Search the user's notes and documents (a local markdown vault, with PDFs, Office files and the
like beside it) before answering questions about their projects, decisions, conventions or
past work. `search` returns the best-matching sections with their path, heading and a short
excerpt; read a whole note with `get_note(path)` or one section with `get_chunk(id)` only when
the excerpt is not enough."""

SEARCH_DESCRIPTION = """\
Search the user's notes and documents. Hybrid search by default: exact words and identifiers
(BM25) plus meaning (embeddings), so both `_rrf_fuse` and "how do we rotate tokens" work.
Returns up to k sections, best first, each with `path` (vault-relative), `section`,
`heading_context` (note title | type | tags | heading trail), a short `snippet`, `score` and
`id` (pass it to get_chunk for the whole section); a document's sections also carry `location`
(page, slide, or sheet and rows). mode: "hybrid" (default), "bm25" for exact terms, "vector"
for paraphrases (the fast static model), "deep" for the deep tier's multilingual model alone. max_tokens caps the size of the whole answer (about 4 characters a token).
filters narrow the search before ranking (fields AND, values of one field OR): folders
(["work"], subfolders included), tags (["project"] also takes #project/alpha), kinds (["note",
"pdf"]), where (frontmatter, ["status:done", "priority=1"]; a bare key: the key is set;
comparisons of numbers and dates, each of which must hold: "priority<3", "rating>=4.5",
"created>=2024-01", "due<2026-02-01", "created>=30d" (the last 30 days), "status!=done"),
modified_after / modified_before ("2026-01-31", "7d", "2w"; after inclusive, before exclusive).
title_match puts a note whose title or alias is the query first; recency_half_life_days favours
recently modified files (e.g. 30); intent leans on exact words for identifiers and on meaning
for long questions; term_match (0 to 1; 0: off; on at 0.3 unless configured) re-ranks the best
results by how well their words match the query's, letter by letter. Each defaults to the
server's configuration."""


class SearchFilters(TypedDict, total=False, closed=True):
    """The filter object of the search tool (rules: ``filters.py``); an unknown field is an
    error, not silently ignored."""

    folders: list[str] | str
    tags: list[str] | str
    kinds: list[str] | str
    where: list[str] | str
    modified_after: str
    modified_before: str
    paths: list[str] | str


def _search_result(hit: Any) -> dict[str, Any]:
    return {
        "id": hit.chunk_id,
        "path": hit.path,
        "section": hit.section,
        "heading_context": hit.heading_context,
        "snippet": hit.snippet,
        "score": round(hit.score, 4),
        **_location(hit.location),
        **({"signals": dict(hit.signals)} if hit.signals else {}),
    }


def _chunk(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "path": row.path,
        "position": row.position,
        "section": row.section,
        "heading_context": row.heading_context,
        "text": row.text,
        **_location(row.location),
    }


def _location(location: Any) -> dict[str, Any]:
    """``{"location": {"page": 3}}`` for a document chunk; nothing for a note's."""
    return {"location": location.to_dict()} if location is not None else {}


def build_mcp_server(index: Index) -> MCPServer:
    """An MCP server whose tools answer from ``index`` (which the caller opens and closes)."""
    server: MCPServer = MCPServer(
        name="vaultseek", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    lock = threading.Lock()

    def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            with lock:
                return fn(*args, **kwargs)
        except VaultseekError as exc:
            raise ToolError(exc.message + (f" ({exc.hint})" if exc.hint else "")) from None

    @server.tool(description=SEARCH_DESCRIPTION)
    def search(
        query: str,
        k: int = 8,
        mode: Literal["hybrid", "bm25", "vector", "deep"] = "hybrid",
        max_tokens: int | None = None,
        filters: SearchFilters | None = None,
        title_match: bool | None = None,
        recency_half_life_days: float | None = None,
        intent: bool | None = None,
        term_match: float | None = None,
    ) -> dict[str, Any]:
        if k < 1 or k > 100:
            raise ToolError("k must be between 1 and 100")
        if max_tokens is not None and max_tokens < 1:
            raise ToolError("max_tokens must be at least 1")
        response = call(
            index.search, query, mode=mode, k=k, max_tokens=max_tokens, scope=dict(filters or {}),
            title_match=title_match, recency_half_life_days=recency_half_life_days, intent=intent,
            term_match=term_match,
        )  # fmt: skip
        out: dict[str, Any] = {"query": query, "results": [_search_result(h) for h in response.results]}
        if response.notices:
            out["notices"] = list(response.notices)
        if response.intent:
            out["intent"] = response.intent
        return out

    @server.tool(
        description="Read a whole note by its vault-relative path (as returned by search): every "
        "section in order with its heading context. section, if given, keeps only sections whose "
        "heading contains it (case-insensitive)."
    )
    def get_note(path: str, section: str | None = None) -> dict[str, Any]:
        rows = call(index.get_note, path)
        if section:
            wanted = section.casefold()
            rows = [r for r in rows if wanted in r.section.casefold()]
        return {"path": path, "chunks": [_chunk(r) for r in rows]}

    @server.tool(
        description="Read one section of a note by the id a search result gave, with its path and "
        "heading context (ids change when the note is edited: search again if one is unknown)."
    )
    def get_chunk(id: int) -> dict[str, Any]:
        return _chunk(call(index.get_chunk, id))

    @server.tool(
        description="A note's links: `outgoing` (each with the `path` it resolves to, or null when "
        "no indexed file matches, and for a link to a #heading `heading_found`: false when that note "
        "has no such heading) and `backlinks` (the notes that link to it). note: a vault-relative "
        "path as search returns, or a note's name as a [[link]] would write it."
    )
    def links(note: str) -> dict[str, Any]:
        return call(index.links, note).to_dict()

    @server.tool(
        description="Notes related to a note, best first: linked with it (directly, or through notes "
        "both link to or are linked from — `shared`) and similar in meaning (`similarity`). Use it to "
        "explore around a note a search found. note: a path or a note's name; k: how many (1–50)."
    )
    def related(note: str, k: int = 10) -> dict[str, Any]:
        if k < 1 or k > 50:
            raise ToolError("k must be between 1 and 50")
        return call(index.related, note, k=k).to_dict()

    @server.tool(
        description="What the index holds: vault folder, number of notes and sections, embedding "
        "model, when it was last indexed, and files that could not be indexed."
    )
    def status() -> dict[str, Any]:
        info = call(index.status)
        return {
            "vault": info.vault,
            "files": info.files,
            "chunks": info.chunks,
            "model": info.model,
            "last_indexed": info.last_indexed,
            "skipped": [{"path": s.path, "reason": s.reason} for s in info.skipped[:50]],
        }

    return server


def run_mcp_server(server: MCPServer, *, http: bool = False, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")
