"""A stand-in reranker over real HTTP: llama.cpp's ``POST /v1/rerank`` and TEI's ``POST
/rerank`` shapes, scoring each passage by how many of the query's words it holds (so a test
knows what the order must be).

``behaviour`` chooses what it does: ``ok``; ``500`` (an error status with llama.cpp's error
body); ``garbage`` (a 200 whose body is not JSON); ``empty`` (JSON without scores); ``slow``
(answers after ``delay`` seconds); ``reverse`` (scores the passages against the query's
words backwards: the fewer query words, the higher). ``requests`` records every body.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StandinReranker:
    def __init__(self, *, behaviour: str = "ok", delay: float = 2.0) -> None:
        self.behaviour = behaviour
        self.delay = delay
        self.requests: list[tuple[str, dict[str, Any]]] = []
        handler = type("Handler", (_Handler,), {"standin": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StandinReranker:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def word_overlap(query: str, passage: str) -> float:
    words = set(re.findall(r"\w+", query.lower()))
    return float(len(words & set(re.findall(r"\w+", passage.lower()))))


class _Handler(BaseHTTPRequestHandler):
    standin: StandinReranker

    def log_message(self, *_args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on a slow answer, as a test of the timeout means it to

    def do_POST(self) -> None:  # the name http.server calls
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.standin.requests.append((self.path, body))
        behaviour = self.standin.behaviour
        if behaviour == "slow":
            time.sleep(self.standin.delay)
        if behaviour == "500":
            self._send(
                500,
                json.dumps(
                    {
                        "error": {
                            "code": 500,
                            "message": "the reranker crashed",
                            "type": "server_error",
                        }
                    }
                ).encode(),
            )
            return
        if behaviour == "garbage":
            self._send(200, b"<html>not a reranker</html>")
            return
        if behaviour == "empty":
            self._send(200, b'{"results": []}')
            return
        passages = body.get("documents") if self.path == "/v1/rerank" else body.get("texts")
        if self.path not in ("/v1/rerank", "/rerank") or not isinstance(passages, list):
            self._send(404, b'{"error": "Not Found"}')
            return
        scores = [word_overlap(body["query"], p) for p in passages]
        if behaviour == "reverse":
            scores = [-s for s in scores]
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        if self.path == "/v1/rerank":
            answer: Any = {"model": body.get("model", "reranker"), "object": "list",
                           "results": [{"index": i, "relevance_score": scores[i]} for i in order]}  # fmt: skip
        else:
            answer = [{"index": i, "score": scores[i]} for i in order]
        self._send(200, json.dumps(answer).encode())
