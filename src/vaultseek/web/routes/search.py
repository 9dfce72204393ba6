"""Search, links and related notes over HTTP.

    GET  /api/search?q=…            a search (``vaultseek.contract``): the request's fields as
                                    parameters, filters flat (folders, tags, kinds, where,
                                    modified_after, modified_before, path_contains,
                                    name_contains, categories, paths); q reads the query
                                    syntax ("phrase", -word, tag:x, …) unless syntax=false
    POST /api/search                the same as a JSON request {"query", "k", "filters", …}
    GET  /api/links?path=…          a note's outgoing links (resolved or not, #headings checked)
                                    and backlinks
    GET  /api/related?path=…&k=…    notes related to a note, by links and by meaning
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from ...contract import MAX_K, SearchRequest
from ...errors import MissingExtraError
from ..params import (
    json_body,
    note_param,
    notebook_of,
    off_loop,
    search_of_query_string,
    whole_param,
)

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc


async def search(request: Request) -> Response:
    kb = notebook_of(request).kb
    started = time.perf_counter()
    data = await json_body(request) if request.method == "POST" else search_of_query_string(request.query_params)
    # `categories` is this app's filter (the paths filed under them): taken out before the
    # request is read, added back as paths.
    filters = data.get("filters") if isinstance(data, dict) else None
    categories = None
    if isinstance(filters, dict) and "categories" in filters:
        categories = filters["categories"]
        data = {**data, "filters": {k: v for k, v in filters.items() if k != "categories"}}
    wanted = SearchRequest.from_mapping(data)

    def work() -> Any:
        scoped = wanted if categories is None else replace(wanted, filters=kb.in_categories(wanted.filters, categories))
        return kb.search(scoped).to_dict()

    body = await off_loop(work)
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    return JSONResponse(body, headers={"Server-Timing": f"search;dur={elapsed}"})


async def links(request: Request) -> Response:
    note = note_param(request)
    kb = notebook_of(request).kb

    def work() -> Any:
        with kb.readers.borrow() as index:
            return index.links(note).to_dict()

    return JSONResponse(await off_loop(work))


async def related(request: Request) -> Response:
    note = note_param(request)
    kb = notebook_of(request).kb
    k = whole_param(request, "k", 10, MAX_K)

    def work() -> Any:
        with kb.readers.borrow() as index:
            return index.related(note, k=k).to_dict()

    return JSONResponse(await off_loop(work))


ROUTES = [
    Route("/api/search", search, methods=["GET", "POST"]),
    Route("/api/links", links),
    Route("/api/related", related),
]
