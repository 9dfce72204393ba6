"""The MCP server: the one module that imports ``mcp`` (the 2.x SDK, ``MCPServer``).

``vaultseek mcp`` serves one index over stdio (or streamable HTTP with ``--http``) with nine
tools — ``search``, ``get_note``, ``get_chunk``, ``links``, ``related``, ``status``, and the
vault map's ``map_clusters``, ``map_note``, ``missing_links`` — built by
:func:`build_mcp_server` around an open :class:`Index`; nothing is registered at import. The
SDK runs plain tool functions on worker threads, so every call takes a lock: an ``Index`` is
used by one thread at a time. Each tool takes its arguments whole and checks them itself
(:class:`_RawArguments`), so a bad one is a one-line tool error naming it; each answers with
its data as structured content and the same JSON, compact, as text (:func:`_answer`); search
answers with :func:`lean_answer`, the search JSON without the ranking's bookkeeping. Paths are
vault-relative; errors are vaultseek's own messages and hints, raised as tool errors the model
can read.

Over stdio, a line longer than :data:`MAX_LINE_BYTES` is skipped unread (in 64 KB pieces) and
answered with a JSON-RPC error carrying the request's id where its first bytes show it; a line
that is not JSON, or not a JSON-RPC message, is answered with a JSON-RPC error too (the SDK's
transport would drop it without a word), and one holding a lone surrogate escape (half an
emoji) is passed on with it as ``?``, which the SDK's parser would also drop. A search's
query is capped by the search contract (``MAX_QUERY_CHARS``) like every surface's.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import IO, Any, BinaryIO, cast

from .. import __version__
from ..config import MCP_HTTP_PORT
from ..contract import SearchRequest, request_schema, shown
from ..engine import Index
from ..errors import MissingExtraError, QueryError, VaultseekError
from ..payload import encodable, load_json, shown_size
from ..reports import VaultMap

try:
    import anyio  # the SDK's async library
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.tools import Tool
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
    from mcp.server.stdio import stdio_server
    from mcp.types import (
        INVALID_REQUEST,
        PARSE_ERROR,
        CallToolResult,
        TextContent,
        jsonrpc_message_adapter,
    )
    from pydantic import ConfigDict  # the SDK's own validation library
except ImportError as exc:  # installed without the mcp extra
    raise MissingExtraError.from_import(exc, "mcp", feature="the MCP server (vaultseek mcp)") from exc

INSTRUCTIONS = """\
Search the user's notes and documents (a local markdown vault, with PDFs, Office files and the
like beside it) before answering questions about their projects, decisions, conventions or
past work. `search` returns the best-matching notes, each with its path, title and its best
sections (heading and a short excerpt); read a whole note with `get_note(path)` or one section
with `get_chunk(chunk_id)` only when the excerpts are not enough."""

SEARCH_DESCRIPTION = """\
Search the user's notes and documents. Hybrid search by default: exact words and identifiers
(BM25) plus meaning (embeddings), so both `_rrf_fuse` and "how do we rotate tokens" work.
Returns up to k notes (default 10, at most 100), best first, each once: `path`
(vault-relative), `title`, `relevance` and `sections`, its best 1 to 3 sections, best first (a
weak extra section is left out). A section has `section` (its heading), a short `snippet`,
`relevance` (the probability, 0 to 1, that it answers the query; 0.5 and up: likely),
`location` (a document's page, slide, or sheet and rows; absent for a note) and `chunk_id`
(pass it to get_chunk for the whole section). `no_match` true means nothing answers the query:
the results are only the closest the index holds, so say so rather than rely on them;
`notices` says what else the search changed or could not do. view: "notes" (default) or
"chunks": k sections as ranked, each with its `path`, several of one note possibly. mode: "hybrid" (default), "bm25" for exact terms, "vector" for paraphrases (the fast
static model), "deep" for the deep tier's multilingual model alone. max_tokens caps the size of
the whole answer (about 4 characters a token).
The query reads search operators: "exact phrase" (every result holds it), -word and -"a phrase"
(no result from a note that holds it; -x, one character, is a flag and stays text), prefix*
(words starting with it), tag:x or #x, path:x (text in the path), file:x (text in the file
name), kind:pdf, after:2w / before:2026-01 (modified), [key:value] / [key>3] (frontmatter);
quotes keep an operator as text ("-r"). The answer's `parsed` says what was read (null: no
operator). Pass syntax: false to search prose or a pasted prompt word for word.
filters narrow the search before ranking (fields AND, values of one field OR): folder
(["work"], subfolders included), tag (["project"] also takes #project/alpha), kind (["note",
"pdf"]; folders, tags and kinds are read too), where (frontmatter, ["status:done", "priority=1"]; a bare key: the key is set;
comparisons of numbers and dates, each of which must hold: "priority<3", "rating>=4.5",
"created>=2024-01", "due<2026-02-01", "created>=30d" (the last 30 days), "status!=done"),
modified_after / modified_before ("2026-01-31", "7d", "2w"; after inclusive, before exclusive),
path_contains / name_contains (text in the path / the file name).
title_match puts a note whose title or alias is the query first; recency_half_life_days favours
recently modified files (e.g. 30); intent leans on exact words for identifiers and on meaning
for long questions; term_match (0 to 1; 0: off; on at 0.3 unless configured) re-ranks the best
results by how well their words match the query's, letter by letter. Each defaults to the
server's configuration. An unknown field, or a value of the wrong type or out of range, is an
error that says which."""


class _RawArguments(ArgModelBase):
    """A tool's arguments, passed on whole and unchecked: each tool checks its own (the search
    tool through the search contract, ``SearchRequest.from_mapping``), so a wrong type, an
    out-of-range number or an unknown argument is refused in vaultseek's words — the words
    every surface uses — rather than in pydantic's, and nothing reaches the index unchecked.
    The published input schemas are written out below."""

    model_config = ConfigDict(**ArgModelBase.model_config, extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


MAX_ID = 2**63 - 1
"""The largest chunk id there can be (SQLite's and PostgreSQL's 64-bit integers)."""

_FILTER_ALIASES = {"kind": "kinds", "folder": "folders", "tag": "tags"}
"""Filter names as the CLI's flags (``--kind``) and the query operators (``kind:``) spell
them, read as the search request's own (``kinds``)."""


