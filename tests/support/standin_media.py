"""Stand-in servers over real HTTP for images and voice, speaking the real wire formats:

* :class:`VisionOllama` — Ollama's ``/api/tags``, ``/api/show`` (``capabilities``: model
  ``seer`` has ``vision``, ``blind`` has not, ``old`` answers without capabilities, as Ollama
  before 0.6.4 did) and ``/api/chat`` (NDJSON), recording the ``images`` each message brought;
* :class:`VisionOpenAI` — ``/v1/models`` and ``/v1/chat/completions`` (SSE), recording the
  ``image_url`` content parts;
* :class:`Transcription` — ``POST /v1/audio/transcriptions`` (multipart ``file``, ``model``,
  ``response_format``), recording each upload and answering ``{"text": server.text}``.

The chat replies say how many images arrived and cite ``[1]`` with its label when the
system prompt has sources, so a test can follow an attachment from upload to answer.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SOURCE_LINE = re.compile(r"^\[(\d+)\] (.+?)$", re.M)
VISION = {"seer": ["completion", "vision"], "blind": ["completion", "tools"]}


class _Server:
    """A threaded HTTP server on a free port; ``requests`` records (path, body) of each POST."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any]] = []
        handler = type("Handler", (_Handler,), {"owner": self})
        self.server = _Quiet(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Any:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def get(self, path: str) -> tuple[int, Any]:
        return 404, {"error": "not found"}

    def post(self, handler: _Handler, path: str, raw: bytes) -> None:
        handler.json(404, {"error": "not found"})


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class _Handler(BaseHTTPRequestHandler):
    owner: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args: Any) -> None:
        pass

    def json(self, status: int, data: Any) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def stream(self, content_type: str, lines: list[str]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for line in lines:
            raw = line.encode()
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:  # the name http.server calls
        status, data = self.owner.get(self.path)
        self.json(status, data)

    def do_POST(self) -> None:  # the name http.server calls
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.owner.post(self, self.path, raw)


def _reply(messages: list[dict[str, Any]], images: int) -> list[str]:
    system = next((str(m.get("content", "")) for m in messages if m.get("role") == "system"), "")
    sources = SOURCE_LINE.findall(system)
    words = [f"I see {images} image{'s' if images != 1 else ''}. "]
    if sources:
        words.append(f"The attached file says so [{sources[0][0]}] ({sources[0][1]}).")
    return words


class VisionOllama(_Server):
    """An Ollama server with a model that sees (``seer``), one that does not (``blind``) and
    one the server says nothing about (``old``)."""

    def __init__(self) -> None:
        super().__init__()
        self.url = self.base
        self.images: list[list[bytes]] = []
        """The decoded ``images`` of every user message of every chat request, in order."""

    def get(self, path: str) -> tuple[int, Any]:
        if path == "/api/version":
            return 200, {"version": "0.12.0-standin"}
        if path == "/api/tags":
            return 200, {"models": [{"name": f"{n}:latest", "model": f"{n}:latest"} for n in ("seer", "blind", "old")]}
        return 404, {"error": "not found"}

    def post(self, handler: _Handler, path: str, raw: bytes) -> None:
        body = json.loads(raw or b"{}")
        self.requests.append((path, body))
        if path == "/api/show":
            name = str(body.get("model", "")).removesuffix(":latest")
            if name not in (*VISION, "old"):
                handler.json(404, {"error": f"model '{body.get('model')}' not found"})
            elif name == "old":
                handler.json(200, {"modelfile": "", "details": {"family": "llama"}})
            else:
                handler.json(200, {"details": {"family": "gemma3"}, "capabilities": VISION[name]})
            return
        if path != "/api/chat":
            handler.json(404, {"error": "not found"})
            return
        messages = body.get("messages", [])
        seen = [base64.b64decode(image) for m in messages for image in m.get("images") or []]
        self.images.append(seen)
        lines = [json.dumps({"message": {"role": "assistant", "content": w}, "done": False}) + "\n"
                 for w in _reply(messages, len(seen))]  # fmt: skip
        lines.append(json.dumps({"message": {"role": "assistant", "content": ""}, "done": True,
                                 "done_reason": "stop", "eval_count": len(lines)}) + "\n")  # fmt: skip
        handler.stream("application/x-ndjson", lines)


class VisionOpenAI(_Server):
    """An OpenAI-compatible server (llama.cpp's, say) serving one model, ``seer-gguf``."""

    def __init__(self) -> None:
        super().__init__()
        self.url = self.base + "/v1"
        self.parts: list[list[dict[str, Any]]] = []
        """The ``image_url`` parts of every chat request, in order."""

    def get(self, path: str) -> tuple[int, Any]:
        if path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": "seer-gguf", "object": "model"}]}
        return 404, {"error": {"message": "not found"}}

    def post(self, handler: _Handler, path: str, raw: bytes) -> None:
        body = json.loads(raw or b"{}")
        self.requests.append((path, body))
        if path != "/v1/chat/completions":
            handler.json(404, {"error": {"message": "not found"}})
            return
        messages = body.get("messages", [])
        parts = [p for m in messages if isinstance(m.get("content"), list) for p in m["content"] if p.get("type") == "image_url"]
        self.parts.append(parts)
        flat = [dict(m, content=" ".join(p.get("text", "") for p in m["content"] if p.get("type") == "text"))
                if isinstance(m.get("content"), list) else m for m in messages]  # fmt: skip
        lines = [f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': w}, 'finish_reason': None}]})}\n\n"
                 for w in _reply(flat, len(parts))]  # fmt: skip
        lines.append(f"data: {json.dumps({'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})}\n\n")
        lines.append("data: [DONE]\n\n")
        handler.stream("text/event-stream", lines)


def image_of(part: dict[str, Any]) -> tuple[str, bytes]:
    """(media type, bytes) of an ``image_url`` part's data URL."""
    url = part["image_url"]["url"]
    head, _, data = url.partition(",")
    assert head.startswith("data:") and head.endswith(";base64"), head
    return head[5:-7], base64.b64decode(data)


class Transcription(_Server):
    """An OpenAI-compatible speech-to-text endpoint (as whisper.cpp's server offers with
    ``--inference-path /v1/audio/transcriptions``)."""

    def __init__(self, text: str = "what is the notice period for a tenancy") -> None:
        super().__init__()
        self.url = self.base + "/v1"
        self.text = text
        self.received: list[dict[str, Any]] = []
        """Each upload: ``{"filename", "content_type", "audio", "fields"}``."""
        self.arrived = threading.Event()

    def post(self, handler: _Handler, path: str, raw: bytes) -> None:
        self.requests.append((path, None))
        if path != "/v1/audio/transcriptions":
            handler.json(404, {"error": {"message": "not found"}})
            return
        content_type = handler.headers.get("Content-Type", "")
        if not content_type.startswith("multipart/form-data"):
            handler.json(400, {"error": {"message": "expected multipart/form-data"}})
            return
        message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields: dict[str, str] = {}
        upload: dict[str, Any] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True) or b""
            if part.get_filename():
                upload = {"filename": part.get_filename(), "content_type": part.get_content_type(), "audio": payload}
            else:
                fields[str(name)] = payload.decode()
        if not upload:
            handler.json(400, {"error": {"message": "no file"}})
            return
        self.received.append({**upload, "fields": fields})
        self.arrived.set()
        handler.json(200, {"text": f" {self.text} "})
