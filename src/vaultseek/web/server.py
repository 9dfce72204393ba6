"""Running the study app: checks the binding is safe, then serves it with uvicorn (the one
module that imports uvicorn).

uvicorn is set up for a server anyone on the machine can reach: forwarded headers
(``X-Forwarded-For``, ``Forwarded``) are not trusted, since no proxy stands in front of the
app; a request's head must arrive whole within :data:`HEADER_TIMEOUT` seconds of its first byte
and its body may pause at most :data:`READ_TIMEOUT` seconds, or the connection is closed; at
most :data:`MAX_CONNECTIONS` connections are open at once — a new one beyond that closes the
longest-waiting connection that has not sent a whole request head (a half-sent request), and
is itself refused only when every connection is busy with a request."""

from __future__ import annotations

import functools
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

HEADER_TIMEOUT = 5.0
"""Seconds a request's head (request line and headers) may take to arrive."""
READ_TIMEOUT = 10.0
"""Seconds a request's body may pause between two pieces."""
MAX_CONNECTIONS = 256
"""Open connections at most."""


def uvicorn_config(app: Any, *, host: str, port: int, **options: Any) -> Any:
    """The one uvicorn configuration the app is served with (``serve``, tests, benchmarks)."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                          proxy_headers=False, http=timed_protocol(), **options)  # fmt: skip


@functools.cache
def timed_protocol() -> Any:
    """uvicorn's h11 protocol with the head and body timeouts and the connection cap of the
    module docstring (made once, on first use: uvicorn is imported only to serve)."""
    import asyncio

    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class TimedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self.reading: asyncio.TimerHandle | None = None
            self.waiting_since = asyncio.get_running_loop().time()
            if len(self.connections) >= MAX_CONNECTIONS and not self._close_a_half_sent_one():
                transport.close()  # every connection is busy with a request: refused
                return
            super().connection_made(transport)
            self._time_reading(HEADER_TIMEOUT)

        def connection_lost(self, exc: Exception | None) -> None:
            self._time_reading(None)
            if getattr(self, "transport", None) is None:  # refused in connection_made
                return
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.transport.is_closing():
                self._time_reading(None)
                return
            state = self.conn.their_state
            if state is h11.SEND_BODY and not self.flow.read_paused:
                self._time_reading(READ_TIMEOUT)  # the body is coming: each piece restarts the clock
            elif state is h11.IDLE and self.reading is None:  # a new head has started
                self.waiting_since = self.loop.time()
                self._time_reading(HEADER_TIMEOUT)  # the whole head within the limit
            elif state is not h11.IDLE:
                self._time_reading(None)

        def _waiting_for_head(self) -> bool:
            # (only connections let in are in ``self.connections``: each has its transport)
            return self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)

        def _close_a_half_sent_one(self) -> bool:
            waiting = [c for c in self.connections if isinstance(c, TimedH11Protocol) and c._waiting_for_head()]
            if not waiting:
                return False
            oldest = min(waiting, key=lambda c: c.waiting_since)
            oldest.transport.close()
            oldest.connections.discard(oldest)
            return True

        def _time_reading(self, seconds: float | None) -> None:
            if self.reading is not None:
                self.reading.cancel()
                self.reading = None
            if seconds is not None:
                self.reading = asyncio.get_running_loop().call_later(seconds, self._too_slow)

        def _too_slow(self) -> None:
            self.reading = None
            if self.conn.their_state is h11.SEND_BODY and self.flow.read_paused:
                self._time_reading(READ_TIMEOUT)  # the app is slow to read, not the client to send
            elif not self.transport.is_closing() and self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
                self.transport.close()

    return TimedH11Protocol


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
        server = uvicorn.Server(uvicorn_config(app, host=config.serve_host, port=config.serve_port,
                                               timeout_graceful_shutdown=3))  # fmt: skip
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

        self.server = uvicorn.Server(uvicorn_config(app, host=host, port=port, lifespan="on"))
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
