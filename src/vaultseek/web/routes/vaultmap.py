"""The vault map over HTTP (the map page reads these; the JSON is ``vaultseek map --json``'s).

    GET /api/map                    the map: every note placed in 2-D, its clusters and the
                                    missing links. ``rebuild=true`` computes it afresh; the
                                    scope filters of ``GET /api/search`` (folders, tags, kinds,
                                    where, modified_after, modified_before, path_contains,
                                    name_contains, categories, paths) map that scope only
    GET /api/map/note?path=…&k=…    one note: its cluster, its k nearest notes (linked or not)
                                    and its missing links
    GET /api/map/missing?path=…&limit=…
                                    missing links, best first: pairs of notes close in meaning
                                    that never link; with ``path``, only that note's
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from ...contract import MAX_K
from ...errors import MissingExtraError, QueryError
from ...search.filters import parse_filter
from ..params import FILTER_PARAMS, note_param, notebook_of, off_loop, search_of_query_string

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

MAX_MISSING = 500
"""The most missing links one request lists."""
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def whole_param(request: Request, name: str, default: int, upper: int) -> int:
    """A whole-number query parameter from 1 to ``upper`` (``default`` when absent)."""
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise QueryError(f"{name} must be a whole number from 1 to {upper} (got {raw[:40]!r})") from None
    if not 1 <= value <= upper:
        raise QueryError(f"{name} must be a whole number from 1 to {upper} (got {value})")
    return value


def map_request(request: Request) -> tuple[Any, Any]:
    """The map a request asks for, and the categories its scope names (resolved to paths by
    the knowledge base, off the event loop). Anything but the scope filters and ``rebuild`` is
    refused, so a misspelt filter does not silently map the whole vault."""
    from ...records import MapRequest  # TEMP until the core lands

    params = request.query_params
    unknown = sorted({name for name in params if name != "rebuild" and name not in FILTER_PARAMS})
    if unknown:
        raise QueryError(f"unknown map parameter(s): {', '.join(unknown)}",
                         hint="the map takes rebuild=true and the scope filters of /api/search: "
                              f"{', '.join(sorted(FILTER_PARAMS))}")  # fmt: skip
    rebuild = params.get("rebuild", "").strip().lower()
    if rebuild not in ("", *_TRUE, *_FALSE):
        raise QueryError(f"rebuild must be true or false (got {rebuild[:40]!r})")
    filters = dict(search_of_query_string(params).get("filters", {}))
    categories = filters.pop("categories", None)
    scope = parse_filter(filters) if filters else None
    return MapRequest(filters=scope, rebuild=rebuild in _TRUE), categories


async def vault_map(request: Request) -> Response:
    wanted, categories = map_request(request)
    kb = notebook_of(request).kb
    started = time.perf_counter()

    def work() -> Any:
        asked = wanted
        if categories is not None:
            asked = replace(wanted, filters=kb.in_categories(wanted.filters, categories))
        with kb.readers.borrow() as index:
            return index.vault_map(asked).to_dict()

    body = await off_loop(work)
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    return JSONResponse(body, headers={"Server-Timing": f"map;dur={elapsed}"})


async def map_note(request: Request) -> Response:
    note = note_param(request)
    k = whole_param(request, "k", 10, MAX_K)
    kb = notebook_of(request).kb

    def work() -> Any:
        with kb.readers.borrow() as index:
            return index.map_note(note, k=k).to_dict()

    return JSONResponse(await off_loop(work))


async def missing_links(request: Request) -> Response:
    note = request.query_params.get("path") or None
    if note is not None and not note.strip():
        note = None
    limit = whole_param(request, "limit", 50, MAX_MISSING)
    kb = notebook_of(request).kb

    def work() -> Any:
        with kb.readers.borrow() as index:
            return {"missing_links": [link.to_dict() for link in index.missing_links(note, limit=limit)]}

    return JSONResponse(await off_loop(work))


ROUTES = [
    Route("/api/map", vault_map),
    Route("/api/map/note", map_note),
    Route("/api/map/missing", missing_links),
]
