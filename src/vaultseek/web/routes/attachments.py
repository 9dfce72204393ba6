"""Images, files and voice in the chat, and the models to choose from, over HTTP.

    GET    /api/attachments                 what the attach button takes (endings, sizes)
    POST   /api/attachments                 multipart, one file (field "file"; optional
                                            "conversation_id") → {id, kind, name, size,
                                            media_type, chunks?, width?, height?}
    GET    /api/attachments/{id}            the cleaned image, or the file as given (download)
    GET    /api/attachments/{id}/chunks     a document's passages, as /api/documents/…/chunks
    DELETE /api/attachments/{id}            forget one not sent yet (a chip removed)
    POST   /api/attachments/{id}/add-to-library   {"category"?, "on_conflict"?} → 202 {path,
                                            status: "queued"}; 200 {status: "duplicate",
                                            duplicate_of}; 409 {conflict} for a name taken
    GET    /api/transcribe                  {available, engine, where, hint}
    POST   /api/transcribe                  the recording as the body (audio/wav…) → {text}
    GET    /api/models                      {models: [{name, vision}], current, backend, error?}
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ...errors import LLMError, MissingExtraError, QueryError, TranscriptionError
from ...llm.speech import (
    MAX_AUDIO_BYTES,
    SETUP_HINT,
    RecordingRefusedError,
    Transcriber,
    create_transcriber,
)
from ...study import attachments
from ...study.uploads import UploadConflictError, UploadError
from ..error_handling import error_response
from ..params import json_body, notebook_of, off_loop
from ..upload_stream import Received, receive_files

try:
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

AUDIO_TYPES = ("audio/wav", "audio/x-wav", "audio/wave", "audio/webm", "audio/ogg", "audio/mpeg", "audio/mp4",
               "audio/flac", "application/octet-stream")  # fmt: skip
AUDIO_SUFFIX = {"audio/webm": "webm", "audio/ogg": "ogg", "audio/mpeg": "mp3", "audio/mp4": "m4a", "audio/flac": "flac"}


class MemorySink:
    """One attached file as it arrives, held in memory up to its kind's limit (an image's or
    a document's); refused by its name before a byte is read when the chat cannot take it."""

    def __init__(self, name: str, limit_of: Any) -> None:
        self.name = attachments.clean_name(name)
        self.limit: int = limit_of(self.name)
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data
        if len(self.data) > self.limit:
            self.abort()
            raise attachments.too_large(self.name, self.limit)

    def commit(self) -> str:
        return self.name

    def abort(self) -> None:
        self.data = bytearray()


async def accepted(request: Request) -> Response:
    return JSONResponse(attachments.accepted(notebook_of(request).config))


async def upload(request: Request) -> Response:
    notebook = notebook_of(request)
    sinks: list[MemorySink] = []

    def open_sink(name: str) -> MemorySink:
        if sinks:
            raise UploadError("attach one file per request", hint="send each file in its own request")
        sinks.append(MemorySink(name, lambda clean: attachments.limit_for(clean, notebook.config)))
        return sinks[-1]

    received = Received()
    try:
        await receive_files(request.headers.get("content-type", ""), request.stream(), open_sink, received)
    except ClientDisconnect:
        return error_response(400, "upload_refused", "the upload was interrupted")
    if not received.stored or not sinks:
        raise UploadError("no file in the upload", hint='send the file in a form field named "file"')
    sink = sinks[0]
    conversation_id = received.fields.get("conversation_id") or None
    record = await off_loop(lambda: attachments.attach(notebook.store, notebook.config, sink.name, bytes(sink.data),
                                                       conversation_id=conversation_id))  # fmt: skip
    return JSONResponse(record, status_code=201)


async def fetch(request: Request) -> Response:
    record, data = await off_loop(attachments.content, notebook_of(request).store, request.path_params["aid"])
    disposition = "inline" if record["kind"] == "image" else "attachment"
    return Response(data, media_type=record["media_type"], headers={
        "Content-Disposition": f"{disposition}; filename*=UTF-8''{quote(record['name'])}",
        "Cache-Control": "private, max-age=86400",
        "Content-Security-Policy": "default-src 'none'; sandbox",  # a document is never run as a page
    })  # fmt: skip


async def chunks(request: Request) -> Response:
    store = notebook_of(request).store
    aid = request.path_params["aid"]
    record = await off_loop(attachments.get, store, aid)
    found = await off_loop(attachments.chunks, store, aid)
    return JSONResponse({"path": f"{attachments.PATH_PREFIX}{aid}/{record['name']}", "name": record["name"],
                         "chunks": found})  # fmt: skip


