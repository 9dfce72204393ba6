"""The study hub over HTTP: generated material, studying, progress.

    POST /api/study/materials                   {"kind", "count", "scope", "topic", "title"}
                                                → generate
    GET  /api/study/materials[?kind=]           list; GET/PATCH {"title"}/DELETE one at /{id}
    GET  /api/study/materials/{id}/export?format=md|csv    Markdown; flashcards as Anki CSV
    POST /api/study/materials/{id}/attempts     {"answers": [i, …]} → graded with explanations
    GET  /api/study/materials/{id}/lessons/{n}  a workshop lesson, written when first opened
    GET  /api/study/materials/{id}/due          flashcards due now
    POST /api/study/cards/{card_id}/reviews     {"rating": "again|hard|good|easy"} → next due (FSRS)
    GET  /api/study/dashboard                   study time, streaks, badges, 90-day heatmap
"""

from __future__ import annotations

from ...errors import MissingExtraError, QueryError
from ...study.generators import Order
from ..params import id_param, json_body, notebook_of, off_loop

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc


async def materials(request: Request) -> Response:
    notebook = notebook_of(request)
    if request.method == "POST":
        order = Order.from_json(await json_body(request))
        await off_loop(notebook.kb.scope_filter, order.scope)  # a bad scope is a 400 before the model runs
        return JSONResponse(await notebook.hub.create(order), status_code=201)
    return JSONResponse({"materials": await off_loop(notebook.hub.list, request.query_params.get("kind") or None)})


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
    Route("/api/study/materials/{mid}", material, methods=["GET", "PATCH", "DELETE"]),
    Route("/api/study/materials/{mid}/export", export),
    Route("/api/study/materials/{mid}/attempts", attempts, methods=["POST"]),
    Route("/api/study/materials/{mid}/lessons/{n}", lesson),
    Route("/api/study/materials/{mid}/due", due),
    Route("/api/study/cards/{cid}/reviews", review, methods=["POST"]),
    Route("/api/study/dashboard", dashboard),
]
