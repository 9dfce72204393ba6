"""Talking to the resident process (``vaultseek daemon``) — standard library only.

A hook runs on every prompt, so its client path must not import numpy, apsw or tokenizers:
this module (and :mod:`config`, which it uses to find the index) needs nothing beyond the
standard library. One request is one JSON line on a Unix socket, answered by one JSON line:

    → {"v": 3, "op": "search", "query": "...", "mode": "hybrid", "k": 10}
    ← {"v": 3, "ok": true, "result": {...}}     or     {"v": 3, "ok": false, "error": {...}}

A search's fields and its result are the search contract's (``vaultseek.contract``), as MCP
and HTTP take and give them. ``v`` changes whenever a request or a reply changes shape; a
daemon refuses any other version (after an upgrade, ``vaultseek daemon stop`` and ``start``).

Where the socket lives: ``$XDG_RUNTIME_DIR/vaultseek/`` (a per-user tmpfs on most Linux
systems), else ``$XDG_DATA_HOME/vaultseek/run/``; the folder is created with mode 0700 and a
socket is used only if that folder belongs to this user and nobody else can enter it. One
socket per index, named after a hash of the database path.
"""

from __future__ import annotations

import json
import os
import stat

from ..errors import VaultseekError

TYPE_CHECKING = False  # typing itself is not imported: a hook starts on every prompt
if TYPE_CHECKING:
    import socket
    from pathlib import Path
    from typing import Any

PROTOCOL_VERSION = 3
MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""The largest request line the daemon reads (and the largest hook event a hook reads: a
PostToolUse event carries the tool's whole output). The daemon stops reading a longer line at
this size, answers with an error and closes the connection; :func:`request` does not send one
(None: the caller answers in its own process)."""
MAX_REPLY_BYTES = 64 * 1024 * 1024
"""The largest reply read from the daemon (a status listing many skipped files is long)."""
_SOCKET_PATH_LIMIT = 100
"""sun_path holds 108 bytes on Linux (104 on macOS); longer paths fall back to /tmp."""


class DaemonError(VaultseekError):
    """The resident process answered with an error (carries the original exit code)."""

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int = 1) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = exit_code


# Paths are computed with os.path (pathlib costs a hook a few milliseconds); the Path-returning
# functions below are for everyone else.
def _runtime_folder() -> str:
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        return os.path.join(base, "vaultseek")
    # places.data_home()'s rule, spelled with os.path (a test keeps the two in step)
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "vaultseek", "run")


def index_key(db: str | os.PathLike[str]) -> str:
    absolute = os.path.abspath(os.path.expanduser(os.fspath(db)))
    return _sha256(absolute.encode("utf-8")).hexdigest()[:16]


def _sha256(data: bytes) -> Any:
    """SHA-256 from CPython's built-in module when there is one: ``hashlib`` loads OpenSSL,
    about 12 ms of a hook's 30 ms of imports; the digest is the same."""
    import importlib

    for name in ("_sha2", "_sha256"):  # 3.12 and later; 3.11
        try:
            return importlib.import_module(name).sha256(data)
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256(data)


def socket_file(db: str | os.PathLike[str]) -> str:
    """Where the daemon serving ``db`` listens (a str; see :func:`socket_path`)."""
    path = os.path.join(_runtime_folder(), f"{index_key(db)}.sock")
    if len(os.fsencode(path)) > _SOCKET_PATH_LIMIT:
        path = os.path.join("/tmp", f"vaultseek-{os.getuid()}", f"{index_key(db)}.sock")
    return path


def runtime_dir() -> Path:
    """The per-user folder for sockets and pid files (not created here)."""
    from pathlib import Path

    return Path(_runtime_folder())


def socket_path(db: str | os.PathLike[str]) -> Path:
    from pathlib import Path

    return Path(socket_file(db))


def pid_path(db: str | os.PathLike[str]) -> Path:
    return socket_path(db).with_suffix(".pid")


def make_private_dir(folder: Path) -> Path:
    """Create ``folder`` (mode 0700) and check it is ours and private (raises
    :class:`VaultseekError` if someone else owns it or can enter it)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.lstat()
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
        os.chmod(folder, 0o700)
    if not private_dir_ok(folder):
        raise VaultseekError(
            f"{folder} is not a private folder of this user",
            hint="remove it, or set XDG_RUNTIME_DIR to a folder only you can enter",
        )
    return folder


def private_dir_ok(folder: str | os.PathLike[str]) -> bool:
    """True if ``folder`` is ours and closed to everyone else (so is what is inside it)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )


