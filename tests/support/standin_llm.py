"""A stand-in LLM server over real HTTP that speaks Ollama's wire format (and a little of the
OpenAI-compatible one), for API, UI and benchmark use.

Behaviour is chosen by markers in the last user message (or by the model name):

* default: streams an answer that cites ``[1]`` and quotes the first source it was given;
* ``#think``: streams ``thinking`` first when the request has ``"think": true``;
* ``#tool:NAME {json}``: the first round asks for tool NAME with those arguments, the second
  answers with the tool's result;
* ``#slow``: 0.2 s between tokens (for the stop button and disconnects);
* ``#malformed``: a broken JSON line mid-stream; ``#cut``: the stream ends without ``done``;
* ``#context``: a context-length error; model ``missing``: 404 model not found;
  ``#midstream-error``: an ``{"error": ...}`` line after some tokens.

``server.requests`` records every request body, for tests to inspect prompts and scopes;
``server.scripted`` is a list of replies (raw text) sent, in order, before any of the above.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SOURCE_LINE = re.compile(r"^\[(\d+)\] (.+?)$", re.M)


class StandinLLM:
    def __init__(self, *, token_delay: float = 0.0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.scripted: list[str] = []
        self.token_delay = token_delay
        self.closed_early = threading.Event()
        handler = type("Handler", (_Handler,), {"standin": self})
        self.server = _QuietServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.prefix = f"/standin-{secrets.token_hex(4)}"
        """Every URL of this stand-in starts with it. A port is reused once a stand-in closes;
        a client left over from an earlier one (a test's app still streaming) then gets 404s
        instead of taking this one's scripted replies."""
        self.url = f"http://127.0.0.1:{self.port}{self.prefix}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StandinLLM:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _last_user(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def _sources(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
    return SOURCE_LINE.findall(system)


def plan_reply(body: dict[str, Any], *, openai: bool = False) -> dict[str, Any]:
    """What to send for one request: thinking, tokens, tool calls, or an error."""
    messages = body.get("messages", [])
    question = _last_user(messages)
    if body.get("model") == "missing":
        return {"status": 404, "error": f"model '{body['model']}' not found"}
    if "#context" in question:
        return {"status": 400, "error": "the input length exceeds the context length"}
    thinking = ["Let me ", "look at ", "the sources."] if "#think" in question and (body.get("think") or openai) else []
    tool = re.search(r"#tool:(\w+)\s*(\{.*?\})?\s*$", question, re.S)
    answered_tool = messages and messages[-1].get("role") == "tool"
    if tool and not answered_tool and body.get("tools"):
        args = json.loads(tool.group(2) or "{}")
        return {"thinking": thinking, "tokens": [], "slow": False, "malformed": False, "cut": False,
                "midstream_error": False, "tool_calls": [{"function": {"name": tool.group(1), "arguments": args}}]}
    if answered_tool:
        result = str(messages[-1].get("content", ""))
        tokens = ["The ", "tool ", "said: "] + [w + " " for w in result.split()[:40]]
    else:
        sources = _sources(messages)
        if sources:
            number, label = sources[0]
            tokens = ["According ", "to ", f"[{number}] ", f"({label}), ", "the ", "sources ", "answer ", "it."]
        elif not any(m.get("role") == "system" for m in messages):  # a tool's own request
            tokens = ["Summary: "] + [w + " " for w in question.split()[:60]]
        else:
            tokens = ["I ", "found ", "nothing ", "relevant."]
    return {
        "thinking": thinking,
        "tokens": tokens,
        "slow": "#slow" in question,
        "malformed": "#malformed" in question,
        "cut": "#cut" in question,
        "midstream_error": "#midstream-error" in question,
    }


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up (a stopped answer, a closed test loop) are expected


class _Handler(BaseHTTPRequestHandler):
    standin: StandinLLM
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each token leaves at once, as from a real server

    def log_message(self, *_args: Any) -> None:
        pass

    def _json(self, status: int, data: Any) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _route(self) -> str | None:
        """The path below this stand-in's prefix; None (after a 404) for any other."""
        prefix = self.standin.prefix
        if self.path != prefix and not self.path.startswith(prefix + "/"):
            self._json(404, {"error": "not this stand-in"})
            return None
        return self.path[len(prefix):]

    def do_GET(self) -> None:  # the name http.server calls
        path = self._route()
        if path is None:
            return
        if path == "/api/version":
            self._json(200, {"version": "0.0-standin"})
        elif path == "/api/tags":
            self._json(200, {"models": [{"name": "standin:latest"}]})
        elif path == "/v1/models":
            self._json(200, {"data": [{"id": "standin"}]})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:  # the name http.server calls
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        path = self._route()
        if path is None:
            return
        if path == "/api/show":  # what the model can do, as Ollama says it (no vision here)
            self._json(200, {"details": {"family": "standin"}, "capabilities": ["completion", "tools", "thinking"]})
            return
        self.standin.requests.append(body)
        openai = path.startswith("/v1/")
        plan = plan_reply(body, openai=openai)
        if self.standin.scripted:
            text = self.standin.scripted.pop(0)
            step = max(1, len(text) // 3)
            plan = {"thinking": [], "tokens": [text[i:i + step] for i in range(0, len(text), step)], "slow": False,
                    "malformed": False, "cut": False, "midstream_error": False}
        if "error" in plan:
            self._json(plan["status"], {"error": plan["error"]})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if openai else "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        delay = 0.2 if plan["slow"] else self.standin.token_delay
        lines: list[dict[str, Any] | str] = []
        for piece in plan["thinking"]:
            lines.append({"message": {"role": "assistant", "content": "", "thinking": piece}, "done": False})
        for i, piece in enumerate(plan["tokens"]):
            if plan["malformed"] and i == 2:
                lines.append('{"message": {"content": "bro')
            if plan["midstream_error"] and i == 2:
                lines.append({"error": "the model runner crashed"})
            lines.append({"message": {"role": "assistant", "content": piece}, "done": False})
        if plan.get("tool_calls"):
            lines.append({"message": {"role": "assistant", "content": "", "tool_calls": plan["tool_calls"]}, "done": False})
        if not plan.get("cut"):
            lines.append({"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
                          "prompt_eval_count": 321, "eval_count": len(plan["tokens"]), "total_duration": 12_000_000})
        try:
            for line in lines:
                if openai:
                    line = _as_openai(line)
                self._chunk(line if isinstance(line, str) else json.dumps(line))
                if delay:
                    time.sleep(delay)
            if openai and not plan.get("cut"):
                self._chunk("data: [DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.standin.closed_early.set()

    def _chunk(self, text: str) -> None:
        raw = (text + "\n" + ("\n" if text.startswith("data:") else "")).encode()
        self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
        self.wfile.flush()


def _as_openai(line: dict[str, Any] | str) -> str:
    if isinstance(line, str):
        return "data: " + line
    if "error" in line:
        return "data: " + json.dumps({"error": {"message": line["error"]}})
    message = line.get("message", {})
    delta: dict[str, Any] = {}
    if message.get("thinking"):
        delta["reasoning_content"] = message["thinking"]
    if message.get("content"):
        delta["content"] = message["content"]
    if message.get("tool_calls"):
        delta["tool_calls"] = [
            {"index": i, "id": f"call_{i}", "function": {"name": c["function"]["name"], "arguments": json.dumps(c["function"]["arguments"])}}
            for i, c in enumerate(message["tool_calls"])
        ]
    finish = ("tool_calls" if message.get("tool_calls") else "stop") if line.get("done") or message.get("tool_calls") else None
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
