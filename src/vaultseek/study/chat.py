"""One grounded answer, as a stream of envelopes ``{"type", "data"}``:

    thinking  the model's reasoning tokens, as they arrive (models that expose them)
    metadata  the numbered citations (path, section, page/slide, snippet) — always before the
              first answer token, and again when a tool adds sources or runs
    text      answer tokens
    error     something the UI can show as it is: a message, a hint, a code
    done      timings, token counts, whether it was stopped, the ids to resume with

Retrieval runs under the request's own scope (never shared state), the model may call tools
for a few rounds, and the turn is saved to the conversation whatever happens — answered,
failed, stopped, or abandoned by a closed tab.
"""

from __future__ import annotations

import asyncio
import sys
import time
import traceback
from collections.abc import AsyncIterator
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..config import Config
from ..errors import (
    ContextTooLongError,
    LLMError,
    LLMUnavailableError,
    ModelMissingError,
    NotFoundError,
    QueryError,
    VaultseekError,
)
from ..llm import ChatClient, Done, Message, Text, Thinking, ToolCall
from .library import KnowledgeBase
from .sources import CHARS_PER_TOKEN, SourceList, system_prompt
from .storage import StudyStore
from .tools import SPECS, Toolbox

MAX_ROUNDS = 4
"""Model calls per answer: up to three rounds of tool calls, then a final answer."""
HISTORY_MESSAGES = 6
MAX_QUESTION_CHARS = 8_000

T = TypeVar("T")


@dataclass(frozen=True)
class ChatRequest:
    question: str
    conversation_id: str | None = None
    scope: dict[str, Any] = field(default_factory=dict)
    think: bool | None = None
    tools: bool | None = None
    k: int = 6

    @classmethod
    def from_json(cls, data: Any) -> ChatRequest:
        if not isinstance(data, dict):
            raise QueryError("the request body must be a JSON object")
        question = data.get("question")
        if not isinstance(question, str) or not question.strip():
            raise QueryError('"question" must be a non-empty string')
        if len(question) > MAX_QUESTION_CHARS:
            raise QueryError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
        scope = data.get("scope") or {}
        if not isinstance(scope, dict):
            raise QueryError('"scope" must be an object such as {"categories": ["law"]}')
        k = data.get("k", 6)
        if not isinstance(k, int) or not 1 <= k <= 20:
            raise QueryError('"k" must be a whole number from 1 to 20')
        flags = {name: data.get(name) for name in ("think", "tools")}
        for name, value in flags.items():
            if value is not None and not isinstance(value, bool):
                raise QueryError(f'"{name}" must be true or false')
        cid = data.get("conversation_id")
        if cid is not None and not isinstance(cid, str):
            raise QueryError('"conversation_id" must be a string')
        return cls(question.strip(), cid, scope, flags["think"], flags["tools"], k)


def envelope(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "data": data}


def error_data(exc: BaseException) -> dict[str, Any]:
    code = (
        "context_too_long" if isinstance(exc, ContextTooLongError)
        else "model_missing" if isinstance(exc, ModelMissingError)
        else "llm_unavailable" if isinstance(exc, LLMUnavailableError)
        else "llm_error" if isinstance(exc, LLMError)
        else "bad_request" if isinstance(exc, QueryError)
        else "error" if isinstance(exc, VaultseekError)
        else "internal"
    )  # fmt: skip
    if isinstance(exc, VaultseekError):
        return {"code": code, "message": exc.message, "hint": exc.hint}
    return {"code": code, "message": f"unexpected {exc.__class__.__name__}: {exc}",
            "hint": "this is a bug in vaultseek; the server log has the details"}  # fmt: skip


