"""OpenAI-compatible chat completions (llama.cpp's server, llama-cpp-python, vLLM, LM Studio,
Ollama at ``/v1``): ``POST {url}/chat/completions`` streamed as Server-Sent Events.

Deltas carry ``content``, ``reasoning_content`` (servers that expose reasoning) and
``tool_calls`` in fragments (name first, arguments as pieces of a JSON string), which are
put together and handed on whole when the reply ends.

Images go in a user message's ``content`` as parts: ``{"type": "text", ...}`` then one
``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}`` per image. These
servers have no standard way to say whether a model can see, so the configuration does
(``llm_vision``: true, false, or unset for "do not know, send and let the server answer").
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from ..errors import LLMError, LLMUnavailableError, VisionUnsupportedError
from .events import (
    Done,
    Event,
    Message,
    Text,
    Thinking,
    ToolCall,
    ToolSpec,
    has_images,
    image_media_type,
)
from .problems import classify
from .transport import ServerError, Transport

DEFAULT_URL = "http://localhost:8080/v1"


class OpenAIClient:
    backend = "openai"

    def __init__(self, model: str, *, url: str | None = None, api_key: str | None = None,
                 vision: bool | None = None) -> None:  # fmt: skip
        self.model = model
        self.vision_flag = vision
        """``llm_vision``: whether the served models can see images (None: not known)."""
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
        model: str | None = None,
    ) -> AsyncIterator[Event]:
        """The reply to ``messages``, streamed; ``model`` asks another model the server serves
        for this one request. Messages with images are refused before anything is sent when
        ``llm_vision = false`` (:class:`VisionUnsupportedError`)."""
        model = model or self.model
        if has_images(messages) and self.vision_flag is False:
            raise VisionUnsupportedError(
                f"the model {model} cannot see images (llm_vision = false for the server at {self.url})",
                hint="serve a vision model (llama.cpp: a model with its --mmproj file) and set llm_vision = true, "
                "or remove the images",
            )
        payload: dict[str, Any] = {
            "model": model,
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
                async for event in self.chat_stream(messages, tools=tools, think=think, format=format, model=model):
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

    async def vision(self, model: str | None = None) -> bool | None:
        """Whether the model can see images: the ``llm_vision`` setting (None: not known)."""
        return self.vision_flag

    async def models(self) -> list[dict[str, Any]]:
        """The models the server serves (``GET /models``), each ``{"name", "vision"}``."""
        try:
            listed = await self.transport.get_json("/models")
        except ServerError as exc:
            raise LLMError(f"the LLM server at {self.url} refused to list its models (HTTP {exc.status}): "
                           f"{exc.message}", hint="check that llm_url points at an OpenAI-compatible /v1 address") from None
        ids = [str(m["id"]) for m in (listed or {}).get("data", []) if isinstance(m, dict) and m.get("id")]
        return [{"name": name, "vision": self.vision_flag} for name in ids]


def _wire(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content", "")}
    if message.get("images"):
        out["content"] = [{"type": "text", "text": message.get("content", "")}] + [
            {"type": "image_url", "image_url": {"url": f"data:{image_media_type(image)};base64,"
                                                       f"{base64.b64encode(image).decode('ascii')}"}}
            for image in message["images"]
        ]  # fmt: skip
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in message["tool_calls"]
        ]
    if message["role"] == "tool":
        out["tool_call_id"] = message.get("tool_call_id", "")
    return out
