"""Streamed responses: NDJSON lines, and the background tasks that outlive a handler."""

from __future__ import annotations

import asyncio
from typing import Any

from ..errors import MissingExtraError

try:
    from starlette.requests import Request
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

NDJSON = "application/x-ndjson"
_running: set[asyncio.Future[Any]] = set()
"""Answers in progress and their disconnect watchers (held so they are not collected)."""


def hold(*tasks: asyncio.Future[Any]) -> None:
    """Keep ``tasks`` alive until they finish, whatever happens to the response."""
    for task in tasks:
        _running.add(task)
        task.add_done_callback(_running.discard)


async def until_disconnect(request: Request) -> None:
    """Return when the client has gone (a closed tab, a dropped connection)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
