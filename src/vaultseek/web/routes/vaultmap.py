"""The vault map over HTTP (the map page reads these; the JSON is ``vaultseek map --json``'s).

    GET /api/map                    the map: every note placed in 2-D, its clusters and the
                                    missing links (the best ``limit``, 50 unless given; 0
                                    for none, the quickest answer).
                                    ``rebuild=true`` lays it out afresh; the
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

import hashlib
import threading
import time
from dataclasses import replace
from typing import Any

from ...contract import MAX_K
from ...errors import MissingExtraError, QueryError
from ...reports import MapRequest
from ...search.filters import parse_filter
from ..params import (
    FILTER_PARAMS,
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

MAX_MISSING = 500
"""The most missing links one request lists."""
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def map_request(request: Request) -> tuple[MapRequest, Any, int]:
    """The map a request asks for, and the categories its scope names (resolved to paths by
    the knowledge base, off the event loop). Anything but the scope filters and ``rebuild`` is
    refused, so a misspelt filter does not silently map the whole vault."""
    params = request.query_params
    unknown = sorted({name for name in params if name not in ("rebuild", "limit") and name not in FILTER_PARAMS})
    if unknown:
        raise QueryError(f"unknown map parameter(s): {', '.join(unknown)}",
                         hint="the map takes rebuild=true, limit (missing links listed) and the scope "
                              "filters of /api/search: "
                              f"{', '.join(sorted(FILTER_PARAMS))}")  # fmt: skip
    rebuild = params.get("rebuild", "").strip().lower()
    if rebuild not in ("", *_TRUE, *_FALSE):
        raise QueryError(f"rebuild must be true or false (got {rebuild[:40]!r})")
    filters = dict(search_of_query_string(params).get("filters", {}))
    categories = filters.pop("categories", None)
    scope = parse_filter(filters) if filters else None
    limit = whole_param(request, "limit", 50, MAX_MISSING, lower=0)
    return MapRequest(filters=scope, rebuild=rebuild in _TRUE), categories, limit


class KeptAnswers:
    """The last answer of ``GET /api/map`` (the whole vault's map, not a scope or a rebuild),
    as JSON bytes, per reader connection, with the index's state it was made at: the next
    request on that connection is answered with it while the index is unchanged (no other
    connection has committed since, the writer has not run), instead of reading the kept map
    again and encoding 17k notes. The ETag lets a reload be answered 304."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answers: dict[int, tuple[Any, tuple[int, int, int], bytes, str]] = {}

    def get(self, store: Any, state: tuple[int, int, int]) -> tuple[bytes, str] | None:
        with self.lock:
            kept = self.answers.get(id(store))
        if kept is None or kept[0] is not store or kept[1] != state:
            return None
        return kept[2], kept[3]

    def put(self, store: Any, state: tuple[int, int, int], body: bytes) -> str:
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        with self.lock:
            self.answers[id(store)] = (store, state, body, etag)
        return etag


async def vault_map(request: Request) -> Response:
    wanted, categories, limit = map_request(request)
    kb = notebook_of(request).kb
    answers: KeptAnswers = request.app.state.map_answers
    whole = wanted.filters is None and categories is None and not wanted.rebuild
    started = time.perf_counter()

    def work() -> tuple[bytes, str | None, str]:
        asked = wanted
        if categories is not None:
            asked = replace(wanted, filters=kb.in_categories(wanted.filters, categories))
        with kb.readers.borrow() as index:
            state = (index.store.data_version(), kb.ingest.generation, limit)
            if whole:
                kept = answers.get(index.store, state)
                if kept is not None:
                    return kept[0], kept[1], "kept"
            body = bytes(JSONResponse(index.vault_map(asked, limit=limit).to_dict()).body)
            return body, answers.put(index.store, state, body) if whole else None, "made"

    body, etag, how = await off_loop(work)
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    headers = {"Server-Timing": f"map;dur={elapsed};desc={how}", "Cache-Control": "no-cache"}
    if etag is not None:
        headers["ETag"] = etag
        if etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


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
