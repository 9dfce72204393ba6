"""OpenAI-compatible chat completions (llama.cpp's server, llama-cpp-python, vLLM, LM Studio,
Ollama at ``/v1``): ``POST {url}/chat/completions`` streamed as Server-Sent Events.

Deltas carry ``content``, ``reasoning_content`` (servers that expose reasoning) and
``tool_calls`` in fragments (name first, arguments as pieces of a JSON string), which are
put together and handed on whole when the reply ends.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from ..errors import LLMError, LLMUnavailableError
from .events import Done, Event, Message, Text, Thinking, ToolCall, ToolSpec
from .problems import classify
from .transport import ServerError, Transport

DEFAULT_URL = "http://localhost:8080/v1"


class OpenAIClient:
    backend = "openai"

    def __init__(self, model: str, *, url: str | None = None, api_key: str | None = None) -> None:
        self.model = model
        self.transport = Transport(url or DEFAULT_URL, api_key=api_key)
        self.schema_style = "json_schema"
        """How a JSON schema is sent: OpenAI's ``json_schema``, or — for servers that refuse
        it, such as llama-cpp-python's — ``{"type": "json_object", "schema": ...}``."""

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
        if tools:
            payload["tools"] = [t.to_wire() for t in tools]
        if format == "json":
            payload["response_format"] = {"type": "json_object"}
        elif isinstance(format, dict) and self.schema_style == "json_schema":
            payload["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": format}}
        elif isinstance(format, dict):
            payload["response_format"] = {"type": "json_object", "schema": format}
        started = time.perf_counter()
        pending: dict[int, dict[str, Any]] = {}
        reason = "stop"
        usage: dict[str, Any] = {}
        pieces = 0
        try:
            async with self.transport.stream("/chat/completions", payload) as lines:
                async for line in lines:
                    if not line.startswith("data:"):
                        continue  # SSE comments, event names, blank separators
                    body = line[5:].strip()
                    if body == "[DONE]":
                        break
                    try:
                        data = json.loads(body)
                    except ValueError:
                        raise LLMError(
                            f"the LLM server sent a malformed event: {body[:80]!r}",
                            hint="check that llm_url points at an OpenAI-compatible /v1 address",
                        ) from None
                    if not isinstance(data, dict):
                        continue
                    if data.get("error"):
                        error = data["error"]
                        raise classify(0, str(error.get("message", error) if isinstance(error, dict) else error), self)
                    usage = data.get("usage") or usage
                    for choice in data.get("choices") or []:
                        delta = choice.get("delta") or {}
                        thinking = delta.get("reasoning_content") or delta.get("reasoning")
                        if thinking:
                            yield Thinking(thinking)
                        if delta.get("content"):
                            pieces += 1
                            yield Text(delta["content"])
                        for fragment in delta.get("tool_calls") or []:
                            slot = pending.setdefault(int(fragment.get("index", len(pending))), {"id": "", "name": "", "arguments": ""})
                            slot["id"] = fragment.get("id") or slot["id"]
                            function = fragment.get("function") or {}
                            slot["name"] += function.get("name") or ""
                            slot["arguments"] += function.get("arguments") or ""
                        if choice.get("finish_reason"):
                            reason = choice["finish_reason"]
                else:
                    if not pending and not pieces and reason == "stop":
                        raise LLMUnavailableError(
                            f"the LLM server at {self.url} ended the reply without a word",
                            hint="see the server's log; llama-cpp-python ends the stream like this when "
                            "the prompt is longer than its context (raise its --n_ctx, or lower llm_context)",
                        )
        except ServerError as exc:
            if isinstance(format, dict) and self.schema_style == "json_schema" and exc.status >= 400 and not pieces:
                self.schema_style = "json_object"  # the server refused the OpenAI form: once, then remembered
                async for event in self.chat_stream(messages, tools=tools, think=think, format=format):
                    yield event
                return
            raise classify(exc.status, exc.message, self) from None
        for number, slot in sorted(pending.items()):
            try:
                arguments = json.loads(slot["arguments"] or "{}")
            except ValueError:
                arguments = {}
            yield ToolCall(slot["name"], arguments if isinstance(arguments, dict) else {}, slot["id"] or f"call_{number}")
        yield Done(
            reason=reason,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens", pieces or None),
            server_ms=round((time.perf_counter() - started) * 1000, 1),
        )

    async def check(self) -> dict[str, Any]:
        try:
            models = await self.transport.get_json("/models")
        except (LLMError, ServerError) as exc:
            return {"ok": False, "message": str(exc)}
        ids = [m.get("id") for m in (models or {}).get("data", []) if isinstance(m, dict)]
        if ids and self.model not in ids and len(ids) > 1:
            return {"ok": False, "message": f"model {self.model} is not served (serving: {', '.join(map(str, ids))})",
                    "hint": "set llm_model to one of them"}  # fmt: skip
        return {"ok": True, "models": ids}


def _wire(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content", "")}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in message["tool_calls"]
        ]
    if message["role"] == "tool":
        out["tool_call_id"] = message.get("tool_call_id", "")
    return out
