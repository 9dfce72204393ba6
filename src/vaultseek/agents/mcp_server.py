"""The MCP server: the one module that imports ``mcp`` (the 2.x SDK, ``MCPServer``).

``vaultseek mcp`` serves one index over stdio (or streamable HTTP with ``--http``) with six
tools — ``search``, ``get_note``, ``get_chunk``, ``links``, ``related``, ``status`` — built by
:func:`build_mcp_server` around an open :class:`Index`; nothing is registered at import. The
SDK runs plain tool functions on worker threads, so every call takes a lock: an ``Index`` is
used by one thread at a time. Results are compact dicts with vault-relative paths; errors are
vaultseek's own messages and hints, raised as tool errors the model can read.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from .. import __version__
from ..contract import SearchRequest, request_schema
from ..engine import Index
from ..errors import MissingExtraError, VaultseekError

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.tools import Tool
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
    from pydantic import ConfigDict  # the SDK's own validation library
except ImportError as exc:  # installed without the mcp extra
    raise MissingExtraError.from_import(exc, "mcp", feature="the MCP server (vaultseek mcp)") from exc

INSTRUCTIONS = """\
Search the user's notes and documents (a local markdown vault, with PDFs, Office files and the
like beside it) before answering questions about their projects, decisions, conventions or
past work. `search` returns the best-matching sections with their path, heading and a short
excerpt; read a whole note with `get_note(path)` or one section with `get_chunk(chunk_id)` only
when the excerpt is not enough."""

SEARCH_DESCRIPTION = """\
Search the user's notes and documents. Hybrid search by default: exact words and identifiers
(BM25) plus meaning (embeddings), so both `_rrf_fuse` and "how do we rotate tokens" work.
Returns up to k sections (default 10, at most 100), best first, each with `path`
(vault-relative), `section`, `heading_context` (note title | type | tags | heading trail),
`label` (the section, or a document's page, slide or sheet rows), a short `snippet`, `score`,
its rank in each list (`bm25_rank`, `vec_rank`, `deep_rank`), `signals`, `location` (a
document's page, slide, or sheet and rows) and `chunk_id` (pass it to get_chunk for the whole
section). mode: "hybrid" (default), "bm25" for exact terms, "vector" for paraphrases (the fast
static model), "deep" for the deep tier's multilingual model alone. max_tokens caps the size of
the whole answer (about 4 characters a token).
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
server's configuration. An unknown field, or a value of the wrong type or out of range, is an
error that says which."""


class _SearchArguments(ArgModelBase):
    """The search tool's arguments, passed on whole and unchecked: the search contract
    (``SearchRequest.from_mapping``) checks them, so this tool refuses what every surface
    refuses — an unknown field included — in the same words. Its published input schema is
    the contract's (``request_schema``)."""

    model_config = ConfigDict(**ArgModelBase.model_config, extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def _chunk(row: Any) -> dict[str, Any]:
    return {
        "chunk_id": row.id,
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
    lock = threading.Lock()

    def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            with lock:
                return fn(*args, **kwargs)
        except VaultseekError as exc:
            raise ToolError(exc.message + (f" ({exc.hint})" if exc.hint else "")) from None

    def search(arguments: dict[str, Any]) -> dict[str, Any]:
        filters = arguments.get("filters")
        if isinstance(filters, str) and filters.lstrip().startswith("{"):
            # Some clients send an object argument as JSON text; read it as the object it is.
            try:
                arguments = {**arguments, "filters": json.loads(filters)}
            except ValueError:
                pass
        return call(lambda: index.search(SearchRequest.from_mapping(arguments)).to_dict())

    # Built by hand rather than by the decorator, which would type-check each argument (in
    # pydantic's words) and drop unknown ones: see _SearchArguments.
    search_tool = Tool.from_function(search, name="search", description=SEARCH_DESCRIPTION)
    search_tool.fn_metadata.arg_model = _SearchArguments
    search_tool.parameters = request_schema()
    server: MCPServer = MCPServer(
        name="vaultseek", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING", tools=[search_tool]
    )

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
        description="Read one section of a note by the chunk_id a search result gave, with its path "
        "and heading context (ids change when the note is edited: search again if one is unknown)."
    )
    def get_chunk(chunk_id: int) -> dict[str, Any]:
        return _chunk(call(index.get_chunk, chunk_id))

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