async def remove(request: Request) -> Response:
    aid = request.path_params["aid"]
    await off_loop(attachments.delete, notebook_of(request).store, aid)
    return JSONResponse({"deleted": aid})


async def add_to_library(request: Request) -> Response:
    notebook = notebook_of(request)
    body = await json_body(request)
    body = body if isinstance(body, dict) else {}
    category, on_conflict = body.get("category"), body.get("on_conflict")
    if category is not None and not isinstance(category, str):
        raise QueryError('"category" must be a string or null')
    if on_conflict is not None and not isinstance(on_conflict, str):
        raise QueryError('"on_conflict" must be "replace" or "keep_both"')
    try:
        filed = await off_loop(lambda: attachments.add_to_library(notebook.kb, notebook.store, request.path_params["aid"],
                                                                  category=category, on_conflict=on_conflict))  # fmt: skip
    except UploadConflictError as exc:  # the knowledge base's own answer for a name taken
        return JSONResponse({"error": {"code": "name_taken", "message": exc.message, "hint": exc.hint},
                             "conflict": exc.conflict}, status_code=409)  # fmt: skip
    return JSONResponse(filed, status_code=202 if filed["status"] == "queued" else 200)


def transcriber_of(request: Request) -> Transcriber | None:
    """The app's transcriber, made once (it holds a connection pool, or a loaded model)."""
    state = request.app.state
    if not hasattr(state, "transcriber"):
        state.transcriber = create_transcriber(notebook_of(request).config)
    found: Transcriber | None = state.transcriber
    return found


async def transcription_status(request: Request) -> Response:
    transcriber = transcriber_of(request)
    if transcriber is None:
        return JSONResponse({"available": False, "engine": None, "where": None, "hint": SETUP_HINT})
    return JSONResponse({"available": True, **transcriber.describe(), "hint": None})


async def transcribe(request: Request) -> Response:
    transcriber = transcriber_of(request)
    if transcriber is None:
        return error_response(503, "transcription_unavailable", "no transcription server is configured", SETUP_HINT)
    media_type = request.headers.get("content-type", "audio/wav").split(";")[0].strip().lower()
    if media_type not in AUDIO_TYPES:
        return error_response(415, "upload_refused", f"{media_type} is not an audio type the app forwards",
                              "send the recording as audio/wav")  # fmt: skip
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_AUDIO_BYTES:
        return error_response(413, "upload_refused", f"the recording is larger than {MAX_AUDIO_BYTES // (1024 * 1024)} MB",
                              "record a shorter message")  # fmt: skip
    audio = bytearray()
    try:
        async for piece in request.stream():
            audio += piece
            if len(audio) > MAX_AUDIO_BYTES:
                return error_response(413, "upload_refused", "the recording is too large", "record a shorter message")
    except ClientDisconnect:
        return error_response(400, "upload_refused", "the recording was interrupted")
    suffix = AUDIO_SUFFIX.get(media_type, "wav")
    try:
        text = await transcriber.transcribe(bytes(audio), filename=f"speech.{suffix}", media_type=media_type)
    except RecordingRefusedError as exc:
        return error_response(400, "bad_recording", exc.message, exc.hint)
    except TranscriptionError as exc:
        return error_response(502, "transcription_failed", exc.message, exc.hint)
    return JSONResponse({"text": text, "engine": transcriber.engine})


async def models(request: Request) -> Response:
    client = notebook_of(request).client
    out: dict[str, Any] = {"current": client.model, "backend": client.backend, "models": []}
    try:
        out["models"] = await client.models()
    except LLMError as exc:  # the picker still shows the configured model, and why the list is empty
        out["error"] = {"message": exc.message, "hint": exc.hint}
    if client.model not in {m["name"] for m in out["models"]} and f"{client.model}:latest" not in {m["name"] for m in out["models"]}:
        out["models"].insert(0, {"name": client.model, "vision": await client.vision(), "installed": False})
    return JSONResponse(out)


ROUTES = [
    Route("/api/attachments", accepted, methods=["GET"]),
    Route("/api/attachments", upload, methods=["POST"]),
    Route("/api/attachments/{aid}", fetch, methods=["GET"]),
    Route("/api/attachments/{aid}", remove, methods=["DELETE"]),
    Route("/api/attachments/{aid}/chunks", chunks, methods=["GET"]),
    Route("/api/attachments/{aid}/add-to-library", add_to_library, methods=["POST"]),
    Route("/api/transcribe", transcription_status, methods=["GET"]),
    Route("/api/transcribe", transcribe, methods=["POST"]),
    Route("/api/models", models, methods=["GET"]),
]
