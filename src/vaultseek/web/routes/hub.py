"""The study hub over HTTP: generated material, studying, progress.

    POST /api/study/materials                   {"kind", "count", "scope", "topic", "title"}
                                                → generate (201 with the material); with
                                                ?stream=1, NDJSON progress lines instead:
                                                {"stage": "started", "job"}, "retrieving",
                                                "sources", "writing" {items, of, chars},
                                                "retrying", "checking", "saving", then one of
                                                "done" {material}, "error" {error}, "cancelled"
    GET  /api/study/kinds                       each kind's size limits {least, most, default}
    POST /api/study/jobs/{job}/cancel           stop a streamed generation (closes the model's
                                                request; nothing is kept)
    GET  /api/study/materials[?kind=]           list; GET/PATCH {"title"}/DELETE one at /{id}
    GET  /api/study/materials/{id}/export?format=md|csv    Markdown; flashcards as Anki CSV
    POST /api/study/materials/{id}/attempts     {"answers": [i, …]} → graded with explanations
    GET  /api/study/materials/{id}/lessons/{n}  a workshop lesson, written when first opened
    GET  /api/study/materials/{id}/due          flashcards due now
    POST /api/study/cards/{card_id}/reviews     {"rating": "again|hard|good|easy"} → next due (FSRS)
    GET  /api/study/dashboard                   study time, streaks, badges, 90-day heatmap
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from ...errors import MissingExtraError, QueryError, VaultseekError
from ...study.generators import COUNTS, Order
from ..error_handling import status_of
from ..params import id_param, json_body, notebook_of, off_loop
from ..streams import NDJSON, hold, until_disconnect

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc


async def materials(request: Request) -> Response:
    notebook = notebook_of(request)
    if request.method == "POST":
        order = Order.from_json(await json_body(request))
        await off_loop(notebook.kb.scope_filter, order.scope)  # a bad scope is a 400 before the model runs
        if request.query_params.get("stream") == "1":
            return _generate_streamed(request, order)
        return JSONResponse(await notebook.hub.create(order), status_code=201)
    return JSONResponse({"materials": await off_loop(notebook.hub.list, request.query_params.get("kind") or None)})


def _generate_streamed(request: Request, order: Order) -> Response:
    """The generation as a job, its progress relayed as NDJSON lines. The job runs in its own
    task: a closed tab (the watcher) or the cancel endpoint cancels it, which closes the
    model's request."""
    hub = notebook_of(request).hub
    relay: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    job_id, task = hub.start(order, relay.put_nowait)

    def finished(done: asyncio.Task[dict[str, Any]]) -> None:
        if done.cancelled():
            relay.put_nowait({"stage": "cancelled"})
        elif (exc := done.exception()) is not None:
            status, code = status_of(exc) if isinstance(exc, VaultseekError) else (500, "internal")
            message, hint = (exc.message, exc.hint) if isinstance(exc, VaultseekError) else (f"unexpected {exc!r}", None)
            relay.put_nowait({"stage": "error", "status": status, "error": {"code": code, "message": message, "hint": hint}})
        else:
            relay.put_nowait({"stage": "done", "material": done.result()})
        relay.put_nowait(None)

    async def watch_disconnect() -> None:
        await until_disconnect(request)
        task.cancel()

    task.add_done_callback(finished)
    watcher = asyncio.ensure_future(watch_disconnect())
    task.add_done_callback(lambda _task: watcher.cancel())
    hold(task, watcher)

    async def lines() -> AsyncIterator[str]:
        yield json.dumps({"stage": "started", "job": job_id, "kind": order.kind, "of": order.count}) + "\n"
        while (item := await relay.get()) is not None:
            yield json.dumps(item, ensure_ascii=False) + "\n"

    return StreamingResponse(lines(), media_type=NDJSON, headers={
        "X-Job-Id": job_id, "Cache-Control": "no-store", "X-Accel-Buffering": "no"})  # fmt: skip


async def kinds(_request: Request) -> Response:
    """The sizes each kind accepts, so a form offers exactly what the API allows."""
    return JSONResponse({"kinds": {kind: {"least": least, "most": most, "default": default}
                                   for kind, (least, most, default) in COUNTS.items()}})  # fmt: skip


async def cancel_job(request: Request) -> Response:
    cancelled = notebook_of(request).hub.cancel(request.path_params["job"])
    return JSONResponse({"job": request.path_params["job"], "cancelled": cancelled})


async def material(request: Request) -> Response:
    hub = notebook_of(request).hub
    mid = request.path_params["mid"]
    if request.method == "DELETE":
        await off_loop(hub.delete, mid)
        return JSONResponse({"deleted": mid})
    if request.method == "PATCH":
        body = await json_body(request)
        return JSONResponse(await off_loop(hub.rename, mid, body.get("title") if isinstance(body, dict) else None))
    return JSONResponse(await off_loop(lambda: hub.get(mid, opened=request.query_params.get("open") == "1")))


async def export(request: Request) -> Response:
    hub = notebook_of(request).hub
    body, media, name = await off_loop(hub.export, request.path_params["mid"], request.query_params.get("format", "md"))
    return Response(body, media_type=media, headers={"Content-Disposition": f'attachment; filename="{name}"'})


async def attempts(request: Request) -> Response:
    hub = notebook_of(request).hub
    body = await json_body(request)
    if not isinstance(body, dict):
        raise QueryError('the request body must be {"answers": [...]}')
    graded = await off_loop(hub.grade, request.path_params["mid"], body.get("answers"), body.get("started_at"))
    return JSONResponse(graded, status_code=201)


async def lesson(request: Request) -> Response:
    hub = notebook_of(request).hub
    return JSONResponse(await hub.lesson(request.path_params["mid"], id_param(request, "n", "lesson") - 1))


async def due(request: Request) -> Response:
    return JSONResponse({"cards": await off_loop(notebook_of(request).hub.due_cards, request.path_params["mid"])})


async def review(request: Request) -> Response:
    body = await json_body(request)
    rating = body.get("rating") if isinstance(body, dict) else None
    hub = notebook_of(request).hub
    card_id = id_param(request, "cid", "flashcard")
    return JSONResponse(await off_loop(hub.review, card_id, rating), status_code=201)


async def dashboard(request: Request) -> Response:
    return JSONResponse(await off_loop(notebook_of(request).hub.dashboard))


ROUTES = [
    Route("/api/study/materials", materials, methods=["GET", "POST"]),
    Route("/api/study/kinds", kinds),
    Route("/api/study/jobs/{job}/cancel", cancel_job, methods=["POST"]),
    Route("/api/study/materials/{mid}", material, methods=["GET", "PATCH", "DELETE"]),
    Route("/api/study/materials/{mid}/export", export),
    Route("/api/study/materials/{mid}/attempts", attempts, methods=["POST"]),
    Route("/api/study/materials/{mid}/lessons/{n}", lesson),
    Route("/api/study/materials/{mid}/due", due),
    Route("/api/study/cards/{cid}/reviews", review, methods=["POST"]),
    Route("/api/study/dashboard", dashboard),
]
