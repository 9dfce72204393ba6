"""The knowledge base over HTTP: status, documents, uploads, categories, ingestion events and
the privacy panel.

    GET  /api/status                index and model status
    GET  /api/documents             knowledge base: files, categories, ingestion state
    POST /api/documents             multipart upload (streamed into the upload folder)
    DELETE /api/documents/{path}    delete an upload and its chunks
    PUT  /api/documents/{path}/category   {"category": "law" | null}
    GET  /api/documents/{path}/chunks     the text of a document, to open a citation
    GET  /api/ingest/events         NDJSON: a snapshot, then every step of every file
    GET  /api/privacy               counts, the LLM host, and this process's live connections
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from ...errors import MissingExtraError, QueryError
from ...study.uploads import UploadError
from ..error_handling import error_response
from ..params import json_body, notebook_of, off_loop, path_param
from ..streams import NDJSON, hold, until_disconnect
from ..upload_stream import Received, receive_files

try:
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc


async def status(request: Request) -> Response:
    notebook = notebook_of(request)
    settings = notebook.config
    kb, llm = await asyncio.gather(off_loop(notebook.kb.status), notebook.client.check())
    return JSONResponse({"index": kb, "llm": {"backend": notebook.client.backend, "url": notebook.client.url,
                                              "model": notebook.client.model, **llm},
                         "settings": {"think": settings.llm_think, "tools": settings.llm_tools,
                                      "upload_folder": settings.upload_folder,
                                      "max_upload_mb": settings.max_upload_mb}})  # fmt: skip


async def documents(request: Request) -> Response:
    kb = notebook_of(request).kb
    rows, categories = await asyncio.gather(off_loop(kb.documents), off_loop(kb.category_counts))
    return JSONResponse({"documents": rows, "categories": categories})


async def upload(request: Request) -> Response:
    kb = notebook_of(request).kb
    received = Received()
    try:
        await receive_files(request.headers.get("content-type", ""), request.stream(), kb.open_upload, received)
    except ClientDisconnect:
        return error_response(400, "upload_refused", "the upload was interrupted")
    finally:  # files stored whole before a later one failed stay in the vault: index them too
        await off_loop(kb.add_uploads, received.stored, received.fields.get("category", ""))
    if not received.stored:
        raise UploadError('no file in the upload', hint='send the file in a form field named "file"')
    return JSONResponse({"uploaded": [{"path": p, "status": "queued"} for p in received.stored]}, status_code=201)


async def delete_document(request: Request) -> Response:
    path = path_param(request)
    await off_loop(notebook_of(request).kb.delete, path)
    return JSONResponse({"path": path, "status": "deleting"}, status_code=202)


async def set_category(request: Request) -> Response:
    path = path_param(request)
    body = await json_body(request)
    category = body.get("category") if isinstance(body, dict) else None
    if category is not None and not isinstance(category, str):
        raise QueryError('"category" must be a string or null')
    named = await off_loop(notebook_of(request).kb.set_category, path, category)
    return JSONResponse({"path": path, "category": named})


async def chunks(request: Request) -> Response:
    path = path_param(request)
    return JSONResponse({"path": path, "chunks": await off_loop(notebook_of(request).kb.chunks, path)})


async def ingest_events(request: Request) -> Response:
    kb = notebook_of(request).kb
    queue = kb.broadcast.subscribe()

    async def watch_disconnect() -> None:  # unsubscribe even if the response is abandoned
        await until_disconnect(request)
        kb.broadcast.unsubscribe(queue)

    watcher = asyncio.ensure_future(watch_disconnect())
    hold(watcher)

    async def events() -> AsyncIterator[str]:
        try:
            yield json.dumps({"type": "snapshot", "data": kb.ingest.snapshot()}) + "\n"
            while not watcher.done():
                try:
                    event = await asyncio.wait_for(queue.get(), timeout=15)
                    yield json.dumps({"type": "job", "data": event}) + "\n"
                except TimeoutError:
                    yield json.dumps({"type": "ping", "data": {}}) + "\n"
        finally:
            watcher.cancel()
            kb.broadcast.unsubscribe(queue)

    return StreamingResponse(events(), media_type=NDJSON, headers={"Cache-Control": "no-store"})


async def privacy(request: Request) -> Response:
    server = request.scope.get("server") or ("", 0)
    return JSONResponse(await off_loop(notebook_of(request).privacy, {int(server[1] or 0)}))


ROUTES = [
    Route("/api/status", status),
    Route("/api/documents", documents, methods=["GET"]),
    Route("/api/documents", upload, methods=["POST"]),
    Route("/api/documents/{path:path}/category", set_category, methods=["PUT"]),
    Route("/api/documents/{path:path}/chunks", chunks, methods=["GET"]),
    Route("/api/documents/{path:path}", delete_document, methods=["DELETE"]),
    Route("/api/ingest/events", ingest_events),
    Route("/api/privacy", privacy),
]
