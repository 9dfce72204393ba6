"""The app's front door, as plain ASGI middleware (so streamed answers pass straight through):

* Host check — bound to a loopback address (``127.0.0.1``, ``127.0.0.2``, ``::1``, ``localhost``),
  only requests whose ``Host`` names that address or ``localhost`` (any port) are served, so a
  page on another site cannot reach the app by rebinding its DNS name to a loopback address;
  bound beyond loopback, the token (required there) guards instead;
* Origin check — a browser request from any other origin is refused (no CORS, ever), and so is
  one from an opaque origin (``Origin: null``: a sandboxed frame, a ``file:`` page, a
  redirect across sites), whose page could be anyone's;
* token — when one is set, every API request must carry it (``Authorization: Bearer``, or the
  HttpOnly cookie set by opening ``/?token=…`` once);
* headers — a Content-Security-Policy that only allows this origin (no CDN could load even
  if a page asked), no referrers, no sniffing, no framing.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import re
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

LOCAL_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
"""The names of this machine that no DNS answer can move elsewhere."""
COOKIE = "vaultseek_token"
SECURITY_HEADERS = [
    (b"content-security-policy", (b"default-src 'self'; img-src 'self' data:; object-src 'none'; "
                                  b"base-uri 'none'; frame-ancestors 'none'; form-action 'self'")),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]  # fmt: skip


_HOST_HEADER = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[^\[\]:/@\s]+))(?::(?P<port>[0-9]{1,5}))?")


def _canonical(name: str) -> str:
    """An IP address in its one spelling (``0:0::1`` → ``::1``); a name in lower case."""
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name.lower()


def host_name(host_header: str) -> str | None:
    """The host a ``Host`` header names, canonical: ``[::1]:8765`` → ``::1``,
    ``LocalHost:8765`` → ``localhost``; None for a header that is not ``host[:port]``."""
    found = _HOST_HEADER.fullmatch(host_header.strip().lower())
    if found is None:
        return None
    if found["v6"] is not None:
        try:
            return str(ipaddress.IPv6Address(found["v6"]))
        except ValueError:
            return None
    return _canonical(found["name"])


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and any loopback address (127.0.0.0/8, ``::1``)."""
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def served_hosts(bind_host: str) -> frozenset[str] | None:
    """The host names a server bound to ``bind_host`` answers: for a loopback address, that
    address and ``localhost`` (for ``localhost`` itself, also ``127.0.0.1`` and ``::1``, where
    it listens); None — any — beyond loopback, where a token is required instead."""
    if not is_loopback(bind_host):
        return None
    bound = _canonical(bind_host)
    return frozenset({bound, "localhost"} | (LOCAL_NAMES if bound == "localhost" else set()))


class Guard:
    def __init__(self, app: Any, *, token: str | None, bind_host: str) -> None:
        self.app = app
        self.token = token
        self.hosts = served_hosts(bind_host)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if self.hosts is not None and host_name(host) not in self.hosts:
            await _refuse(send, 403, "forbidden_host", f"requests for host {host!r} are refused",
                          "open the app at the address `vaultseek serve` printed "
                          "(this guards against DNS rebinding)")  # fmt: skip
            return
        origin = headers.get("origin")
        if origin is not None and (origin.strip().lower() == "null" or urlsplit(origin).netloc.lower() != host.lower()):
            await _refuse(send, 403, "cross_origin", f"requests from {origin or 'an empty origin'} are refused",
                          "the app only answers its own pages")  # fmt: skip
            return
        if headers.get("sec-fetch-site") == "cross-site":
            await _refuse(send, 403, "cross_origin", "cross-site requests are refused", None)
            return
        path = scope.get("path", "")
        if self.token:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            offered = query.get("token", [None])[0]
            if offered and hmac.compare_digest(offered.encode(), self.token.encode()) and path == "/":
                await _set_cookie_and_redirect(send, self.token)
                return
            if path.startswith("/api/") and not self._authorised(headers):
                await _refuse(send, 401, "unauthorised", "this server needs its token",
                              "open /?token=YOUR_TOKEN once, or send Authorization: Bearer YOUR_TOKEN")  # fmt: skip
                return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = dict(message, headers=[*message.get("headers", []), *SECURITY_HEADERS])
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _authorised(self, headers: dict[str, str]) -> bool:
        assert self.token is not None
        candidates = []
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            candidates.append(auth[7:].strip())
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 - a malformed cookie header is just no cookie
            pass
        if COOKIE in cookie:
            candidates.append(cookie[COOKIE].value)
        return any(hmac.compare_digest(c.encode(), self.token.encode()) for c in candidates)


async def _refuse(send: Any, status: int, code: str, message: str, hint: str | None) -> None:
    body = json.dumps({"error": {"code": code, "message": message, "hint": hint}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *SECURITY_HEADERS]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


async def _set_cookie_and_redirect(send: Any, token: str) -> None:
    cookie = f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/".encode()
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", b"/"), (b"set-cookie", cookie), (b"content-length", b"0"),
                            *SECURITY_HEADERS]})  # fmt: skip
    await send({"type": "http.response.body", "body": b""})
