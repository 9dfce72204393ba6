"""Rerankers the user runs: each scores passages against a query, one score per passage.

Three kinds, named by the ``rerank`` setting:

``llama`` / ``llama:MODEL``
    llama.cpp's ``llama-server`` started with ``--reranking`` and a reranker GGUF
    (bge-reranker, jina-reranker, Qwen3-Reranker): ``POST {url}/v1/rerank`` with
    ``{"model", "query", "documents", "top_n"}`` answers ``{"results": [{"index",
    "relevance_score"}, ...]}``.
``tei``
    Hugging Face's Text Embeddings Inference serving a reranker: ``POST {url}/rerank`` with
    ``{"query", "texts"}`` answers ``[{"index", "score"}, ...]``.
``chat``
    The chat model already configured for the study app (``llm_url``, ``llm_model``), asked
    pointwise: one request per passage for a score from 0 to 10, as JSON.

Every failure is typed: a server that cannot be reached or fails is
:class:`~vaultseek.errors.LLMUnavailableError`, one that refuses the request
:class:`~vaultseek.errors.LLMError`, a reply that holds no scores
:class:`~vaultseek.errors.ModelReplyError`. A passage the model gave no readable score is
``None`` (the search keeps its hybrid place).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, TypeGuard

from ..errors import LLMError, LLMUnavailableError, ModelReplyError
from .bridge import reply_text, run_sync
from .events import Message
from .structured import parse_object
from .transport import ServerError, Transport

DEFAULT_URLS = {"llama": "http://localhost:8080", "tei": "http://localhost:8080"}
"""Where each server kind listens unless ``rerank_url`` says otherwise (llama-server's and
TEI's container's usual port)."""
PASSAGE_CHARS = 2_000
"""The most of a passage the chat model is shown (the head of a section says what it is)."""


class Reranker(Protocol):
    name: str
    """How a response names it: ``llama:bge-reranker-v2-m3``, ``tei``, ``chat:qwen3:4b``."""

    async def scores(self, query: str, passages: Sequence[str]) -> list[float | None]: ...


class RerankServer:
    """llama.cpp's ``/v1/rerank`` or TEI's ``/rerank``."""

    def __init__(
        self, kind: str, *, url: str | None = None, model: str | None = None, timeout: float = 30.0
    ) -> None:
        if kind not in DEFAULT_URLS:
            raise ValueError(f"unknown reranker kind {kind!r}")
        self.kind = kind
        self.model = model
        self.name = f"{kind}:{model}" if model else kind
        base = (url or DEFAULT_URLS[kind]).rstrip("/")
        if kind == "llama" and base.endswith("/v1"):
            base = base[: -len("/v1")]  # the OpenAI-style address works too
        self.transport = Transport(base, read_timeout=timeout, what="the reranker")
        self.timeout = timeout

    @property
    def url(self) -> str:
        return self.transport.base_url

    async def scores(self, query: str, passages: Sequence[str]) -> list[float | None]:
        if not passages:
            return []
        if self.kind == "llama":
            path = "/v1/rerank"
            payload: dict[str, Any] = {
                "query": query,
                "documents": list(passages),
                "top_n": len(passages),
            }
            if self.model:
                payload["model"] = self.model
        else:
            path = "/rerank"
            payload = {"query": query, "texts": list(passages), "truncate": True}
        try:
            answer = await self.transport.post_json(path, payload, timeout=self.timeout)
        except ServerError as exc:
            raise self._refused(exc) from None
        return self._read(answer, len(passages))

    def _refused(self, exc: ServerError) -> LLMError:
        where = f"the reranker at {self.url}"
        if exc.status == 404 or exc.status == 501:
            setup = (
                "start llama-server with --reranking and a reranker GGUF (e.g. bge-reranker-v2-m3)"
                if self.kind == "llama" else "serve a reranker model with TEI (e.g. BAAI/bge-reranker-base)"
            )  # fmt: skip
            return LLMError(f"{where} has no rerank endpoint (HTTP {exc.status}: {exc.message})",
                            hint=f"{setup}; or set rerank_url to its address")  # fmt: skip
        if exc.status >= 500:
            return LLMUnavailableError(
                f"{where} failed (HTTP {exc.status}): {exc.message}", hint="see the reranker's log"
            )
        return LLMError(f"{where} refused the request (HTTP {exc.status}): {exc.message}")

    def _read(self, answer: Any, count: int) -> list[float | None]:
        """One score per passage from either server's answer; raises ModelReplyError for a
        reply that holds none."""
        items = answer.get("results", answer.get("data")) if isinstance(answer, dict) else answer
        out: list[float | None] = [None] * count
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            index = item.get("index")
            score = item.get("relevance_score", item.get("score"))
            if (
                isinstance(index, int)
                and not isinstance(index, bool)
                and 0 <= index < count
                and _finite(score)
            ):
                out[index] = float(score)
        if all(score is None for score in out):
            shown = repr(answer)[:120]
            raise ModelReplyError(
                f"the reranker at {self.url} answered without scores ({shown})",
                hint='check that rerank_url points at a reranker: llama-server --reranking (rerank = "llama") '
                'or TEI with a reranker model (rerank = "tei")',
            )
        return out


SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}},
    "required": ["score"],
}
POINTWISE_PROMPT = (
    "You judge search results. Rate how well the passage answers the query, from 0 (unrelated) "
    'to 10 (answers it exactly). Reply with JSON only, for example {"score": 7}.'
)


class ChatReranker:
    """The configured chat model, asked once per passage for a 0–10 score (as 0–1)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.name = f"chat:{client.model}"

    async def scores(self, query: str, passages: Sequence[str]) -> list[float | None]:
        out: list[float | None] = []
        for passage in passages:  # one at a time: a local server answers one request at once anyway
            messages: list[Message] = [
                {"role": "system", "content": POINTWISE_PROMPT},
                {
                    "role": "user",
                    "content": f"Query: {query}\n\nPassage:\n{passage[:PASSAGE_CHARS]}\n\nJSON:",
                },
            ]
            out.append(read_score(await reply_text(self.client, messages, format=SCORE_SCHEMA)))
        if passages and all(score is None for score in out):
            raise ModelReplyError(
                f"the chat model {self.client.model} at {self.client.url} gave no readable score",
                hint='a model that follows JSON instructions (e.g. qwen3:4b), or rerank = "llama" with a reranker',
            )
        return out


def read_score(text: str) -> float | None:
    """A 0–10 score read from a pointwise reply, as 0–1; None when it holds none."""
    found, _problems = parse_object(text, ("score",))
    value = found.get("score") if found else None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not _finite(value) or not 0 <= float(value) <= 10:
        return None
    return float(value) / 10


def _finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class Blocking:
    """A reranker called synchronously (from a search), waiting at most ``timeout`` seconds."""

    def __init__(self, reranker: Reranker, *, timeout: float) -> None:
        self.reranker = reranker
        self.name = reranker.name
        self.timeout = timeout

    def __call__(self, query: str, passages: Sequence[str]) -> list[float | None]:
        return run_sync(
            self.reranker.scores(query, passages),
            timeout=self.timeout,
            what=f"the reranker {self.name}",
        )
