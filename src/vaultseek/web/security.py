"""The app's front door, as plain ASGI middleware (so streamed answers pass straight through):

* Host check — bound to a loopback address (``127.0.0.1``, ``127.0.0.2``, ``::1``, ``localhost``),
  only requests whose ``Host`` names that address or ``localhost`` (any port) are served, so a
  page on another site cannot reach the app by rebinding its DNS name to a loopback address;
  bound beyond loopback, the token (required there) guards instead;
* Origin check — a browser request from any other origin is refused (no CORS, ever), and so is
  one from an opaque origin (``Origin: null``: a sandboxed frame, a ``file:`` page, a
  redirect across sites), whose page could be anyone's;
* token — when one is set, every API request must carry it (``Authorization: Bearer``, or the
  HttpOnly cookie set by opening ``/?token=…`` once). A right token is always checked and let
  in at once, so a guesser cannot lock the owner out. Wrong tokens are counted for the whole
  server (never by address: every client of a loopback binding is this machine, and no
  forwarded header is trusted): after :attr:`WrongTokens.FREE_TRIES`, each wrong one is
  answered in turn, 1 s after the one before, then 2, 4, … up to 30 s apart, its connection
  held meanwhile (one whose turn is more than a minute off is held a minute and answered 429
  with ``Retry-After``), so guessing runs at a few tries a minute instead of thousands a
  second, however many connections or addresses it uses;
* headers — a Content-Security-Policy that only allows this origin (no CDN could load even
  if a page asked): scripts only from files of this server (no inline script, no event-handler
  attributes, no ``eval``), styles only from its style sheets, images from it, ``data:`` and
  ``blob:`` (an attachment's preview made in the page); no referrers, no sniffing, no framing.
"""

from __future__ import annotations

import asyncio
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
    """Wrong tokens offered to this server, and when the next one may be answered.

    The first :data:`FREE_TRIES` cost nothing (a mistyped token). Each one after takes the next
    turn in one line for the whole server: turns are 1 s apart, then 2, 4, … up to
    :data:`MAX_SPACING` seconds. A turn further off than :data:`MAX_HOLD` seconds is not taken
    (that guess is held :data:`MAX_HOLD` seconds and refused). The count is forgotten after
    :data:`FORGET_AFTER` quiet seconds; a right token does not reset it (a guesser must not
    profit from the owner's visit)."""

    FREE_TRIES = 5
    MAX_SPACING = 30.0
    MAX_HOLD = 60.0
    FORGET_AFTER = 15 * 60.0

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.count = 0
        """wrong tokens since the last quiet spell"""
        self.last = -math.inf
        """when the last one came"""
        self.next_turn = -math.inf
        """when the last answer given a turn is due"""

    def turn(self) -> tuple[float, bool]:
        """Count one more wrong token: how many seconds its answer waits, and whether it has a
        turn (True: answer 401 then) or only waits :data:`MAX_HOLD` (False: answer 429)."""
        now = self.clock()
        if now - self.last > self.FORGET_AFTER:
            self.count = 0
        self.last = now
        self.count += 1
        if self.count <= self.FREE_TRIES:
            return 0.0, True
        spacing = min(2.0 ** (self.count - self.FREE_TRIES - 1), self.MAX_SPACING)
        due = max(now, self.next_turn) + spacing
        if due - now > self.MAX_HOLD:
            return self.MAX_HOLD, False
        self.next_turn = due
        return due - now, True


async def held(receive: Any, seconds: float) -> bool:
    """Wait ``seconds`` unless the client hangs up first; True if it is still there (the request
    body, if any, is read and dropped meanwhile: its request is refused anyway)."""
    if seconds <= 0:
        return True

    async def hang_up() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    try:
        await asyncio.wait_for(hang_up(), seconds)  # (cancelled when the time is up)
    except TimeoutError:
        return True
    return False


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
            if offered and _same(offered, self.token):  # the right token: always, at once
                await _set_cookie_and_redirect(send, self.token)
                return
            if path.startswith("/api/") and not any(_same(candidate, self.token) for candidate in candidates):
                if candidates and not await self._wrong_token(receive, send):
                    return
                await _refuse(send, 401, "unauthorised", "this server needs its token",
                              "open /?token=YOUR_TOKEN once, or send Authorization: Bearer YOUR_TOKEN")  # fmt: skip
                return
            if offered and not await self._wrong_token(receive, send):  # a wrong one: the page, in turn
                return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = dict(message, headers=[*message.get("headers", []), *SECURITY_HEADERS])
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _wrong_token(self, receive: Any, send: Any) -> bool:
        """Hold a wrong token's answer until its turn (see :class:`WrongTokens`); False when
        the request is done with (its client hung up, or it was refused 429)."""
        wait, has_turn = self.wrong_tokens.turn()
        if not await held(receive, wait):
            return False
        if has_turn:
            return True
        await _refuse(send, 429, "too_many_wrong_tokens", "too many wrong tokens; wait before trying again",
                      "open /?token=YOUR_TOKEN with the token `vaultseek serve` was given",
                      retry_after=self.wrong_tokens.MAX_SPACING)  # fmt: skip
        return False

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
