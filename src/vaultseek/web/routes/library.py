"""The knowledge base over HTTP: status, documents, uploads, categories, ingestion events and
the privacy panel.

    GET  /api/status                index and model status
    GET  /api/documents             one page of the knowledge base's files: ?q= (path and
                                    title), folder, category, status, kind, sort, order,
                                    offset, limit (50, at most 200) → {total, offset, limit, items}
    GET  /api/documents/tree        folders with file counts, categories, counts by status and kind
    POST /api/documents             multipart upload (streamed into the upload folder);
                                    ?on_conflict=replace|keep_both for a name already there
                                    (without it: 409 {conflict: {name, existing}}); a file whose
                                    bytes are there already is not stored: {duplicate_of}
    DELETE /api/documents/{path}    delete an upload and its chunks
    PUT  /api/documents/{path}/category   {"category": "law" | null}
    GET  /api/documents/{path}/chunks     the text of a document, to open a citation
    GET  /api/ingest/events         NDJSON: a snapshot, then every step of every file
    GET  /api/privacy               counts, the LLM host, and this process's live connections
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from ...errors import MissingExtraError, QueryError
from ...study.catalogue import DocumentQuery
from ...study.chat import start_hint
from ...study.uploads import HashedUpload, StoredUpload, UploadConflictError, UploadError
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
    """The index's counts and the model server's state; a model server that does not answer
    comes with the fix (start it, at the address the app asks), as the chat's own error does."""
    notebook = notebook_of(request)
    settings = notebook.config
    kb, llm = await asyncio.gather(off_loop(notebook.kb.status), notebook.client.check())
    if not llm.get("ok") and not llm.get("hint"):
        llm["hint"] = start_hint(notebook.client)
    return JSONResponse({"index": kb, "llm": {"backend": notebook.client.backend, "url": notebook.client.url,
                                              "model": notebook.client.model, **llm},
                         "settings": {"think": settings.llm_think, "tools": settings.llm_tools,
                                      "upload_folder": settings.upload_folder,
                                      "max_upload_mb": settings.max_upload_mb}})  # fmt: skip


async def documents(request: Request) -> Response:
    started = time.perf_counter()
    query = DocumentQuery.parse(request.query_params)
    body = await off_loop(notebook_of(request).kb.list_documents, query)
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    return JSONResponse(body, headers={"Server-Timing": f"documents;dur={elapsed}"})


async def document_tree(request: Request) -> Response:
    started = time.perf_counter()
    body = await off_loop(notebook_of(request).kb.tree)
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    return JSONResponse(body, headers={"Server-Timing": f"tree;dur={elapsed}"})


async def upload(request: Request) -> Response:
    """Store the files of a multipart body, then index them. The upload stops at the first
    file that is refused or whose name is taken (409 unless ``on_conflict`` says what to do);
    the files stored before it are kept and indexed, and said in the answer. A file whose
    bytes the knowledge base holds already is removed again and reported as a duplicate."""
    kb = notebook_of(request).kb
    received = Received()
    stored: list[StoredUpload] = []
    asked = request.query_params.get("on_conflict") or None

    def open_sink(name: str) -> HashedUpload:  # a form field before the file may say it too
        return kb.open_upload(name, on_conflict=asked or received.fields.get("on_conflict") or None, into=stored)

    taken: UploadConflictError | None = None
    try:
        await receive_files(request.headers.get("content-type", ""), request.stream(), open_sink, received)
    except ClientDisconnect:
        return error_response(400, "upload_refused", "the upload was interrupted")
    except UploadConflictError as exc:
        taken = exc
    finally:  # files stored whole before a later one failed stay in the vault: index them too
        kept, duplicates = await off_loop(kb.settle_uploads, stored)
        await off_loop(kb.add_uploads, kept, received.fields.get("category", ""))
    uploaded = [{"path": p, "status": "queued"} for p in kept]
    if taken is not None:
        return _refused(409, "name_taken", taken.message, taken.hint, conflict=taken.conflict,
                        uploaded=uploaded, duplicates=duplicates)  # fmt: skip
    if duplicates and not kept:
        first = duplicates[0]
        return _refused(409, "duplicate", f"{first['name']} has the same content as {first['duplicate_of']}",
                        "nothing was stored: the knowledge base holds these bytes already",
                        duplicate_of=first["duplicate_of"], uploaded=uploaded, duplicates=duplicates)  # fmt: skip
    if not kept:
        raise UploadError('no file in the upload', hint='send the file in a form field named "file"')
    return JSONResponse({"uploaded": uploaded, "duplicates": duplicates}, status_code=201)


def _refused(status: int, code: str, message: str, hint: str | None, **details: Any) -> Response:
    """The app's error body with what the client needs to ask the user (the conflict, the
    duplicate) and what was stored all the same."""
    body = {"error": {"code": code, "message": message, "hint": hint}, **details}
    return JSONResponse(body, status_code=status)


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
    Route("/api/documents/tree", document_tree, methods=["GET"]),
    Route("/api/documents", upload, methods=["POST"]),
    Route("/api/documents/{path:path}/category", set_category, methods=["PUT"]),
    Route("/api/documents/{path:path}/chunks", chunks, methods=["GET"]),
    Route("/api/documents/{path:path}", delete_document, methods=["DELETE"]),
    Route("/api/ingest/events", ingest_events),
    Route("/api/privacy", privacy),
]
