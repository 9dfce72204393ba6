"""The chat over HTTP: answers streamed as NDJSON envelopes, and saved conversations.

    POST /api/chat                  NDJSON envelopes: metadata, thinking, text, error, done
                                    ({"question", "conversation_id", "scope", "think", "tools",
                                    "k", "attachments", "model", "replace_from"}: ChatRequest)
    POST /api/chat/{id}/stop        stop the answer being written in that conversation
    GET  /api/conversations[/{id}]  saved conversations (DELETE one to forget it)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from ...errors import MissingExtraError, NotFoundError
from ...study import ChatRequest
from ..params import json_body, notebook_of, off_loop
from ..streams import NDJSON, hold, until_disconnect

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc


async def chat(request: Request) -> Response:
    notebook = notebook_of(request)
    chat_request = ChatRequest.from_json(await json_body(request))
    conversation_id = await off_loop(notebook.open, chat_request)
    stop = notebook.register(conversation_id)
    # The answer runs in its own task and the response only relays it: when the tab closes,
    # uvicorn abandons the response mid-iteration, but the watcher still sets `stop`, which
    # closes the upstream stream, and the turn is saved as stopped.
    relay: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    async def produce() -> None:
        try:
            async for item in notebook.answer(chat_request, conversation_id, stop):
                relay.put_nowait(item)
        finally:
            relay.put_nowait(None)

    async def watch_disconnect() -> None:
        await until_disconnect(request)
        stop.set()

    producer = asyncio.ensure_future(produce())
    watcher = asyncio.ensure_future(watch_disconnect())
    producer.add_done_callback(lambda _task: watcher.cancel())
    hold(producer, watcher)

    async def envelopes() -> AsyncIterator[str]:
        while (item := await relay.get()) is not None:
            yield json.dumps(item, ensure_ascii=False) + "\n"

    return StreamingResponse(envelopes(), media_type=NDJSON, headers={
        "X-Conversation-Id": conversation_id, "Cache-Control": "no-store", "X-Accel-Buffering": "no"})  # fmt: skip


async def stop_chat(request: Request) -> Response:
    stopped = notebook_of(request).stop(request.path_params["cid"])
    return JSONResponse({"conversation_id": request.path_params["cid"], "stopped": stopped})


async def conversations(request: Request) -> Response:
    return JSONResponse({"conversations": await off_loop(notebook_of(request).store.list_conversations)})


async def conversation(request: Request) -> Response:
    store = notebook_of(request).store
    cid = request.path_params["cid"]
    if request.method == "DELETE":
        if not await off_loop(store.delete_conversation, cid):
            raise NotFoundError(f"no conversation {cid}")
        return JSONResponse({"deleted": cid})
    found = await off_loop(store.find_conversation, cid)
    if found is None:
        raise NotFoundError(f"no conversation {cid}")
    return JSONResponse(found)


ROUTES = [
    Route("/api/chat", chat, methods=["POST"]),
    Route("/api/chat/{cid}/stop", stop_chat, methods=["POST"]),
    Route("/api/conversations", conversations),
    Route("/api/conversations/{cid}", conversation, methods=["GET", "DELETE"]),
]
