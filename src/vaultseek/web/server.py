"""Running the study app: checks the binding is safe, then serves it with uvicorn (the one
module that imports uvicorn)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from ..config import Config
from ..engine import Index
from ..errors import ConfigError, MissingExtraError, VaultseekError
from ..llm import ChatClient
from .app import create_app
from .ports import bind_port
from .security import is_loopback


def check_binding(config: Config) -> None:
    """Refuse to listen beyond this machine without a token."""
    if not is_loopback(config.serve_host) and not config.serve_token:
        raise ConfigError(
            f"refusing to listen on {config.serve_host} without a token: anyone who can reach "
            "this machine could read your documents",
            hint="pass --token-file PATH (or set VAULTSEEK_SERVE_TOKEN), or keep the default 127.0.0.1",
        )
    if config.serve_token is not None and len(config.serve_token) < 12:
        raise ConfigError("the token is too short (at least 12 characters)",
                          hint="e.g. python -c 'import secrets; print(secrets.token_urlsafe())'")  # fmt: skip


def serve(index_factory: Callable[[], Index], config: Config, *, out: TextIO = sys.stdout,
          client: ChatClient | None = None) -> None:  # fmt: skip
    """Serve the app until Ctrl-C; ``client`` replaces the configured chat model (demo mode)."""
    try:
        import uvicorn
    except ImportError as exc:  # installed without the study extra
        raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

    check_binding(config)
    # The port is taken before the banner says where the app listens, and uvicorn serves on
    # these very sockets: a port in use is one error (PortUnavailableError), not the banner
    # followed by uvicorn's own message and exit.
    sockets = bind_port(config.serve_host, config.serve_port, what="the study app")
    try:
        app = create_app(index_factory, config, client=client)
        shown = f"[{config.serve_host}]" if ":" in config.serve_host else config.serve_host
        llm = f"{client.backend} {client.model}" if client is not None else f"{config.llm_backend} {config.llm_model}"
        out.write(f"vaultseek study app: http://{shown}:{config.serve_port}/  (vault {config.vault}; "
                  f"LLM {llm}; Ctrl-C stops)\n")  # fmt: skip
        out.flush()
        server = uvicorn.Server(uvicorn.Config(app, host=config.serve_host, port=config.serve_port, log_level="warning",
                                               access_log=False, timeout_graceful_shutdown=3))  # fmt: skip
        try:
            server.run(sockets=sockets)
        except KeyboardInterrupt:  # uvicorn stops on Ctrl-C, then raises it again
            return
    finally:
        for listener in sockets:
            listener.close()
    if not server.started:  # the app's start-up failed; uvicorn has logged why
        raise VaultseekError("the study app stopped before it started serving (see the message above)")


def fetch_once(index_factory: Callable[[], Index], config: Config, path: str, *,
               client: ChatClient | None = None) -> tuple[int, Any]:  # fmt: skip
    """One in-process request (``vaultseek serve --get /api/status``), for smoke tests."""
    try:
        from starlette.testclient import TestClient  # drives the app through httpx
    except ImportError as exc:  # installed without the study extra
        raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

    app = create_app(index_factory, config, sync_on_start=False, client=client)
    token = {"Authorization": f"Bearer {config.serve_token}"} if config.serve_token else {}
    with TestClient(app, base_url="http://localhost") as http:  # served on every loopback binding
        response = http.get(path, headers=token)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, response.text


class BackgroundServer:
    """The app served by uvicorn on a thread (tests, the benchmark): ``with
    BackgroundServer(app) as server: server.url``. Port 0 picks a free port."""

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int = 0) -> None:
        import threading

        import uvicorn

        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                                    access_log=False, lifespan="on"))  # fmt: skip
        self.thread = threading.Thread(target=self.server.run, name="vaultseek-uvicorn", daemon=True)
        self.url = ""

    def __enter__(self) -> BackgroundServer:
        import time

        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the study app did not start")
            time.sleep(0.01)
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}"
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
