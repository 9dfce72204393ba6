"""Ollama's native chat API (``POST /api/chat``, NDJSON streaming).

Each line is ``{"message": {"content", "thinking", "tool_calls"}, "done": false}``; the last
has ``"done": true`` and the server's counts. Tool-call arguments arrive whole. Errors come
as an HTTP status with ``{"error": "..."}``, or as an ``error`` line mid-stream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from ..errors import LLMError, LLMUnavailableError
from .events import Done, Event, Message, Text, Thinking, ToolCall, ToolSpec
from .problems import classify
from .transport import ServerError, Transport

DEFAULT_URL = "http://localhost:11434"


class OllamaClient:
    backend = "ollama"

    def __init__(self, model: str, *, url: str | None = None, context: int | None = None) -> None:
        self.model = model
        self.transport = Transport(url or DEFAULT_URL)
        self.context = context

    @property
    def url(self) -> str:
        return self.transport.base_url

    async def chat_stream(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        think: bool = False,
        format: str | dict[str, Any] | None = None,
    ) -> AsyncIterator[Event]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [_wire(m) for m in messages],
            "stream": True,
        }
        payload["think"] = bool(think)  # explicit: thinking models otherwise think by default
        if tools:
            payload["tools"] = [t.to_wire() for t in tools]
        if format is not None:
            payload["format"] = format
        if self.context:
            payload["options"] = {"num_ctx": self.context}
        calls = 0
        try:
            async with self.transport.stream("/api/chat", payload) as lines:
                async for line in lines:
                    if not line.strip():
                        continue
                    try:
                        data = json.loads(line)
                    except ValueError:
                        raise LLMError(
                            f"the LLM server sent a malformed line: {line[:80]!r}",
                            hint="check that llm_url points at an Ollama server (llm_backend = \"ollama\")",
                        ) from None
                    if not isinstance(data, dict):
                        continue
                    if data.get("error"):
                        raise classify(0, str(data["error"]), self)
                    message = data.get("message") or {}
                    if message.get("thinking"):
                        yield Thinking(message["thinking"])
                    if message.get("content"):
                        yield Text(message["content"])
                    for call in message.get("tool_calls") or []:
                        function = call.get("function") or {}
                        arguments = function.get("arguments") or {}
                        if isinstance(arguments, str):
                            try:
                                arguments = json.loads(arguments)
                            except ValueError:
                                arguments = {}
                        calls += 1
                        yield ToolCall(str(function.get("name", "")), arguments if isinstance(arguments, dict) else {},
                                       call.get("id") or f"call_{calls}")  # fmt: skip
                    if data.get("done"):
                        total = data.get("total_duration")
                        yield Done(
                            reason=data.get("done_reason") or "stop",
                            prompt_tokens=data.get("prompt_eval_count"),
                            completion_tokens=data.get("eval_count"),
                            server_ms=total / 1e6 if isinstance(total, (int, float)) else None,
                        )
                        return
        except ServerError as exc:
            raise classify(exc.status, exc.message, self) from None
        raise LLMUnavailableError(
            f"the LLM server at {self.url} ended the reply before it was done",
            hint="the server may have crashed or run out of memory; see its log",
        )

    async def check(self) -> dict[str, Any]:
        """Is the server up, and does it have the model? (for the UI's status line)"""
        try:
            version = await self.transport.get_json("/api/version")
            tags = await self.transport.get_json("/api/tags")
        except (LLMError, ServerError) as exc:
            return {"ok": False, "message": str(exc)}
        names = {m.get("name") for m in (tags or {}).get("models", []) if isinstance(m, dict)}
        wanted = {self.model, f"{self.model}:latest"}
        if names and not names & wanted:
            return {"ok": False, "message": f"model {self.model} is not installed",
                    "hint": f"run `ollama pull {self.model}`"}  # fmt: skip
        return {"ok": True, "version": (version or {}).get("version")}


def _wire(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content", "")}
    if message.get("tool_calls"):
        out["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}} for c in message["tool_calls"]]
    if message["role"] == "tool" and message.get("name"):
        out["tool_name"] = message["name"]
    return out
