"""Ollama's native chat API (``POST /api/chat``, NDJSON streaming).

Each line is ``{"message": {"content", "thinking", "tool_calls"}, "done": false}``; the last
has ``"done": true`` and the server's counts. Tool-call arguments arrive whole. Errors come
as an HTTP status with ``{"error": "..."}``, or as an ``error`` line mid-stream.

Images ride on a message as ``"images": [<base64>, ...]``. Whether a model can see them is
the server's to say: ``POST /api/show`` answers ``"capabilities": ["completion", "vision",
...]`` (Ollama 0.6.4 and later; an older server says nothing, and the images are sent).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

from ..errors import LLMError, LLMUnavailableError, VisionUnsupportedError
from .events import Done, Event, Message, Text, Thinking, ToolCall, ToolSpec, has_images
from .problems import classify
from .transport import ServerError, Transport

DEFAULT_URL = "http://localhost:11434"


class OllamaClient:
    backend = "ollama"

    def __init__(self, model: str, *, url: str | None = None, context: int | None = None) -> None:
        self.model = model
        self.transport = Transport(url or DEFAULT_URL)
        self.context = context
        self._capabilities: dict[str, frozenset[str] | None] = {}

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
        """The reply to ``messages``, streamed; ``model`` asks another model the server has
        for this one request. Messages with images are refused before anything is sent when
        the server says the model cannot see (:class:`VisionUnsupportedError`)."""
        model = model or self.model
        if has_images(messages) and await self.vision(model) is False:
            raise VisionUnsupportedError(
                f"the model {model} cannot see images (the Ollama server at {self.url} does not list "
                "'vision' among its capabilities)",
                hint="choose a vision model (e.g. `ollama pull gemma3` or `qwen2.5vl`), or remove the images",
            )
        payload: dict[str, Any] = {
            "model": model,
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
                        raise classify(0, str(data["error"]), _Named(self, model))
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
            raise classify(exc.status, exc.message, _Named(self, model)) from None
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

    async def capabilities(self, model: str | None = None) -> frozenset[str] | None:
        """What the server says ``model`` can do (``completion``, ``vision``, ``tools``,
        ``thinking``, …) from ``POST /api/show``; None when it does not say (an older server,
        an unknown model, or no server). Remembered per model once answered."""
        model = model or self.model
        if model in self._capabilities:
            return self._capabilities[model]
        try:
            shown = await self.transport.post_json("/api/show", {"model": model})
        except (LLMError, ServerError):
            return None  # not remembered: the server may come up, the model may be pulled
        listed = shown.get("capabilities") if isinstance(shown, dict) else None
        found = frozenset(str(c) for c in listed) if isinstance(listed, list) else None
        self._capabilities[model] = found
        return found

    async def vision(self, model: str | None = None) -> bool | None:
        """Whether ``model`` can see images: True or False as the server says, None when it
        does not say."""
        capabilities = await self.capabilities(model)
        return None if capabilities is None else "vision" in capabilities

    async def models(self) -> list[dict[str, Any]]:
        """The models the server has (``GET /api/tags``), each ``{"name", "vision"}``."""
        tags = await self._tags()
        names = [str(m["name"]) for m in (tags or {}).get("models", []) if isinstance(m, dict) and m.get("name")]
        seen = await asyncio.gather(*(self.vision(name) for name in names))
        return [{"name": name, "vision": vision} for name, vision in zip(names, seen, strict=True)]

    async def _tags(self) -> Any:
        try:
            return await self.transport.get_json("/api/tags")
        except ServerError as exc:
            raise LLMError(f"the LLM server at {self.url} refused to list its models (HTTP {exc.status}): "
                           f"{exc.message}", hint='check that llm_url points at an Ollama server') from None


class _Named:
    """The client as :func:`classify` names it, with the model this request asked."""

    def __init__(self, client: OllamaClient, model: str) -> None:
        self.backend = client.backend
        self.model = model
        self.url = client.url


def _wire(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content", "")}
    if message.get("images"):
        out["images"] = [base64.b64encode(image).decode("ascii") for image in message["images"]]
    if message.get("tool_calls"):
        out["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}} for c in message["tool_calls"]]
    if message["role"] == "tool" and message.get("name"):
        out["tool_name"] = message["name"]
    return out
