"""The study app over HTTP: the Starlette app factory. The routes live in ``routes/``, one
module per area (the library, the chat, search and links, the study hub), each handler
parsing its request, calling the :class:`~vaultseek.study.Notebook` off the event loop and
answering JSON; every error leaves as ``{"error": {"code", "message", "hint"}}``
(``error_handling.py``).

    GET  /                          the app (static, no CDN)
    GET  /study                     the study hub page
    /api/status, /api/documents…, /api/ingest/events, /api/privacy   routes/library.py
    /api/chat…, /api/conversations…                                  routes/chat.py
    /api/search, /api/links, /api/related                            routes/search.py
    /api/study/…                                                     routes/hub.py
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from ..config import Config
from ..engine import Index
from ..errors import MissingExtraError
from ..study import Notebook
from .error_handling import HANDLERS
from .params import off_loop
from .routes import chat, hub, library, search
from .security import Guard

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

STATIC = Path(__file__).parent / "static"


class GuardedApp(Guard):
    """The app behind its :class:`Guard`, with the notebook it serves (the server closes it;
    tests and the benchmark reach into it)."""

    def __init__(self, app: Any, notebook: Notebook, *, token: str | None, bind_host: str) -> None:
        super().__init__(app, token=token, bind_host=bind_host)
        self.notebook = notebook


async def page(_request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def study_page(_request: Request) -> Response:
    return FileResponse(STATIC / "study.html", headers={"Cache-Control": "no-cache"})


def create_app(index_factory: Callable[[], Index], settings: Config, *, sync_on_start: bool = True) -> Any:
    """The study app for one vault. ``index_factory`` opens a fresh ``Index`` (called per
    reader and once for the writer); ``settings`` is the vault's configuration."""
    notebook = Notebook(settings, index_factory)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        await off_loop(notebook.close)

    routes = [
        Route("/", page),
        Route("/study", study_page),
        *library.ROUTES,
        *chat.ROUTES,
        *search.ROUTES,
        *hub.ROUTES,
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=dict(HANDLERS))
    app.state.notebook = notebook
    if sync_on_start:
        notebook.kb.start()
    return GuardedApp(app, notebook, token=settings.serve_token, bind_host=settings.serve_host)
