"""The index's freshness over HTTP, and a re-index on request (what an editor plugin shows in
its status bar and runs after a save).

    GET  /api/index/state           {vault, files, chunks, last_indexed, indexing,
                                    indexing_error, deep}: ``indexing`` is true while the
                                    writer has a run queued or going; ``deep`` is the deep
                                    tier's progress (``vaultseek status --json``'s), null when
                                    the tier is off
    POST /api/index/sync            index the vault now (incrementally: unchanged files cost a
                                    look at their size and time); ``{"wait": true}`` answers
                                    when the run is over (at most :data:`MAX_WAIT` seconds),
                                    with the state; otherwise at once, 202
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...errors import MissingExtraError, QueryError
from ...study import Notebook
from ..params import json_body, notebook_of, off_loop

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

MAX_WAIT = 60.0
"""Seconds ``POST /api/index/sync`` with ``wait`` holds its answer for the run to finish."""


def index_state(notebook: Notebook) -> dict[str, Any]:
    kb = notebook.kb
    with kb.readers.borrow() as index:
        status = index.status()
    return {"vault": status.vault, "files": status.files, "chunks": status.chunks,
            "last_indexed": status.last_indexed, "indexing": not kb.ingest.idle.is_set(),
            "indexing_error": kb.ingest.last_error,
            "deep": None if status.deep is None else status.deep.to_dict()}  # fmt: skip


async def state(request: Request) -> Response:
    return JSONResponse(await off_loop(index_state, notebook_of(request)))


async def sync(request: Request) -> Response:
    notebook = notebook_of(request)
    body = await json_body(request)
    if body is None:
        body = {}
    if not isinstance(body, dict) or not isinstance(body.get("wait", False), bool) or set(body) - {"wait"}:
        raise QueryError('the body is {"wait": true | false} or empty')
    finished = notebook.kb.ingest.sync()
    if not body.get("wait"):
        return JSONResponse({"queued": True}, status_code=202)
    done = await asyncio.to_thread(finished.wait, MAX_WAIT)
    return JSONResponse({"queued": not done, **await off_loop(index_state, notebook)})


ROUTES = [
    Route("/api/index/state", state),
    Route("/api/index/sync", sync, methods=["POST"]),
]
