"""Claiming the TCP port a server listens on, with an error a user can act on.

``vaultseek serve`` binds its port here before it says where it listens, and hands the
listening sockets to uvicorn, so a port in use is one line and a hint (exit 9), never the
banner followed by uvicorn's ``[Errno 98]``. ``vaultseek mcp --http`` checks its port the same
way before the MCP SDK binds it. Standard library only: the MCP server may be installed without
the study app's libraries.
"""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

from ..errors import PortUnavailableError

BACKLOG = 2048
"""uvicorn's default listen backlog."""
FREE_PORT_TRIES = 20
"""How many ports above a busy one are tried for a free one to suggest."""


def bind_port(host: str, port: int, *, what: str) -> list[socket.socket]:
    """Listening sockets on ``port`` for every address ``host`` resolves to (as uvicorn binds a
    host name), or :class:`PortUnavailableError` naming why, what holds the port when this user
    can see it, and a free port to use instead. ``what`` names the server for the message
    (``the study app``)."""
    try:
        return _listen(host, port)
    except socket.gaierror as exc:
        raise PortUnavailableError(
            f"{what} cannot listen on {host}: {exc.strerror}",
            hint="pass an address of this machine with --host, e.g. --host 127.0.0.1",
        ) from None
    except OSError as exc:
        raise _unavailable(exc, host, port, what) from None


def check_port(host: str, port: int, *, what: str) -> None:
    """Raise :class:`PortUnavailableError` when ``port`` cannot be listened on now (for a server
    that binds the port itself, right after)."""
    for listener in bind_port(host, port, what=what):
        listener.close()


def _listen(host: str, port: int) -> list[socket.socket]:
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    addresses = dict.fromkeys((family, address) for family, _kind, _proto, _name, address in found)
    sockets: list[socket.socket] = []
    try:
        for family, address in addresses:
            # Named TCP, as uvicorn's own sockets are: asyncio turns Nagle's algorithm off
            # (TCP_NODELAY) only on connections accepted from a socket whose protocol is
            # IPPROTO_TCP; left on, a kept-alive connection's response waits ~40 ms for the
            # client's delayed ACK between its head and its body.
            listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            sockets.append(listener)
            # As uvicorn does: a port the last run left in TIME_WAIT is free to take again (a
            # port another socket listens on is still refused).
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            listener.bind(address)
            listener.listen(BACKLOG)
    except OSError:
        for listener in sockets:
            listener.close()
        raise
    return sockets


def _unavailable(exc: OSError, host: str, port: int, what: str) -> PortUnavailableError:
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        holder = find_listener(port)
        free = _free_port_near(host, port)
        return PortUnavailableError(
            f"{what} cannot listen on {where}: the port is in use"
            + (f" by {holder}" if holder else ""),
            hint=(f"pass another --port (--port {free} is free now)" if free else "pass another --port")
            + ", or stop what holds it",
        )
    if exc.errno == errno.EACCES:
        return PortUnavailableError(
            f"{what} cannot listen on {where}: permission denied",
            hint="ports below 1024 need administrator rights: pass --port 1024 or above",
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return PortUnavailableError(
            f"{what} cannot listen on {where}: {host} is not an address of this machine",
            hint="pass an address of this machine with --host, e.g. --host 127.0.0.1",
        )
    return PortUnavailableError(f"{what} cannot listen on {where}: {exc.strerror or exc}")


def _free_port_near(host: str, port: int) -> int | None:
    """The first of the next few ports above ``port`` that ``host`` can listen on now."""
    for candidate in range(port + 1, min(port + 1 + FREE_PORT_TRIES, 65536)):
        try:
            sockets = _listen(host, candidate)
        except OSError:
            continue
        for listener in sockets:
            listener.close()
        return candidate
    return None


def find_listener(port: int) -> str | None:
    """The process listening on TCP ``port``, as ``pid N (command line)``, when this user may
    see it; None elsewhere (it reads Linux's ``/proc``) or when it is hidden. A few milliseconds:
    one look at the socket tables and at each process's open files."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text("ascii").splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            listening = len(fields) > 9 and fields[3] == "0A"  # TCP_LISTEN
            if listening and int(fields[1].rsplit(":", 1)[1], 16) == port and fields[9] != "0":
                inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return None
    try:
        processes = [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()]
    except OSError:
        return None
    for pid in processes:
        try:
            held = any(os.readlink(fd.path) in inodes for fd in os.scandir(f"/proc/{pid}/fd"))
        except OSError:  # another user's process, or one that just ended
            continue
        if held:
            return f"pid {pid} ({_command_line(pid)})"
    return None


def _command_line(pid: str) -> str:
    """A process's command line, printable and at most 80 characters."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    words = raw.rstrip(b"\0").decode("utf-8", "replace").split("\0")
    text = "".join(ch if ch.isprintable() else "?" for ch in " ".join(words))
    return text if len(text) <= 80 else text[:79] + "…"