async def stoppable(events: AsyncIterator[T], stop: asyncio.Event) -> AsyncIterator[T]:
    """``events`` until they end or ``stop`` is set. Stopping cancels the pending read, which
    closes the upstream HTTP stream at once, even in the middle of a slow token."""
    iterator = events.__aiter__()
    stopped = asyncio.ensure_future(stop.wait())
    try:
        while True:
            step = asyncio.ensure_future(iterator.__anext__())
            await asyncio.wait({step, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                step.cancel()
                with suppress(asyncio.CancelledError, Exception):
                    await step
                return
            try:
                item = step.result()
            except StopAsyncIteration:
                return
            yield item
    finally:
        stopped.cancel()
        aclose = getattr(iterator, "aclose", None)  # an async generator: close it now
        if aclose is not None:
            with suppress(Exception):
                await aclose()


class Chat:
    """Answers questions against a knowledge base with a model."""

    def __init__(self, config: Config, kb: KnowledgeBase, store: StudyStore, client: ChatClient) -> None:
        self.config = config
        self.kb = kb
        self.store = store
        self.client = client

    def open_conversation(self, request: ChatRequest) -> str:
        """The conversation to answer in: the one asked for, or a new one."""
        if request.conversation_id:
            if self.store.find_conversation(request.conversation_id) is None:
                raise NotFoundError(f"no conversation {request.conversation_id}",
                                 hint="leave conversation_id out to start a new one")  # fmt: skip
            return request.conversation_id
        return self.store.create_conversation(request.question.splitlines()[0][:80], request.scope)

    async def answer(self, request: ChatRequest, conversation_id: str, stop: asyncio.Event) -> AsyncIterator[dict[str, Any]]:
        started = time.perf_counter()
        sources = SourceList()
        answer: list[str] = []
        thinking: list[str] = []
        tool_log: list[dict[str, Any]] = []
        sent = -1  # how many citations the UI has; -1: no metadata yet
        tokens = {"prompt": 0, "completion": 0}
        timings: dict[str, float] = {}
        failure: dict[str, Any] | None = None
        saved_user = False

        def ms() -> float:
            return round((time.perf_counter() - started) * 1000, 1)

        try:
            scope = self.kb.scope_filter(request.scope)
            previous = self.store.find_conversation(conversation_id) or {"messages": []}
            history: list[Message] = [
                {"role": m["role"], "content": m["content"]} for m in previous["messages"][-HISTORY_MESSAGES:] if m["content"]
            ]
            self.store.add_message(conversation_id, "user", request.question, scope=request.scope)
            saved_user = True
            response = await asyncio.to_thread(self.kb.search, request.question, scope, k=request.k)
            sources.add_within(response.results, self.config.llm_context // 2)
            timings["retrieval_ms"] = ms()
            use_tools = self.config.llm_tools if request.tools is None else request.tools
            think = self.config.llm_think if request.think is None else request.think
            messages: list[Message] = [
                {"role": "system", "content": system_prompt(sources.items, tools=use_tools)},
                *history,
                {"role": "user", "content": request.question},
            ]
            estimate = sum(len(m.get("content", "")) for m in messages) // CHARS_PER_TOKEN + 8 * len(messages)
            if estimate > self.config.llm_context:
                raise ContextTooLongError(
                    f"the question, its sources and the conversation so far come to about {estimate} "
                    f"tokens, more than the model's context of {self.config.llm_context}",
                    hint="ask a shorter question or start a new conversation; or raise llm_context "
                    "if the model's window is larger",
                )
            toolbox = Toolbox(self.kb, scope, sources, self.client)
            for round_number in range(MAX_ROUNDS):
                offer = SPECS if use_tools and round_number < MAX_ROUNDS - 1 else None
                calls: list[ToolCall] = []
                said: list[str] = []
                async for event in stoppable(self.client.chat_stream(messages, tools=offer, think=think), stop):
                    if isinstance(event, Thinking):
                        timings.setdefault("first_token_ms", ms())
                        thinking.append(event.text)
                        yield envelope("thinking", {"text": event.text})
                    elif isinstance(event, Text):
                        if sent < len(sources.items):
                            sent = len(sources.items)
                            yield envelope("metadata", {"citations": sources.citations()})
                        timings.setdefault("first_token_ms", ms())
                        said.append(event.text)
                        answer.append(event.text)
                        yield envelope("text", {"text": event.text})
                    elif isinstance(event, ToolCall):
                        calls.append(event)
                    elif isinstance(event, Done):
                        tokens["prompt"] += event.prompt_tokens or 0
                        tokens["completion"] += event.completion_tokens or 0
                if stop.is_set() or not calls:
                    break
                messages.append({"role": "assistant", "content": "".join(said), "tool_calls": calls})
                for call in calls:
                    result = await toolbox.run(call.name, call.arguments)
                    messages.append({"role": "tool", "content": result, "name": call.name, "tool_call_id": call.id})
                    entry = {"name": call.name, "arguments": call.arguments, "result": result[:400]}
                    tool_log.append(entry)
                    sent = len(sources.items)
                    yield envelope("metadata", {"citations": sources.citations(), "tool_call": entry})
            if sent < len(sources.items):
                yield envelope("metadata", {"citations": sources.citations()})
        except (VaultseekError, Exception) as exc:  # noqa: BLE001 - every failure becomes an envelope
            if not isinstance(exc, VaultseekError):
                traceback.print_exc(file=sys.stderr)
            failure = error_data(exc)
            yield envelope("error", failure)
        finally:
            timings["total_ms"] = ms()
            meta = {"timings": timings, "tokens": tokens, "stopped": stop.is_set(), "tools": tool_log,
                    "error": failure, "scope": request.scope}  # fmt: skip
            message_id = None
            if saved_user:
                message_id = self.store.add_message(
                    conversation_id, "assistant", "".join(answer), thinking="".join(thinking),
                    citations=sources.citations(), meta=meta,
                )  # fmt: skip
        yield envelope("done", {"conversation_id": conversation_id, "message_id": message_id, **meta,
                                "model": self.client.model, "backend": self.client.backend})  # fmt: skip
