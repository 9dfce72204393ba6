"""HTTP to the LLM server: the one module that imports ``httpx``.

One ``AsyncClient`` per event loop (a client is bound to the loop it first ran on), with
proxies from the environment ignored — the model runs on this machine or a host the user
named, and nothing should route the conversation elsewhere. Network failures become
:class:`LLMUnavailableError`; an HTTP error status becomes :class:`ServerError` for the
backend client to interpret (model missing, context too long, …).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from ..errors import LLMUnavailableError, MissingExtraError

try:
    import httpx
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc


class ServerError(Exception):
    """The server answered with an error status; ``message`` is its own explanation."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


def error_message(body: bytes) -> str:
    """The human part of an error body: ``{"error": "..."}`` (Ollama),
    ``{"error": {"message": ...}}`` (OpenAI-compatible), or the text itself."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:500]
    error = data.get("error", data.get("detail", text)) if isinstance(data, dict) else text
    if isinstance(error, dict):
        error = error.get("message", json.dumps(error))
    return str(error)[:500]


class Transport:
    """Requests to one base URL."""

    def __init__(self, base_url: str, *, connect_timeout: float = 3.0, read_timeout: float = 300.0,
                 api_key: str | None = None, what: str = "the LLM server") -> None:  # fmt: skip
        self.base_url = base_url.rstrip("/")
        self.what = what
        """How errors name the server (``the LLM server``, ``the transcription server``)."""
        parts = urlsplit(self.base_url)
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self._timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._clients: dict[int, httpx.AsyncClient] = {}

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None:
            client = httpx.AsyncClient(timeout=self._timeout, headers=self._headers, trust_env=False)
            self._clients[id(loop)] = client
        return client

    def _unavailable(self, exc: Exception) -> LLMUnavailableError:
        if isinstance(exc, httpx.TimeoutException):
            what = "did not answer in time"
        elif isinstance(exc, httpx.ConnectError):
            what = "refused the connection (is it running?)"
        else:
            what = f"broke off the connection ({exc.__class__.__name__})"
        return LLMUnavailableError(f"{self.what} at {self.base_url} {what}")

    @asynccontextmanager
    async def stream(self, path: str, payload: dict[str, Any]) -> AsyncIterator[AsyncIterator[str]]:
        """POST ``payload`` and yield the reply's lines as they arrive. Leaving the block —
        normally, by an error, or by cancellation — closes the upstream connection, which is
        how generation is stopped."""
        try:
            async with self._client().stream("POST", self.base_url + path, json=payload) as response:
                if response.status_code >= 400:
                    raise ServerError(response.status_code, error_message(await response.aread()))
                yield response.aiter_lines()
        except (httpx.TransportError, httpx.StreamError) as exc:
            raise self._unavailable(exc) from exc

    async def get_json(self, path: str, *, timeout: float = 3.0) -> Any:
        try:
            response = await self._client().get(self.base_url + path, timeout=timeout)
        except (httpx.TransportError, httpx.StreamError) as exc:
            raise self._unavailable(exc) from exc
        return _json_of(response)

    async def post_json(self, path: str, payload: dict[str, Any], *, timeout: float = 10.0) -> Any:
        """POST ``payload`` and return the JSON answer (None when it is not JSON)."""
        try:
            response = await self._client().post(self.base_url + path, json=payload, timeout=timeout)
        except (httpx.TransportError, httpx.StreamError) as exc:
            raise self._unavailable(exc) from exc
        return _json_of(response)

    async def post_form(self, path: str, *, fields: dict[str, str], files: dict[str, tuple[str, bytes, str]],
                        timeout: float = 120.0) -> Any:  # fmt: skip
        """POST a ``multipart/form-data`` body (``files``: field → (file name, bytes, media
        type)) and return the JSON answer (None when it is not JSON)."""
        try:
            response = await self._client().post(self.base_url + path, data=fields, files=files, timeout=timeout)
        except (httpx.TransportError, httpx.StreamError) as exc:
            raise self._unavailable(exc) from exc
        return _json_of(response)


def _json_of(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        raise ServerError(response.status_code, error_message(response.content))
    try:
        return response.json()
    except ValueError:
        return None
