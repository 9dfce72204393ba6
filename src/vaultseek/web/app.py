"""The study app over HTTP: the Starlette app factory. The routes live in ``routes/``, one
module per area (the library, the chat, search and links, the study hub), each handler
parsing its request, calling the :class:`~vaultseek.study.Notebook` off the event loop and
answering JSON; every error leaves as ``{"error": {"code", "message", "hint"}}``
(``error_handling.py``).

    GET  /                          the app (static, no CDN)
    GET  /study                     redirects to /#hub (the study hub is a page of the app)
    /api/status, /api/documents…, /api/ingest/events, /api/privacy   routes/library.py
    /api/chat…, /api/conversations…                                  routes/chat.py
    /api/search, /api/links, /api/related                            routes/search.py
    /api/map, /api/map/note, /api/map/missing                        routes/vaultmap.py
    /api/index/state, /api/index/sync                                routes/indexing.py
    /api/study/…                                                     routes/hub.py
    /api/attachments…, /api/transcribe, /api/models                  routes/attachments.py
    GET  /static/{path}             the front end's files, revalidated on each use (ETag → 304)
    GET  /static/{version}/{path}   the same files under their build's version, cached for good
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from ..config import Config
from ..engine import Index
from ..errors import MissingExtraError
from ..llm import ChatClient
from ..study import Notebook
from .assets import Assets
from .error_handling import HANDLERS
from .params import off_loop
from .routes import attachments, chat, hub, indexing, library, search, vaultmap
from .security import Guard

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import RedirectResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

STATIC = Path(__file__).parent / "static"


class GuardedApp(Guard):
    """The app behind its :class:`Guard`, with the notebook it serves (the server closes it;
    tests and the benchmark reach into it)."""

    def __init__(self, app: Any, notebook: Notebook, *, token: str | None, bind_host: str) -> None:
        super().__init__(app, token=token, bind_host=bind_host)
        self.notebook = notebook


async def study_page(_request: Request) -> Response:
    return RedirectResponse("/#hub", status_code=308)


def create_app(index_factory: Callable[[], Index], settings: Config, *, sync_on_start: bool = True,
               client: ChatClient | None = None) -> Any:  # fmt: skip
    """The study app for one vault. ``index_factory`` opens a fresh ``Index`` (called per
    reader and once for the writer); ``settings`` is the vault's configuration; ``client``
    replaces the chat model the settings name (demo mode's built-in stand-in)."""
    assets = Assets(STATIC)
    notebook = Notebook(settings, index_factory, client=client)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        await off_loop(notebook.close)

    routes = [
        Route("/", assets.page, methods=["GET", "HEAD"]),
        Route("/study", study_page),
        *library.ROUTES,
        *chat.ROUTES,
        *search.ROUTES,
        *vaultmap.ROUTES,
        *indexing.ROUTES,
        *hub.ROUTES,
        *attachments.ROUTES,
        Route("/static/{path:path}", assets.static, methods=["GET", "HEAD"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=dict(HANDLERS))
    app.state.notebook = notebook
    app.state.map_answers = vaultmap.KeptAnswers()
    if sync_on_start:
        notebook.kb.start()
    return GuardedApp(app, notebook, token=settings.serve_token, bind_host=settings.serve_host)
