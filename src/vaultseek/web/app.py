"""The study app over HTTP: a Starlette app factory (the one module, with :mod:`.server`,
that imports Starlette). Handlers parse, call the :class:`~vaultseek.study.Notebook`,
render JSON; every error leaves as ``{"error": {"code", "message", "hint"}}``.

    GET  /                          the app (static, no CDN)
    GET  /api/status                index and model status
    GET  /api/documents             knowledge base: files, categories, ingestion state
    POST /api/documents             multipart upload (streamed into the upload folder)
    DELETE /api/documents/{path}    delete an upload and its chunks
    PUT  /api/documents/{path}/category   {"category": "law" | null}
    GET  /api/documents/{path}/chunks     the text of a document, to open a citation
    GET  /api/ingest/events         NDJSON: a snapshot, then every step of every file
    POST /api/chat                  NDJSON envelopes: thinking, metadata, text, error, done
    POST /api/chat/{id}/stop        stop the answer being written in that conversation
    GET  /api/conversations[/{id}]  saved conversations (DELETE one to forget it)
    GET  /api/search?q=…            a search (``vaultseek.contract``): the request's fields as
                                    parameters, filters flat (folders, tags, kinds, where,
                                    modified_after, modified_before, categories, paths)
    POST /api/search                the same as a JSON request {"query", "k", "filters", …}
    GET  /api/privacy               counts, the LLM host, and this process's live connections
    GET  /api/links?path=…          a note's outgoing links (resolved or not, #headings checked)
                                    and backlinks
    GET  /api/related?path=…&k=…    notes related to a note, by links and by meaning

  The study hub (generated material, studying, progress):
    GET  /study                                 the study hub page
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

import asyncio
import json
import sys
import time
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..config import Config
from ..contract import SearchRequest, text_fields
from ..engine import Index
from ..errors import (
    IndexBusyError,
    IndexClosedError,
    IndexNotFoundError,
    LLMError,
    MissingExtraError,
    QueryError,
    VaultNotFoundError,
    VaultseekError,
)
from ..study import ChatRequest, Notebook
from ..study.generators import Order
from ..study.uploads import UploadError
from .security import Guard
from .upload_stream import Received, receive_files

try:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

STATIC = Path(__file__).parent / "static"
_running: set[asyncio.Future[Any]] = set()
"""Answers in progress and their disconnect watchers (held so they are not collected)."""
NDJSON = "application/x-ndjson"


def error_response(status: int, code: str, message: str, hint: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, "hint": hint}}, status_code=status)


def _status_of(exc: VaultseekError) -> tuple[int, str]:
    if isinstance(exc, UploadError):
        return exc.status, "upload_refused"
    if isinstance(exc, QueryError):
        return (404, "not_found") if "not in the" in exc.message or exc.message.startswith("no ") else (400, "bad_request")
    if isinstance(exc, (IndexNotFoundError, VaultNotFoundError)):
        return 503, "no_index"
    if isinstance(exc, IndexBusyError):
        return 503, "busy"
    if isinstance(exc, IndexClosedError):
        return 503, "shutting_down"
    if isinstance(exc, LLMError):
        return 502, "llm_error"
    return 500, "error"


async def _on_vaultseek_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, VaultseekError)
    status, code = _status_of(exc)
    return error_response(status, code, exc.message, exc.hint)


async def _on_http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return error_response(exc.status_code, code, str(exc.detail))


async def _on_unexpected(_request: Request, exc: Exception) -> Response:
    traceback.print_exception(exc, file=sys.stderr)
    return error_response(500, "internal", f"unexpected {exc.__class__.__name__}: {exc}",
                          "this is a bug in vaultseek; the server log has the details")  # fmt: skip


async def _json_body(request: Request) -> Any:
    try:
        return json.loads(await request.body() or b"null")
    except ValueError:
        raise QueryError("the request body is not valid JSON") from None


def _path_param(request: Request) -> str:
    path = request.path_params["path"]
    if not path or path.startswith("/") or ".." in path.split("/"):
        raise QueryError(f"bad document path {path!r}")
    return path


_FILTER_LISTS = ("paths", "folders", "tags", "kinds", "where", "categories")
_FILTER_TEXTS = ("modified_after", "modified_before")


def _search_of_query_string(params: Any) -> dict[str, Any]:
    """``GET /api/search``'s parameters as a search request (``vaultseek.contract``): ``q`` is
    the query, the filter fields come flat (a list field repeated for alternatives) and the
    rest as the request's fields, numbers and flags written as text."""
    filters: dict[str, Any] = {}
    for name in _FILTER_LISTS:
        values = [value for value in params.getlist(name) if value]
        if values:
            filters[name] = values
    for name in _FILTER_TEXTS:
        if params.get(name):
            filters[name] = params[name]
    rest = {name: value for name, value in params.items() if name not in (*_FILTER_LISTS, *_FILTER_TEXTS, "q")}
    return {"query": params.get("q"), **text_fields(rest), **({"filters": filters} if filters else {})}