def request(
    db: str | os.PathLike[str], message: dict[str, Any], *, timeout: float = 5.0
) -> dict[str, Any] | None:
    """Send one request to the daemon serving ``db``; its ``result``, or None when no daemon
    is reachable (no socket, a stale one, a folder that is not private, a timeout before
    connecting), the daemon is busy (serving as many connections as it takes), or the request
    is larger than :data:`MAX_REQUEST_BYTES`. Raises
    :class:`DaemonError` when the daemon answers with an error, and ``TimeoutError`` when it
    accepts but does not answer within ``timeout``."""
    reply = _exchange(db, message, timeout=timeout)
    if reply is None:
        return None
    if not reply.get("ok"):
        error = reply.get("error") or {}
        if error.get("code") == "busy":  # every connection taken: as good as absent
            return None
        raise DaemonError(
            str(error.get("message", "the daemon failed")),
            hint=error.get("hint"),
            exit_code=int(error.get("exit_code", 1)),
        )
    result = reply.get("result")
    return result if isinstance(result, dict) else {"value": result}


def _exchange(db: str | os.PathLike[str], message: dict[str, Any], *, timeout: float) -> dict[str, Any] | None:
    """:func:`request`'s round trip: the daemon's whole reply, or None (no daemon, too large)."""
    path = socket_file(db)
    if not private_dir_ok(os.path.dirname(path)):
        return None
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            return None
    except OSError:
        return None
    import socket  # only with a daemon's socket there: a search without one never needs it

    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(timeout)
    try:
        try:
            client.connect(path)
        except OSError:  # refused (stale socket) or vanished: no daemon
            return None
        payload = wire(json.dumps({"v": PROTOCOL_VERSION, **message}, ensure_ascii=False))
        if len(payload) > MAX_REQUEST_BYTES:
            return None  # the daemon would refuse it: the caller answers in its own process
        try:
            client.sendall(payload + b"\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # a busy daemon answers before it reads, and closes: its answer may be waiting
        try:
            answer = read_line(client, limit=MAX_REPLY_BYTES)
        except ConnectionResetError:
            return None  # closed without an answer we could read: treat as absent
    finally:
        client.close()
    if answer is None:
        return None  # closed without answering (shutting down): treat as absent
    reply = json.loads(answer)
    return reply if isinstance(reply, dict) else None


def wire(text: str) -> bytes:
    """JSON text as the socket carries it: UTF-8, with a lone surrogate (half an emoji in a
    prompt or a tool's output, which JSON escapes) written as its JSON escape ``\\ud83d``,
    which reads back as the same text; plain UTF-8 would fail and fail the hook open."""
    return text.encode("utf-8", "backslashreplace")


def read_line(conn: socket.socket, *, limit: int) -> bytes | None:
    """One newline-terminated message (without the newline); None if the peer closed first.
    Raises ValueError as soon as more than ``limit`` bytes arrived without a newline: the
    rest is never read."""
    chunks: list[bytes] = []
    size = 0
    while True:
        block = conn.recv(1 << 16)
        if not block:
            return None
        end = block.find(b"\n")
        if end >= 0 and size + end <= limit:
            chunks.append(block[:end])
            return b"".join(chunks)
        chunks.append(block)
        size += len(block)
        if size > limit:
            raise ValueError(f"a message is larger than {limit:,} bytes")


def is_running(db: str | os.PathLike[str], *, timeout: float = 1.0) -> dict[str, Any] | None:
    """The daemon's ping answer (pid, vault, db, version), ``{"pid", "busy": True}`` from a
    daemon serving as many connections as it takes, or None if none serves ``db``."""
    try:
        reply = _exchange(db, {"op": "ping"}, timeout=timeout)
    except (TimeoutError, OSError, ValueError):
        return None
    if reply is None:
        return None
    if reply.get("ok"):
        result = reply.get("result")
        return result if isinstance(result, dict) else None
    error = reply.get("error") or {}
    return {"pid": error.get("pid"), "busy": True} if error.get("code") == "busy" else None
