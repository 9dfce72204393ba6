"""The resident process: one warm index behind a private Unix socket, and the watcher.

A fresh process pays ~0.5 s before its first search (imports, model, 50k vectors); the daemon
pays it once. It holds one :class:`Index` with the model and the vector matrix loaded, runs a
:class:`watch.Watcher` (so it is the index's single writer while it runs), and answers the
requests of :mod:`daemon_client` — one JSON line in, one JSON line out:

    ping      {pid, version, vault, db}
    status    the index status plus the daemon's own (watching, syncs, last error)
    search    a search request (``vaultseek.contract``: query, mode, k, filters, …)
              → the search response JSON, as ``vaultseek search --json`` prints it
    hook      {event, input, last_prompt, settings} → {output}: the whole hook, server-side
    shutdown  stop after answering

Only this user can reach it: the socket lives in a folder of mode 0700 (see
:mod:`daemon_client`), is itself mode 0600, and every connection's peer user id is checked
(``SO_PEERCRED``) where the platform reports it. Requests run one at a time against the index
(a lock); a client that stalls holds only its own connection thread, for at most 10 s. A
request line longer than ``daemon_client.MAX_REQUEST_BYTES`` is refused unread with an error
reply, and at most :data:`MAX_CONNECTIONS` connections are served at once.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import struct
import threading
import time
from pathlib import Path
from typing import Any

from .. import __version__
from ..config import Config
from ..contract import SearchRequest
from ..engine import Index
from ..errors import ConfigError, QueryError, VaultseekError
from ..index.activity import note_interactive
from ..payload import load_json, shown_size
from . import daemon_client
from .hook_runner import prepare, settings_of
from .hooks import HookSettings, run_event
from .watch import Watcher

CONNECTION_TIMEOUT = 10.0
MAX_CONNECTIONS = 8
"""Connections served at once; one more is answered "busy" (an error with ``"code": "busy"``
and the daemon's pid: ``daemon_client.request`` takes it as "no daemon", so its caller answers
in its own process, and ``is_running`` as running) and closed. With requests of at
most ``daemon_client.MAX_REQUEST_BYTES`` (4 MB), what clients can make the daemon hold at once
stays near 32 MB however many connect."""


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, path: str, daemon: Daemon) -> None:
        self.daemon = daemon
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(path, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on its own thread if a slot is free; else answer "busy"."""
        if not self.slots.acquire(blocking=False):
            if _same_user(request):
                busy = _error_reply(f"the daemon is busy ({MAX_CONNECTIONS} connections open)",
                                    "try again in a moment", exit_code=1)  # fmt: skip
                _send(request, {**busy, "error": {**busy["error"], "code": "busy", "pid": os.getpid()}})
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        conn: socket.socket = self.request
        conn.settimeout(CONNECTION_TIMEOUT)
        if not _same_user(conn):
            return
        try:
            line = daemon_client.read_line(conn, limit=daemon_client.MAX_REQUEST_BYTES)
        except ValueError:  # too long: refused with what was read so far, the rest never read
            _send(conn, _error_reply(f"the request is larger than {shown_size(daemon_client.MAX_REQUEST_BYTES)}",
                                     "send less; a hook answers a larger event in its own process"))  # fmt: skip
            return
        except OSError:
            return
        if line is None:
            return
        reply = self.server.daemon.answer(line)
        _send(conn, reply)
        if reply.get("ok") and reply.get("result", {}).get("stopping"):
            threading.Thread(target=self.server.daemon.stop, daemon=True).start()


def _error_reply(message: str, hint: str | None, *, exit_code: int = 2) -> dict[str, Any]:
    error = {"message": message, "hint": hint, "exit_code": exit_code}
    return {"v": daemon_client.PROTOCOL_VERSION, "ok": False, "error": error}


def _send(conn: socket.socket, reply: dict[str, Any]) -> None:
    try:
        conn.sendall(daemon_client.wire(json.dumps(reply, ensure_ascii=False)) + b"\n")
    except OSError:
        pass