def _checked(tool: str, arguments: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` checked against a tool's input schema (``spec``: strings, whole numbers
    with bounds, optional ones defaulted); raises ToolError naming the argument."""
    properties = spec["properties"]
    unknown = sorted(str(key) for key in arguments if key not in properties)
    if unknown:
        takes = ", ".join(properties) or "no arguments"
        raise ToolError(f"{tool} has no argument {', '.join(unknown)} (it takes {takes})")
    out: dict[str, Any] = {}
    for name, rule in properties.items():
        value = arguments.get(name)
        if value is None:
            if name in spec.get("required", ()):
                raise ToolError(f'{tool} needs "{name}" ({rule["description"]})')
            out[name] = rule.get("default")
        elif rule["type"] == "string":
            if not isinstance(value, str):
                raise ToolError(f"{name} must be text (got {shown(value)})")
            out[name] = value
        else:  # "integer"
            low, high = rule["minimum"], rule["maximum"]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ToolError(f"{name} must be a whole number from {low} to {high} (got {shown(value)})")
            out[name] = value
    return out


def _schema(properties: dict[str, dict[str, Any]], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


_NOTE = {"type": "string", "description": "a vault-relative path as search returns it, or a note's name"}
# fmt: off
SCHEMAS: dict[str, dict[str, Any]] = {
    "get_note": _schema({
        "path": {"type": "string", "description": "the note's vault-relative path, as search returns it"},
        "section": {"type": "string", "description": "only sections whose heading contains this"},
    }, ("path",)),
    "get_chunk": _schema({
        "chunk_id": {"type": "integer", "minimum": 1, "maximum": MAX_ID,
                     "description": "the chunk_id a search result gave"},
    }, ("chunk_id",)),
    "links": _schema({"note": _NOTE}, ("note",)),
    "related": _schema({
        "note": _NOTE,
        "k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "how many"},
    }, ("note",)),
    "status": _schema({}),
    "map_clusters": _schema({}),
    "map_note": _schema({
        "note": _NOTE,
        "k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
              "description": "how many nearest notes"},
    }, ("note",)),
    "missing_links": _schema({
        "note": {**_NOTE, "description": "only this note's missing links (a path or a note's name); "
                 "leave out for the vault's best"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10, "description": "how many"},
    }),
}
# fmt: on
"""The input schema of each tool but search (whose schema is the search request's)."""

DESCRIPTIONS = {
    "get_note": "Read a whole note by its vault-relative path (as returned by search): every "
    "section in order with its heading context. section, if given, keeps only sections whose "
    "heading contains it (case-insensitive).",
    "get_chunk": "Read one section of a note by the chunk_id a search result gave, with its path "
    "and heading context (ids change when the note is edited: search again if one is unknown).",
    "links": "A note's links: `outgoing` (each with the `path` it resolves to, or null when "
    "no indexed file matches, and for a link to a #heading `heading_found`: false when that note "
    "has no such heading) and `backlinks` (the notes that link to it). note: a vault-relative "
    "path as search returns, or a note's name as a [[link]] would write it.",
    "related": "Notes related to a note, best first: linked with it (directly, or through notes "
    "both link to or are linked from — `shared`) and similar in meaning (`similarity`); `close` says "
    "whether each is really related or only among the nearest, and `nothing_close` that none is. Use it "
    "to explore around a note a search found. note: a path or a note's name; k: how many (1–50).",
    "status": "What the index holds: vault folder, number of notes and sections, embedding "
    "model, when it was last indexed, files that could not be indexed, and documents with no text "
    "to search (`textless_documents`).",
    "map_clusters": "The map of the vault by meaning: its clusters, each with `id`, `label` (its "
    "distinctive words), `words`, `central` (its most central notes' paths), `size` (notes) and "
    "`thin` (true for a sparse region), largest first; `notes` counts the notes and `roles` how many "
    "are `core` (deep inside a cluster), `member`, `bridge` (between clusters) or `island` (no links, "
    "few near notes). Use map_note for one note's place.",
    "map_note": "A note's place on the vault map: its `cluster` (id, label), `role` (core, member, "
    "bridge, island), its k nearest notes by meaning (`neighbours`, each with `similarity` (on the map's "
    "own scale: it orders them), `cluster`, `linked`: whether the two notes link either way, and "
    "`close`: false when it is only the nearest, not alike in meaning nor related by links) and `missing_links`: the notes "
    "related to it (by meaning and shared links) that it does not link, each with the two passages that make them close and the `link` to "
    "paste. note: a path or a note's name; k: how many near notes (1–50).",
    "missing_links": "Notes close in meaning that never link to each other, closest first: what in "
    "the notes is close to this but unlinked. Each has `source`, `target`, `similarity`, the "
    "passage of each note that makes them close (`source_passage`, `target_passage`: chunk_id, "
    "heading, text) and `link`, the [[link]] to paste into the source. note: only that note's "
    "(a path or a note's name); without it, the whole vault's best. limit: how many (1–100, "
    "default 10).",
}


def _answer(data: dict[str, Any]) -> CallToolResult:
    """A tool's answer: ``data`` as the structured content its output schema announces, and
    the same JSON, compact, as the text content (the spec's serialization for clients that
    read only text). Clients that read the structured content (Claude Code, VS Code) give the
    model that alone."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _tool(fn: Callable[[dict[str, Any]], dict[str, Any]], *, name: str, description: str,
          parameters: dict[str, Any]) -> Tool:  # fmt: skip
    """A tool that hands ``fn`` its arguments whole (see :class:`_RawArguments`) and answers
    with :func:`_answer`; its input schema is ``parameters``."""

    tool = Tool.from_function(fn, name=name, description=description)
    tool.fn_metadata.arg_model = _RawArguments
    tool.parameters = parameters
    tool.fn = lambda arguments: _answer(fn(arguments))
    return tool


def _lean_section(section: dict[str, Any], *, with_path: bool) -> dict[str, Any]:
    """A ranked section as an agent reads it: where it is, its excerpt, how likely it answers
    the query, and the id that reads it whole. The ranks, signals, scores and heading context
    of the search JSON (``vaultseek search --json``) are for judging the ranking, not for
    reading: left out."""
    out: dict[str, Any] = {"path": section["path"]} if with_path else {}
    out["section"] = section["section"]
    if section.get("location"):
        out["location"] = section["location"]
    out["snippet"] = section["snippet"]
    if section.get("relevance") is not None:
        out["relevance"] = round(section["relevance"], 2)
    out["chunk_id"] = section["chunk_id"]
    return out


def lean_answer(response: dict[str, Any]) -> dict[str, Any]:
    """The search JSON as the search tool answers: each note with its path, title, relevance
    and sections (:func:`_lean_section`), or each section with its path in the chunk view;
    ``query``, ``view`` and ``no_match`` always, and ``notices``, ``intent``, ``parsed``,
    ``reranking`` and ``expansion`` when they say something."""
    results: list[dict[str, Any]] = []
    for item in response["results"]:
        if response["view"] == "notes":
            note = {"path": item["path"], "title": item["title"]}
            if item.get("relevance") is not None:
                note["relevance"] = round(item["relevance"], 2)
            note["sections"] = [_lean_section(s, with_path=False) for s in item["sections"]]
            results.append(note)
        else:
            results.append(_lean_section(item, with_path=True))
    out: dict[str, Any] = {"query": response["query"], "view": response["view"], "results": results,
                           "no_match": response["no_match"]}  # fmt: skip
    for key in ("notices", "intent", "parsed", "reranking", "expansion", "alternatives"):
        if response.get(key):
            out[key] = response[key]
    return out


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
                filters = json.loads(filters)
            except ValueError:
                pass
        if isinstance(filters, dict):
            filters = dict(filters)
            for alias, name in _FILTER_ALIASES.items():
                if alias in filters:
                    filters[name] = _joined(filters.get(name), filters.pop(alias))
        if filters is not None:
            arguments = {**arguments, "filters": filters}
        return lean_answer(call(lambda: index.search(SearchRequest.from_mapping(arguments)).to_dict()))

    def get_note(arguments: dict[str, Any]) -> dict[str, Any]:
        args = _checked("get_note", arguments, SCHEMAS["get_note"])
        rows = call(index.get_note, args["path"])
        if args["section"]:
            wanted = args["section"].casefold()
            rows = [r for r in rows if wanted in r.section.casefold()]
        return {"path": args["path"], "chunks": [_chunk(r) for r in rows]}

    def get_chunk(arguments: dict[str, Any]) -> dict[str, Any]:
        args = _checked("get_chunk", arguments, SCHEMAS["get_chunk"])
        return _chunk(call(index.get_chunk, args["chunk_id"]))

    def links(arguments: dict[str, Any]) -> dict[str, Any]:
        args = _checked("links", arguments, SCHEMAS["links"])
        return cast("dict[str, Any]", call(index.links, args["note"]).to_dict())

    def related(arguments: dict[str, Any]) -> dict[str, Any]:
        args = _checked("related", arguments, SCHEMAS["related"])
        return cast("dict[str, Any]", call(index.related, args["note"], k=args["k"]).to_dict())

    def status(arguments: dict[str, Any]) -> dict[str, Any]:
        _checked("status", arguments, SCHEMAS["status"])
        info = call(index.status)
        return {
            "vault": info.vault,
            "files": info.files,
            "chunks": info.chunks,
            "model": info.model,
            "last_indexed": info.last_indexed,
            "skipped": [{"path": s.path, "reason": s.reason} for s in info.skipped[:50]],
        }

    def map_clusters(arguments: dict[str, Any]) -> dict[str, Any]:
        _checked("map_clusters", arguments, SCHEMAS["map_clusters"])
        return clusters_answer(call(index.vault_map, limit=0))

    def map_note(arguments: dict[str, Any]) -> dict[str, Any]:
        args = _checked("map_note", arguments, SCHEMAS["map_note"])
        return cast("dict[str, Any]", call(index.map_note, args["note"], k=args["k"]).to_dict())

    def missing_links(arguments: dict[str, Any]) -> dict[str, Any]:
        args = _checked("missing_links", arguments, SCHEMAS["missing_links"])
        found = call(index.missing_links, args["note"], limit=args["limit"])
        return {"note": args["note"], "missing_links": [m.to_dict() for m in found]}

    tools = [_tool(search, name="search", description=SEARCH_DESCRIPTION, parameters=search_schema())]
    for fn in (get_note, get_chunk, links, related, status, map_clusters, map_note, missing_links):
        name = fn.__name__
        tools.append(_tool(fn, name=name, description=DESCRIPTIONS[name], parameters=SCHEMAS[name]))
    return MCPServer(name="vaultseek", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING", tools=tools)


def clusters_answer(found: VaultMap) -> dict[str, Any]:
    """The map as ``map_clusters`` answers: the clusters, largest first, each with its name,
    words, central notes, size and whether it is thin, and how many notes there are of each
    role; not the notes themselves (17k points are for a picture, not for a model to read)."""
    roles = Counter(point.role for point in found.notes)
    clusters = sorted(found.clusters, key=lambda c: (-c.size, c.id))
    out: dict[str, Any] = {
        "space": found.space, "notes": len(found.notes),
        "roles": {role: roles.get(role, 0) for role in ("core", "member", "bridge", "island")},
        "clusters": [{"id": c.id, "label": c.label, "words": list(c.words), "central": list(c.central),
                      "size": c.size, "thin": c.thin} for c in clusters],
    }  # fmt: skip
    if found.notices:
        out["notices"] = list(found.notices)
    return out


def _joined(first: Any, second: Any) -> Any:
    """Two values of one filter (``kinds`` and its alias ``kind``) as one list; either alone
    as it was (the contract checks its type)."""
    if first is None:
        return second
    as_list = [v if isinstance(v, list) else [v] for v in (first, second)]
    return as_list[0] + as_list[1]


def search_schema() -> dict[str, Any]:
    """The search request's input schema, its filters named as the CLI's flags and the query
    operators name them (``folder``, ``tag``, ``kind``), the request's own plural names
    (``folders``, …) still read."""
    schema = request_schema()
    filters = next(s for s in schema["properties"]["filters"]["anyOf"] if s.get("type") == "object")
    plural = {name: alias for alias, name in _FILTER_ALIASES.items()}
    properties: dict[str, Any] = {}
    for name, rule in filters["properties"].items():
        if name in plural:
            properties[plural[name]] = rule
            rule = {**rule, "description": f"the same as {plural[name]}"}
        properties[name] = rule
    filters["properties"] = properties
    return schema


def run_mcp_server(server: MCPServer, *, http: bool = False, host: str = "127.0.0.1", port: int = MCP_HTTP_PORT) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP, whose
    transport refuses bodies over 4 MB itself)."""
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        anyio.run(_serve_stdio, server)


# -- stdio, within limits ---------------------------------------------------------------------
MAX_LINE_BYTES = 1024 * 1024
"""The longest message read from stdin. A search request is a few KB (its query at most
``contract.MAX_QUERY_CHARS`` characters); without this cap a 100 MB line is read, parsed and
validated whole before its query is refused, stalling the server for seconds and ~0.5 GB."""
_SKIP_PIECE = 1 << 16
_ID_PREFIX_BYTES = 1 << 16
"""How much of an over-long line is searched for its request id."""


async def _serve_stdio(server: MCPServer) -> None:
    """``MCPServer.run_stdio_async`` with stdin read through :class:`_BoundedLines`. The SDK
    takes the transport's streams as arguments but ``MCPServer`` has no way to pass them, so
    its low-level server is driven directly, as ``run_stdio_async`` does. Like the SDK, stdin
    and stdout are moved off fds 0 and 1 while serving (fd 0 reads nothing, fd 1 writes to
    stderr), so no stray print or child process can write into the protocol stream."""
    lowlevel = server._lowlevel_server  # private, see the docstring
    wire_in, wire_out = _claim_stdio()
    try:
        output = _Output(wire_out)
        lines = _BoundedLines(wire_in, output)
        # wrap_file asks for a whole IO[str]; the transport calls only readline, write and flush
        stdin, stdout = anyio.wrap_file(cast("IO[str]", lines)), anyio.wrap_file(cast("IO[str]", output))
        async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
    finally:
        _release_stdio(wire_in, wire_out)


def _claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """Private copies of fds 0 and 1 for the protocol; fd 0 then reads /dev/null and fd 1
    writes to stderr."""
    sys.stdout.flush()
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def _release_stdio(wire_in: BinaryIO, wire_out: BinaryIO) -> None:
    for fd, wire in ((0, wire_in), (1, wire_out)):
        try:
            os.dup2(wire.fileno(), fd)
            wire.close()
        except (OSError, ValueError):
            pass


class _Output:
    """The protocol's stdout: each ``write`` is one whole message, written and flushed under
    a lock, so the SDK's replies and :class:`_BoundedLines`' error replies (written from
    another thread) never interleave."""

    def __init__(self, sink: BinaryIO) -> None:
        self.sink = sink
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        with self.lock:
            self.sink.write(data)
            self.sink.flush()
        return len(text)

    def flush(self) -> None:  # every write is flushed already
        pass

    def error(self, code: int, message: str, request_id: Any) -> None:
        reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        self.write(json.dumps(reply, ensure_ascii=False) + "\n")


class _BoundedLines:
    """stdin for the SDK's transport: ``readline`` returns the next line that is a JSON-RPC
    message of at most :data:`MAX_LINE_BYTES`; every other line is answered with a JSON-RPC
    error and skipped. "" at the end of input."""

    def __init__(self, source: BinaryIO, output: _Output) -> None:
        self.source = source
        self.output = output

    def readline(self) -> str:
        while True:
            line = self.source.readline(MAX_LINE_BYTES + 1)
            if not line:
                return ""
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                request_id = _request_id(line[:_ID_PREFIX_BYTES])
                self._skip_rest()
                self.output.error(INVALID_REQUEST, f"the message is larger than {shown_size(MAX_LINE_BYTES)}", request_id)
                continue
            if not line.strip():
                continue
            refusal = _refusal(line)
            if refusal is None:
                return _readable(line)
            self.output.error(*refusal)

    def _skip_rest(self) -> None:
        while True:
            piece = self.source.readline(_SKIP_PIECE)
            if not piece or piece.endswith(b"\n"):
                return


def _refusal(line: bytes) -> tuple[int, str, Any] | None:
    """None for a JSON-RPC message; else the error to answer with (code, message, id)."""
    try:
        value = load_json(line.rstrip(b"\r\n"), max_bytes=MAX_LINE_BYTES, what="the message")
    except QueryError as exc:
        return PARSE_ERROR, exc.message, None
    try:
        jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValueError:  # pydantic's ValidationError
        request_id = value.get("id") if isinstance(value, dict) else None
        shown = request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None
        return INVALID_REQUEST, "not a JSON-RPC 2.0 request, notification or response", shown
    return None


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _readable(line: bytes) -> str:
    """A JSON-RPC message as the SDK's transport can read it. The SDK's parser drops a message
    holding a lone surrogate escape (``"\\ud83d"``, half an emoji) without an answer, so such a
    line is written anew with each lone surrogate as ``?`` (:func:`~vaultseek.payload.encodable`),
    as a search query's are."""
    decoded = line.decode("utf-8", "replace")
    if not _SURROGATE_ESCAPE.search(line):
        return decoded
    return json.dumps(encodable(json.loads(decoded)), ensure_ascii=False) + "\n"  # a pair is one character again


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_ID_VALUE = re.compile(rb'\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")')


def _request_id(prefix: bytes) -> Any:
    """The top-level ``"id"`` of a message from its first bytes (None if they do not show it),
    so a client waiting on an over-long request gets its error instead of a timeout."""
    depth = 0
    for token in _TOKEN.finditer(prefix):
        text = token.group()
        if text in (b"[", b"{"):
            depth += 1
        elif text in (b"]", b"}"):
            depth -= 1
        elif depth == 1 and text == b'"id"':
            found = _ID_VALUE.match(prefix, token.end())
            if found is not None:
                try:
                    return json.loads(found.group(1))
                except ValueError:
                    return None
    return None
