"""One grounded answer, as a stream of envelopes ``{"type", "data"}``:

    thinking  the model's reasoning tokens, as they arrive (models that expose them)
    metadata  the numbered citations (path, section, page/slide, snippet, relevance) and the
              question as sent (``question``: its id, its text after the credential scrubber,
              what was redacted) — first, as soon as retrieval is done, so the passages show
              even when the model is down; again when a tool adds sources or runs
    text      answer tokens
    error     something the UI can show as it is: a message, a hint (never empty), a code
    done      timings, token counts, whether it was stopped, the ids to resume with, and
              suggested follow-up questions

The question passes the credential scrubber before it is stored, searched or sent to the
model. Only passages similar enough to the question become sources (``sources.relevant``).
Retrieval runs under the request's own scope (never shared state), the model may call tools
for a few rounds, and the turn is saved to the conversation whatever happens — answered,
failed, stopped, or abandoned by a closed tab — except a new conversation whose first
question failed with nothing to show (no answer, no sources), which is not kept. A question
may replace an earlier one (``replace_from``: edit, or ask again): that turn and everything
after it are forgotten first.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import sys
import time
import traceback
from collections.abc import AsyncIterator
from contextlib import suppress
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

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
from ..index.credentials import scrub
from ..llm import ChatClient, Done, Message, Text, Thinking, ToolCall, create_client
from ..records import SearchResult
from .library import KnowledgeBase
from .sources import CHARS_PER_TOKEN, SOURCE_CHARS, Source, SourceList, relevant, system_prompt
from .storage import StudyStore
from .tools import SPECS, Toolbox

MAX_ROUNDS = 4
"""Model calls per answer: up to three rounds of tool calls, then a final answer."""
HISTORY_MESSAGES = 6
MAX_QUESTION_CHARS = 8_000
MAX_ATTACHMENTS = 20
MAX_CLIENTS = 8
"""Clients kept for models chosen in the UI (each holds a connection pool)."""
FOLLOWUPS = 3
REDACTED = re.compile(r"\[REDACTED:[^\]]{1,80}\]")

T = TypeVar("T")


@dataclass(frozen=True)
class ChatRequest:
    question: str
    conversation_id: str | None = None
    scope: dict[str, Any] = field(default_factory=dict)
    think: bool | None = None
    tools: bool | None = None
    k: int = 6
    attachments: tuple[str, ...] = ()
    """Ids from ``POST /api/attachments``: images for the model, files cited as sources."""
    model: str | None = None
    """The model to ask, by its server's name; None: the configured ``llm_model``."""
    replace_from: int | None = None
    """The id of an earlier user message of the conversation this question replaces."""

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
        attachments = data.get("attachments") or []
        if not isinstance(attachments, list) or not all(isinstance(a, str) and 0 < len(a) <= 200 for a in attachments):
            raise QueryError('"attachments" must be a list of the ids POST /api/attachments returned')
        if len(attachments) > MAX_ATTACHMENTS:
            raise QueryError(f"at most {MAX_ATTACHMENTS} attachments go with one question")
        model = data.get("model")
        if model is not None and (not isinstance(model, str) or not model.strip() or len(model) > 200):
            raise QueryError('"model" must be a model name the LLM server knows', hint="GET /api/models lists them")
        replacing = data.get("replace_from")
        if replacing is not None and (not isinstance(replacing, int) or isinstance(replacing, bool) or replacing < 1):
            raise QueryError('"replace_from" must be the id of a question of this conversation')
        if replacing is not None and cid is None:
            raise QueryError('"replace_from" needs the "conversation_id" it belongs to')
        return cls(question.strip(), cid, scope, flags["think"], flags["tools"], k, tuple(attachments),
                   model.strip() if model else None, replacing)  # fmt: skip


def envelope(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "data": data}


def error_data(exc: BaseException, client: ChatClient | None = None) -> dict[str, Any]:
    """What the UI shows for a failure: a code, the message, and a hint that says what to do
    (never empty: a model server that is not running gets the command that starts it)."""
    code = (
        "context_too_long" if isinstance(exc, ContextTooLongError)
        else "model_missing" if isinstance(exc, ModelMissingError)
        else "llm_unavailable" if isinstance(exc, LLMUnavailableError)
        else "llm_error" if isinstance(exc, LLMError)
        else "bad_request" if isinstance(exc, QueryError)
        else "error" if isinstance(exc, VaultseekError)
        else "internal"
    )  # fmt: skip
    if not isinstance(exc, VaultseekError):
        return {"code": code, "message": f"unexpected {exc.__class__.__name__}: {exc}",
                "hint": "this is a bug in vaultseek; the server log has the details"}  # fmt: skip
    hint = exc.hint
    if not hint and isinstance(exc, LLMUnavailableError) and client is not None:
        hint = start_hint(client)
    return {"code": code, "message": exc.message, "hint": hint or "the server log has the details"}


