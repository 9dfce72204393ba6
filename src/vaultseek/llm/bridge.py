"""Calling the async model clients from synchronous code (a search, the CLI).

The clients in this package are async (the study app streams). A search runs on an ordinary
thread, so it hands its coroutine to one event loop that lives on a daemon thread of its own,
started on first use and shared by every caller of the process. One loop means one
``httpx.AsyncClient`` per server (:class:`~.transport.Transport` keeps one per loop), so
connections are reused from search to search; a loop per call would leave a client bound to
every loop that has ended.

    scores = run_sync(reranker.scores(query, texts), timeout=30)

A call that outlasts ``timeout`` is cancelled on the loop (its connection closed) and raises
:class:`~vaultseek.errors.LLMUnavailableError` naming the wait.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from ..errors import LLMUnavailableError

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _running_loop() -> asyncio.AbstractEventLoop:
    """The shared loop, started on a daemon thread the first time it is needed."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="vaultseek-models", daemon=True)
            thread.start()
            _loop = loop
        return _loop


def run_sync(
    coroutine: Coroutine[Any, Any, T], *, timeout: float, what: str = "the model server"
) -> T:
    """The coroutine's result, run on the shared loop; waits at most ``timeout`` seconds.
    Its own errors pass through as they are; a wait past ``timeout`` cancels it and raises
    :class:`LLMUnavailableError`."""
    future = asyncio.run_coroutine_threadsafe(coroutine, _running_loop())
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise LLMUnavailableError(
            f"{what} did not answer within {timeout:g} s",
            hint="a busy or slow server: raise model_timeout, lower rerank_depth, or use a smaller model",
        ) from None


async def reply_text(
    client: Any, messages: list[Any], *, format: str | dict[str, Any] | None = None
) -> str:
    """A chat model's whole answer to ``messages`` (its thinking left out): what the
    structured callers (the pointwise reranker, query expansion) parse."""
    from .events import Text

    parts = [
        event.text
        async for event in client.chat_stream(messages, format=format)
        if isinstance(event, Text)
    ]
    return "".join(parts)
