"""Talking to a chat model on this machine (or a host the user named): the only package that
speaks HTTP to an LLM server.

    client = create_client(config)
    async for event in client.chat_stream(messages, tools=specs, think=True):
        ...   # Thinking | Text | ToolCall | Done

Backends: Ollama's native API (:mod:`.ollama`) and any OpenAI-compatible server
(:mod:`.openai`). A user message may carry ``images`` (bytes); each client sends them as its
server expects, and refuses them before sending when the model cannot see. Speech to text is
:mod:`.speech`. Failures are typed (``errors.LLMUnavailableError``, ``ModelMissingError``,
``ContextTooLongError``, ``LLMError``) with a hint the UI shows as it is. Stopping is
closing: leave the ``async for`` (or cancel the task) and the upstream stream is closed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from ..config import Config
from .events import Done, Event, Message, Text, Thinking, ToolCall, ToolSpec
from .ollama import OllamaClient
from .openai import OpenAIClient

__all__ = [
    "ChatClient", "Done", "Event", "Message", "OllamaClient", "OpenAIClient", "Text", "Thinking",
    "ToolCall", "ToolSpec", "create_client",
]  # fmt: skip


class ChatClient(Protocol):
    backend: str
    model: str

    @property
    def url(self) -> str: ...

    def chat_stream(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        think: bool = False,
        format: str | dict[str, Any] | None = None,
        model: str | None = None,
    ) -> AsyncIterator[Event]: ...

    async def check(self) -> dict[str, Any]: ...

    async def vision(self, model: str | None = None) -> bool | None: ...

    async def models(self) -> list[dict[str, Any]]: ...


def create_client(config: Config) -> ChatClient:
    """The client the configuration names (``llm_backend``, ``llm_url``, ``llm_model``,
    ``llm_vision``)."""
    if config.llm_backend == "openai":
        return OpenAIClient(config.llm_model, url=config.llm_url, vision=config.llm_vision)
    return OllamaClient(config.llm_model, url=config.llm_url, context=config.llm_context)