class GuardedApp(Guard):
    """The app behind its :class:`Guard`, with the notebook it serves (the server closes it;
    tests and the benchmark reach into it)."""

    def __init__(self, app: Any, notebook: Notebook, *, token: str | None, bind_host: str) -> None:
        super().__init__(app, token=token, bind_host=bind_host)
        self.notebook = notebook


def create_app(index_factory: Callable[[], Index], settings: Config, *, sync_on_start: bool = True) -> Any:
    """The study app for one vault. ``index_factory`` opens a fresh ``Index`` (called per
    reader and once for the writer); ``settings`` is the vault's configuration."""
    notebook = Notebook(settings, index_factory)
    run = asyncio.to_thread

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        await run(notebook.close)

    async def page(_request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def status(_request: Request) -> Response:
        kb, llm = await asyncio.gather(run(notebook.kb.status), notebook.client.check())
        return JSONResponse({"index": kb, "llm": {"backend": notebook.client.backend, "url": notebook.client.url,
                                                  "model": notebook.client.model, **llm},
                             "settings": {"think": settings.llm_think, "tools": settings.llm_tools,
                                          "upload_folder": settings.upload_folder,
                                          "max_upload_mb": settings.max_upload_mb}})  # fmt: skip

    async def documents(_request: Request) -> Response:
        rows = await run(notebook.kb.documents)
        return JSONResponse({"documents": rows, "categories": notebook.kb.category_counts()})

    async def upload(request: Request) -> Response:
        received = Received()
        try:
            await receive_files(request.headers.get("content-type", ""), request.stream(),
                                notebook.kb.open_upload, received)  # fmt: skip
        except ClientDisconnect:
            return error_response(400, "upload_refused", "the upload was interrupted")
        finally:  # files stored whole before a later one failed stay in the vault: index them too
            notebook.kb.add_uploads(received.stored, received.fields.get("category", ""))
        if not received.stored:
            raise UploadError('no file in the upload', hint='send the file in a form field named "file"')
        return JSONResponse({"uploaded": [{"path": p, "status": "queued"} for p in received.stored]}, status_code=201)

    async def delete_document(request: Request) -> Response:
        path = _path_param(request)
        await run(notebook.kb.delete, path)
        return JSONResponse({"path": path, "status": "deleting"}, status_code=202)

    async def set_category(request: Request) -> Response:
        path = _path_param(request)
        body = await _json_body(request)
        category = body.get("category") if isinstance(body, dict) else None
        if category is not None and not isinstance(category, str):
            raise QueryError('"category" must be a string or null')
        await run(notebook.kb.set_category, path, category)
        return JSONResponse({"path": path, "category": (category or "").strip() or None})

    async def chunks(request: Request) -> Response:
        path = _path_param(request)
        return JSONResponse({"path": path, "chunks": await run(notebook.kb.chunks, path)})

    async def ingest_events(request: Request) -> Response:
        queue = notebook.kb.broadcast.subscribe()

        async def watch_disconnect() -> None:  # unsubscribe even if the response is abandoned
            while (await request.receive())["type"] != "http.disconnect":
                pass
            notebook.kb.broadcast.unsubscribe(queue)

        watcher = asyncio.ensure_future(watch_disconnect())
        _running.add(watcher)
        watcher.add_done_callback(_running.discard)

        async def events() -> AsyncIterator[str]:
            try:
                yield json.dumps({"type": "snapshot", "data": notebook.kb.ingest.snapshot()}) + "\n"
                while not watcher.done():
                    try:
                        event = await asyncio.wait_for(queue.get(), timeout=15)
                        yield json.dumps({"type": "job", "data": event}) + "\n"
                    except TimeoutError:
                        yield json.dumps({"type": "ping", "data": {}}) + "\n"
            finally:
                watcher.cancel()
                notebook.kb.broadcast.unsubscribe(queue)

        return StreamingResponse(events(), media_type=NDJSON, headers={"Cache-Control": "no-store"})

    async def chat(request: Request) -> Response:
        chat_request = ChatRequest.from_json(await _json_body(request))
        conversation_id, stop = notebook.start(chat_request)
        # The answer runs in its own task and the response only relays it: when the tab
        # closes, uvicorn abandons the response mid-iteration, but the watcher still sets
        # `stop`, which closes the upstream stream, and the turn is saved as stopped.
        relay: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

        async def produce() -> None:
            try:
                async for item in notebook.answer(chat_request, conversation_id, stop):
                    relay.put_nowait(item)
            finally:
                relay.put_nowait(None)

        async def watch_disconnect() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            stop.set()

        producer = asyncio.ensure_future(produce())
        watcher = asyncio.ensure_future(watch_disconnect())
        _running.update((producer, watcher))
        producer.add_done_callback(lambda _task: watcher.cancel())
        for task in (producer, watcher):
            task.add_done_callback(_running.discard)

        async def envelopes() -> AsyncIterator[str]:
            while (item := await relay.get()) is not None:
                yield json.dumps(item, ensure_ascii=False) + "\n"

        return StreamingResponse(envelopes(), media_type=NDJSON, headers={
            "X-Conversation-Id": conversation_id, "Cache-Control": "no-store", "X-Accel-Buffering": "no"})  # fmt: skip

    async def stop_chat(request: Request) -> Response:
        stopped = notebook.stop(request.path_params["cid"])
        return JSONResponse({"conversation_id": request.path_params["cid"], "stopped": stopped})

    async def conversations(_request: Request) -> Response:
        return JSONResponse({"conversations": await run(notebook.store.list_conversations)})

    async def conversation(request: Request) -> Response:
        cid = request.path_params["cid"]
        if request.method == "DELETE":
            if not await run(notebook.store.delete_conversation, cid):
                raise QueryError(f"no conversation {cid}")
            return JSONResponse({"deleted": cid})
        found = await run(notebook.store.find_conversation, cid)
        if found is None:
            raise QueryError(f"no conversation {cid}")
        return JSONResponse(found)

    async def search(request: Request) -> Response:
        started = time.perf_counter()
        data = await _json_body(request) if request.method == "POST" else _search_of_query_string(request.query_params)
        # `categories` is this app's filter (the paths filed under them): taken out before the
        # request is read, added back as paths.
        filters = data.get("filters") if isinstance(data, dict) else None
        categories = None
        if isinstance(filters, dict) and "categories" in filters:
            categories = filters["categories"]
            data = {**data, "filters": {k: v for k, v in filters.items() if k != "categories"}}
        wanted = SearchRequest.from_mapping(data)

        def work() -> Any:
            scoped = wanted if categories is None else replace(
                wanted, filters=notebook.kb.in_categories(wanted.filters, categories))
            return notebook.kb.search(scoped).to_dict()

        body = await run(work)
        elapsed = round((time.perf_counter() - started) * 1000, 2)
        return JSONResponse(body, headers={"Server-Timing": f"search;dur={elapsed}"})

    def note_param(request: Request) -> str:
        note = request.query_params.get("path", "")
        if not note.strip():
            raise QueryError(f"give a note: {request.url.path}?path=…")
        return note

    async def links(request: Request) -> Response:
        note = note_param(request)

        def work() -> Any:
            with notebook.kb.readers.borrow() as index:
                return index.links(note).to_dict()

        return JSONResponse(await run(work))

    async def related(request: Request) -> Response:
        note = note_param(request)
        try:
            k = int(request.query_params.get("k", "10"))
        except ValueError:
            raise QueryError("k must be a whole number") from None

        def work() -> Any:
            with notebook.kb.readers.borrow() as index:
                return index.related(note, k=max(1, min(k, 50))).to_dict()

        return JSONResponse(await run(work))

    async def privacy(request: Request) -> Response:
        server = request.scope.get("server") or ("", 0)
        return JSONResponse(await run(notebook.privacy, {int(server[1] or 0)}))

    # -- the study hub ------------------------------------------------------------------------
    hub = notebook.hub

    async def study_page(_request: Request) -> Response:
        return FileResponse(STATIC / "study.html", headers={"Cache-Control": "no-cache"})

    async def materials(request: Request) -> Response:
        if request.method == "POST":
            order = Order.from_json(await _json_body(request))
            await run(notebook.kb.scope_filter, order.scope)  # a bad scope is a 400 before the model runs
            return JSONResponse(await hub.create(order), status_code=201)
        return JSONResponse({"materials": await run(hub.list, request.query_params.get("kind") or None)})

    async def material(request: Request) -> Response:
        mid = request.path_params["mid"]
        if request.method == "DELETE":
            await run(hub.delete, mid)
            return JSONResponse({"deleted": mid})
        if request.method == "PATCH":
            body = await _json_body(request)
            return JSONResponse(await run(hub.rename, mid, body.get("title") if isinstance(body, dict) else None))
        return JSONResponse(await run(lambda: hub.get(mid, opened=request.query_params.get("open") == "1")))

    async def export(request: Request) -> Response:
        body, media, name = await run(hub.export, request.path_params["mid"], request.query_params.get("format", "md"))
        return Response(body, media_type=media, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def attempts(request: Request) -> Response:
        body = await _json_body(request)
        if not isinstance(body, dict):
            raise QueryError('the request body must be {"answers": [...]}')
        graded = await run(hub.grade, request.path_params["mid"], body.get("answers"), body.get("started_at"))
        return JSONResponse(graded, status_code=201)

    async def lesson(request: Request) -> Response:
        return JSONResponse(await hub.lesson(request.path_params["mid"], request.path_params["n"] - 1))

    async def due(request: Request) -> Response:
        return JSONResponse({"cards": await run(hub.due_cards, request.path_params["mid"])})

    async def review(request: Request) -> Response:
        body = await _json_body(request)
        rating = body.get("rating") if isinstance(body, dict) else None
        return JSONResponse(await run(hub.review, request.path_params["cid"], rating), status_code=201)

    async def study_dashboard(_request: Request) -> Response:
        return JSONResponse(await run(hub.dashboard))

    routes = [
        Route("/", page),
        Route("/study", study_page),
        Route("/api/study/materials", materials, methods=["GET", "POST"]),
        Route("/api/study/materials/{mid}", material, methods=["GET", "PATCH", "DELETE"]),
        Route("/api/study/materials/{mid}/export", export),
        Route("/api/study/materials/{mid}/attempts", attempts, methods=["POST"]),
        Route("/api/study/materials/{mid}/lessons/{n:int}", lesson),
        Route("/api/study/materials/{mid}/due", due),
        Route("/api/study/cards/{cid:int}/reviews", review, methods=["POST"]),
        Route("/api/study/dashboard", study_dashboard),
        Route("/api/status", status),
        Route("/api/documents", documents, methods=["GET"]),
        Route("/api/documents", upload, methods=["POST"]),
        Route("/api/documents/{path:path}/category", set_category, methods=["PUT"]),
        Route("/api/documents/{path:path}/chunks", chunks, methods=["GET"]),
        Route("/api/documents/{path:path}", delete_document, methods=["DELETE"]),
        Route("/api/ingest/events", ingest_events),
        Route("/api/chat", chat, methods=["POST"]),
        Route("/api/chat/{cid}/stop", stop_chat, methods=["POST"]),
        Route("/api/conversations", conversations),
        Route("/api/conversations/{cid}", conversation, methods=["GET", "DELETE"]),
        Route("/api/search", search, methods=["GET", "POST"]),
        Route("/api/privacy", privacy),
        Route("/api/links", links),
        Route("/api/related", related),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={VaultseekError: _on_vaultseek_error, HTTPException: _on_http_error,
                            Exception: _on_unexpected},
    )
    app.state.notebook = notebook
    if sync_on_start:
        notebook.kb.start()
    return GuardedApp(app, notebook, token=settings.serve_token, bind_host=settings.serve_host)