def start_hint(client: ChatClient) -> str:
    """How to bring the model server the app asks back up."""
    if client.backend == "ollama":
        return (f"start Ollama: `ollama serve` (the app asks it at {client.url}; if it runs "
                "elsewhere, set llm_url)")  # fmt: skip
    return (f"start the OpenAI-compatible server the app asks at {client.url} (llama-server, "
            "LM Studio, vLLM…), or set llm_url to where it runs")  # fmt: skip


def followups(question: str, sources: list[Source]) -> list[str]:
    """Questions worth asking next: the sections of this answer's sources the question did not
    name (best source first), then a request to explain the answer more simply."""
    asked = {w.strip("?.,!:;").lower() for w in question.split()}
    out: list[str] = []
    for source in sources:
        topic = (source.section or "").split(" > ")[-1].strip()
        words = {w.lower() for w in topic.split()}
        if not topic or len(topic) > 80 or words <= asked:
            continue
        suggestion = f"What else do my notes say about {topic}?"
        if suggestion not in out:
            out.append(suggestion)
        if len(out) == FOLLOWUPS - 1:
            break
    if sources:
        out.append("Can you explain that more simply, with an example?")
    return out


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
        self.clients: dict[str, ChatClient] = {}

    def client_for(self, model: str | None) -> ChatClient:
        """The client that asks ``model`` (None or the configured one: the app's client)."""
        if model is None or model == self.client.model:
            return self.client
        if model not in self.clients:
            if len(self.clients) >= MAX_CLIENTS:
                self.clients.pop(next(iter(self.clients)))
            self.clients[model] = create_client(replace(self.config, llm_model=model))
        return self.clients[model]

    def open_conversation(self, request: ChatRequest) -> str:
        """The conversation to answer in: the one asked for, or a new one (titled by the
        scrubbed question). A question that replaces an earlier one forgets that turn and
        everything after it here, before the answer starts."""
        if request.conversation_id:
            if self.store.find_conversation(request.conversation_id) is None:
                raise NotFoundError(f"no conversation {request.conversation_id}",
                                 hint="leave conversation_id out to start a new one")  # fmt: skip
            if request.replace_from is not None and not self.store.delete_messages_from(request.conversation_id, request.replace_from):
                raise NotFoundError(f"no question {request.replace_from} in conversation {request.conversation_id}",
                                    hint="reload the conversation: it changed in another tab")  # fmt: skip
            return request.conversation_id
        title = scrub(request.question).text.splitlines()[0][:80]
        return self.store.create_conversation(title, request.scope)

    def retrieve(self, question: str, scope: Any, k: int) -> tuple[list[tuple[SearchResult, float | None]], dict[str, list[str]]]:
        """The passages for ``question`` under ``scope`` that pass the relevance threshold
        (judged without the scrubber's ``[REDACTED:…]`` markers, which say nothing about the
        topic), and what the search took for the question's words no note holds (a typo's
        correction, the vault's word of like meaning: ``SearchResponse.alternatives``)."""
        question = " ".join(REDACTED.sub(" ", question).split()) or question
        with self.kb.readers.borrow() as index:
            response = index.search(question, filters=scope, view="chunks", k=k, syntax=False)  # "what does #3 mean"
        return relevant(response), {word: list(found) for word, found in response.alternatives.items()}

    def attached(self, request: ChatRequest, conversation_id: str, question: str) -> tuple[list[bytes], list[Any]]:
        """The request's attachments: images for the model and passages to cite, resolved by
        ``study.attachments`` (imported on first use: only questions with attachments need it)."""
        if not request.attachments:
            return [], []
        try:
            attaching = importlib.import_module("vaultseek.study.attachments")
        except ImportError as exc:
            raise QueryError("this server cannot take attachments", hint="send the question without them") from exc
        resolved = attaching.resolve(self.store, conversation_id, list(request.attachments), question=question)
        return list(resolved.images), list(resolved.sources)

    async def answer(self, request: ChatRequest, conversation_id: str, stop: asyncio.Event) -> AsyncIterator[dict[str, Any]]:
        started = time.perf_counter()
        client = self.client_for(request.model)
        scrubbed = scrub(request.question)
        question = scrubbed.text
        sources = SourceList()
        answer: list[str] = []
        thinking: list[str] = []
        tool_log: list[dict[str, Any]] = []
        sent = -1  # how many citations the UI has; -1: no metadata yet
        tokens = {"prompt": 0, "completion": 0}
        timings: dict[str, float] = {}
        failure: dict[str, Any] | None = None
        question_id: int | None = None
        asked: dict[str, Any] = {"text": question, "redacted": scrubbed.counts}

        def ms() -> float:
            return round((time.perf_counter() - started) * 1000, 1)

        try:
            scope = self.kb.scope_filter(request.scope)
            previous = self.store.find_conversation(conversation_id) or {"messages": []}
            history: list[Message] = [
                {"role": m["role"], "content": m["content"]} for m in previous["messages"][-HISTORY_MESSAGES:] if m["content"]
            ]
            user_meta = {"redacted": scrubbed.counts} if scrubbed.counts else None
            question_id = self.store.add_message(conversation_id, "user", question, scope=request.scope, meta=user_meta)
            asked["id"] = question_id
            images, attached = await asyncio.to_thread(self.attached, request, conversation_id, question)
            found, searched = await asyncio.to_thread(self.retrieve, question, scope, request.k)
            if searched:  # shown under the question, now and when the conversation is reopened
                asked["searched"] = searched
                self.store.add_message_meta(question_id, {"searched": searched})
            budget = self.config.llm_context // 2  # sources get at most half the context
            taken = sources.add_within(attached, budget // 2)  # attached files: up to half of that
            left = budget - sum(min(len(t.text), SOURCE_CHARS) // CHARS_PER_TOKEN + 20 for t in taken)
            sources.add_within([r for r, _ in found], max(left, 0), {r.chunk_id: rel for r, rel in found})
            timings["retrieval_ms"] = ms()
            sent = len(sources.items)
            yield envelope("metadata", {"citations": sources.citations(), "question": asked})
            use_tools = self.config.llm_tools if request.tools is None else request.tools
            think = self.config.llm_think if request.think is None else request.think
            user: dict[str, Any] = {"role": "user", "content": question}
            if images:
                user["images"] = images
            messages: list[Message] = [
                {"role": "system", "content": system_prompt(sources.items, tools=use_tools)},
                *history,
                cast(Message, user),
            ]
            estimate = sum(len(m.get("content", "")) for m in messages) // CHARS_PER_TOKEN + 8 * len(messages)
            if estimate > self.config.llm_context:
                raise ContextTooLongError(
                    f"the question, its sources and the conversation so far come to about {estimate} "
                    f"tokens, more than the model's context of {self.config.llm_context}",
                    hint="ask a shorter question or start a new conversation; or raise llm_context "
                    "if the model's window is larger",
                )
            toolbox = Toolbox(self.kb, scope, sources, client)
            for round_number in range(MAX_ROUNDS):
                offer = SPECS if use_tools and round_number < MAX_ROUNDS - 1 else None
                calls: list[ToolCall] = []
                said: list[str] = []
                async for event in stoppable(client.chat_stream(messages, tools=offer, think=think), stop):
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
            failure = error_data(exc, client)
            if sent < len(sources.items):  # the passages found, shown even though the model failed
                sent = len(sources.items)
                yield envelope("metadata", {"citations": sources.citations(), "question": asked})
            yield envelope("error", failure)
        finally:
            timings["total_ms"] = ms()
            meta = {"timings": timings, "tokens": tokens, "stopped": stop.is_set(), "tools": tool_log,
                    "error": failure, "scope": request.scope, "model": client.model,
                    "followups": [] if failure else followups(question, sources.items)}  # fmt: skip
            message_id = None
            kept: str | None = conversation_id
            if question_id is not None:
                if failure and not answer and not sources.items and request.conversation_id is None:
                    self.store.delete_conversation(conversation_id)  # nothing to come back to
                    kept = None
                else:
                    message_id = self.store.add_message(
                        conversation_id, "assistant", "".join(answer), thinking="".join(thinking),
                        citations=sources.citations(), meta=meta,
                    )  # fmt: skip
        yield envelope("done", {"conversation_id": kept, "message_id": message_id, "question_id": question_id,
                                "redacted": scrubbed.counts, **meta, "backend": client.backend})  # fmt: skip
