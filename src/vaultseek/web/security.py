"""The app's front door, as plain ASGI middleware (so streamed answers pass straight through):

* Host check — bound to a loopback address (``127.0.0.1``, ``127.0.0.2``, ``::1``, ``localhost``),
  only requests whose ``Host`` names that address or ``localhost`` (any port) are served, so a
  page on another site cannot reach the app by rebinding its DNS name to a loopback address;
  bound beyond loopback, the token (required there) guards instead;
* Origin check — a browser request from any other origin is refused (no CORS, ever), and so is
  one from an opaque origin (``Origin: null``: a sandboxed frame, a ``file:`` page, a
  redirect across sites), whose page could be anyone's;
* token — when one is set, every API request must carry it (``Authorization: Bearer``, or the
  HttpOnly cookie set by opening ``/?token=…`` once); after three wrong tokens from one
  address (an IPv6 /64 counts as one), its next try waits 1 s, then 2, 4, … up to a minute
  (answered 429 with ``Retry-After`` meanwhile), so guessing runs at a few tries a minute
  instead of thousands a second;
* headers — a Content-Security-Policy that only allows this origin (no CDN could load even
  if a page asked): scripts only from files of this server (no inline script, no event-handler
  attributes, no ``eval``), styles only from its style sheets, images from it, ``data:`` and
  ``blob:`` (an attachment's preview made in the page); no referrers, no sniffing, no framing.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import math
import re
import time
from collections.abc import Callable
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

LOCAL_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
"""The names of this machine that no DNS answer can move elsewhere."""
COOKIE = "vaultseek_token"
SECURITY_HEADERS = [
    (b"content-security-policy", (b"default-src 'self'; script-src 'self'; style-src 'self'; "
                                  b"img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; "
                                  b"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")),
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


class WrongTokens:
    """Wrong tokens by client address, and how long each address waits before its next try.

    The first :data:`FREE_TRIES` failures cost nothing (a mistyped token); each one after
    doubles the wait, from 1 s up to :data:`MAX_WAIT` seconds. A right token clears the
    address; one quiet for :data:`FORGET_AFTER` seconds is forgotten. At most
    :data:`MAX_CLIENTS` addresses are remembered (the longest-quiet ones go first)."""

    FREE_TRIES = 3
    MAX_WAIT = 60.0
    FORGET_AFTER = 15 * 60.0
    MAX_CLIENTS = 4096

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.clients: dict[str, tuple[int, float]] = {}
        """client key → (wrong tokens in a row, when the last one came)"""

    def wait(self, client: str) -> float:
        """Seconds ``client`` must still wait before a token of its is checked (0: now)."""
        count, last = self._entry(client)
        if count <= self.FREE_TRIES:
            return 0.0
        delay = min(2.0 ** (count - self.FREE_TRIES - 1), self.MAX_WAIT)
        return max(0.0, last + delay - self.clock())

    def failed(self, client: str) -> None:
        count, _last = self._entry(client)
        self.clients.pop(client, None)  # re-inserted last: the dict stays in order of activity
        self.clients[client] = (count + 1, self.clock())
        while len(self.clients) > self.MAX_CLIENTS:
            del self.clients[next(iter(self.clients))]

    def succeeded(self, client: str) -> None:
        self.clients.pop(client, None)

    def _entry(self, client: str) -> tuple[int, float]:
        entry = self.clients.get(client)
        if entry is None or self.clock() - entry[1] > self.FORGET_AFTER:
            return 0, 0.0
        return entry


def client_key(scope: dict[str, Any]) -> str:
    """Who is guessing: the client's address, an IPv6 address by its /64 (one host's share)."""
    address = str((scope.get("client") or ("",))[0])
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


class Guard:
    def __init__(self, app: Any, *, token: str | None, bind_host: str) -> None:
        self.app = app
        self.token = token
        self.hosts = served_hosts(bind_host)
        self.wrong_tokens = WrongTokens()

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
            offered = query.get("token", [None])[0] if path == "/" else None
            candidates = self._candidates(headers) if path.startswith("/api/") else []
            client = client_key(scope)
            if offered or candidates:  # a token will be checked: not while this client waits
                wait = self.wrong_tokens.wait(client)
                if wait > 0:
                    await _refuse(send, 429, "too_many_wrong_tokens",
                                  "too many wrong tokens from this address; wait before trying again",
                                  "open /?token=YOUR_TOKEN with the token `vaultseek serve` was given",
                                  retry_after=wait)  # fmt: skip
                    return
            if offered:
                if _same(offered, self.token):
                    self.wrong_tokens.succeeded(client)
                    await _set_cookie_and_redirect(send, self.token)
                    return
                self.wrong_tokens.failed(client)
            if path.startswith("/api/"):
                if not any(_same(candidate, self.token) for candidate in candidates):
                    if candidates:
                        self.wrong_tokens.failed(client)
                    await _refuse(send, 401, "unauthorised", "this server needs its token",
                                  "open /?token=YOUR_TOKEN once, or send Authorization: Bearer YOUR_TOKEN")  # fmt: skip
                    return
                self.wrong_tokens.succeeded(client)

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = dict(message, headers=[*message.get("headers", []), *SECURITY_HEADERS])
            await send(message)

        await self.app(scope, receive, send_with_headers)

    @staticmethod
    def _candidates(headers: dict[str, str]) -> list[str]:
        """The tokens a request offers: its bearer token and its cookie."""
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
        return candidates


def _same(offered: str, token: str) -> bool:
    return hmac.compare_digest(offered.encode(), token.encode())


async def _refuse(send: Any, status: int, code: str, message: str, hint: str | None,
                  *, retry_after: float | None = None) -> None:  # fmt: skip
    body = json.dumps({"error": {"code": code, "message": message, "hint": hint}}).encode()
    wait = [(b"retry-after", str(math.ceil(retry_after)).encode())] if retry_after is not None else []
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *wait, *SECURITY_HEADERS]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


async def _set_cookie_and_redirect(send: Any, token: str) -> None:
    cookie = f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/".encode()
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", b"/"), (b"set-cookie", cookie), (b"content-length", b"0"),
                            *SECURITY_HEADERS]})  # fmt: skip
    await send({"type": "http.response.body", "body": b""})