def _same_user(conn: socket.socket) -> bool:
    """The peer runs as this user (Linux reports it; elsewhere the 0700 folder decides)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    try:
        _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, 12))
    except OSError:
        return False
    return uid == os.getuid()


class Daemon:
    """Serve one index until :meth:`stop` (or a ``shutdown`` request, or SIGTERM)."""

    def __init__(self, config: Config, *, watch: bool = True) -> None:
        assert config.db is not None and config.vault is not None
        self.config = config
        self.db: Path = config.db
        self.socket_path = daemon_client.socket_path(self.db)
        self.pid_path = daemon_client.pid_path(self.db)
        self.watch = watch
        self.lock = threading.Lock()
        self.started = time.time()
        self.last_error: str | None = None
        self.index: Index | None = None
        self.watcher: Watcher | None = None
        self._watch_thread: threading.Thread | None = None
        self._stop_watch: threading.Event | None = None
        self._server: _Server | None = None
        self._stopped = threading.Event()

    # -- lifecycle --------------------------------------------------------------------------
    def bind(self) -> None:
        """Claim the socket (cleaning up a stale one), open and warm the index, start the
        watcher. Raises ConfigError if a daemon already serves this index."""
        daemon_client.make_private_dir(self.socket_path.parent)
        if daemon_client.is_running(self.db) is not None:
            raise ConfigError(
                f"a vaultseek daemon already serves {self.db}", hint="`vaultseek daemon stop` stops it"
            )
        self.socket_path.unlink(missing_ok=True)  # stale: nobody answered on it
        self.index = Index(self.config, create=True)
        if self.watch:
            self.watcher = Watcher(self.config, on_error=self._record_error)
            self._watch_thread, self._stop_watch = self.watcher.start()
        self._warm()
        previous = os.umask(0o177)
        try:
            self._server = _Server(str(self.socket_path), self)
        finally:
            os.umask(previous)
        os.chmod(self.socket_path, 0o600)
        self.pid_path.write_text(f"{os.getpid()}\n", "utf-8")

    def _warm(self) -> None:
        """Load the model and the vector matrix now, not on the first prompt."""
        assert self.index is not None
        try:
            with self.lock:
                self.index.search("warm up the model and the vectors", k=1, rerank=False, expand=False)
        except VaultseekError as exc:
            self._record_error(exc)

    def watching(self) -> bool:
        """Whether the watcher runs now: asked of its thread, so a watcher that died is not
        reported as watching (its error is ``last_error``)."""
        return self._watch_thread is not None and self._watch_thread.is_alive()

    def _record_error(self, exc: VaultseekError) -> None:
        self.last_error = f"{time.strftime('%H:%M:%S')} {exc.message}"

    def serve(self) -> None:
        """Answer requests until stopped; cleans up the socket and pid file on the way out."""
        assert self._server is not None
        try:
            self._server.serve_forever(poll_interval=0.2)
        finally:
            self._cleanup()

    def stop(self) -> None:
        if self._server is not None and not self._stopped.is_set():
            self._stopped.set()
            self._server.shutdown()

    def _cleanup(self) -> None:
        if self._stop_watch is not None:
            self._stop_watch.set()
        if self._server is not None:
            self._server.server_close()
        for path in (self.socket_path, self.pid_path):
            try:
                if path.exists() and (path != self.pid_path or path.read_text().strip() == str(os.getpid())):
                    path.unlink()
            except OSError:
                pass
        if self.index is not None:
            with self.lock:
                self.index.close()

    # -- requests ---------------------------------------------------------------------------
    def answer(self, line: bytes) -> dict[str, Any]:
        """One request line → one reply (errors become ``{"ok": false, "error": …}``)."""
        try:
            message = load_json(line, max_bytes=daemon_client.MAX_REQUEST_BYTES)
            if not isinstance(message, dict):
                raise QueryError("a request must be a JSON object")
            if message.get("v") != daemon_client.PROTOCOL_VERSION:
                raise QueryError(
                    f"unsupported protocol version {message.get('v')!r}",
                    hint="the daemon and this vaultseek differ in version; restart the daemon",
                )
            result = self.dispatch(message)
            return {"v": daemon_client.PROTOCOL_VERSION, "ok": True, "result": result}
        except VaultseekError as exc:
            error = {"message": exc.message, "hint": exc.hint, "exit_code": exc.exit_code}
        except ValueError as exc:
            error = {"message": f"bad request: {exc}", "hint": None, "exit_code": 2}
        except Exception as exc:  # noqa: BLE001 - a bug must not take the daemon down
            error = {"message": f"unexpected {exc.__class__.__name__}: {exc}", "hint": None, "exit_code": 1}
        return {"v": daemon_client.PROTOCOL_VERSION, "ok": False, "error": error}

    def dispatch(self, message: dict[str, Any]) -> dict[str, Any]:
        op = message.get("op")
        if op == "ping":
            return {"pid": os.getpid(), "version": __version__, "vault": str(self.config.vault), "db": str(self.db)}
        if op == "shutdown":
            return {"stopping": True}
        assert self.index is not None
        if op in ("search", "hook"):
            note_interactive()  # the deep tier's worker rests while someone waits for this
        with self.lock:
            if op == "search":
                return self._search(message)
            if op == "hook":
                return {"output": self._hook(message)}
            if op == "status":
                status = self.index.status().to_dict()
                status["daemon"] = {
                    "pid": os.getpid(),
                    "socket": str(self.socket_path),
                    "watching": self.watching(),
                    "syncs": self.watcher.syncs if self.watcher else 0,
                    "uptime_seconds": round(time.time() - self.started, 1),
                    "last_error": self.last_error,
                }
                return status
        raise QueryError(f"unknown op {op!r}", hint="ops: ping, status, search, hook, shutdown")

    def _hook(self, message: dict[str, Any]) -> str:
        """A hook event's output. ``prepare`` requests come from the launcher's fast lane,
        which has read no configuration: the daemon applies its own hook settings and does
        the client's steps (triviality, the session's last prompt) itself."""
        assert self.index is not None
        payload = message.get("input")
        if not isinstance(payload, dict):
            raise QueryError('a hook request needs the event\'s "input" object')
        event = str(message.get("event"))
        if message.get("prepare"):
            settings = settings_of(self.config)
            last_prompt = prepare(event, payload, settings)
            if last_prompt is None:
                return ""
        else:
            settings = HookSettings.from_dict(message.get("settings") or {})
            last_prompt = str(message.get("last_prompt") or "")
        return run_event(self.index, event, payload, settings, last_prompt=last_prompt)

    def _search(self, message: dict[str, Any]) -> dict[str, Any]:
        """A search request (``vaultseek.contract``: the message's fields besides ``op`` and
        ``v``) → the response JSON every surface answers with."""
        assert self.index is not None
        fields = {key: value for key, value in message.items() if key not in ("op", "v")}
        return self.index.search(SearchRequest.from_mapping(fields)).to_dict()
