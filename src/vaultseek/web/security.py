"""The app's front door, as plain ASGI middleware (so streamed answers pass straight through):

* Host check — on a localhost binding only ``localhost``/``127.0.0.1``/``[::1]`` are served,
  so a page on another site cannot reach the app by rebinding its DNS name to 127.0.0.1;
* Origin check — a browser request from any other origin is refused (no CORS, ever);
* token — when one is set, every API request must carry it (``Authorization: Bearer``, or the
  HttpOnly cookie set by opening ``/?token=…`` once);
* headers — a Content-Security-Policy that only allows this origin (no CDN could load even
  if a page asked), no referrers, no sniffing, no framing.
"""

from __future__ import annotations

import hmac
import json
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

LOCAL_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
COOKIE = "vaultseek_token"
SECURITY_HEADERS = [
    (b"content-security-policy", (b"default-src 'self'; img-src 'self' data:; object-src 'none'; "
                                  b"base-uri 'none'; frame-ancestors 'none'; form-action 'self'")),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]  # fmt: skip


def host_name(host_header: str) -> str:
    """``[::1]:8765`` → ``::1``; ``localhost:8765`` → ``localhost``."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    def __init__(self, app: Any, *, token: str | None, local_only: bool) -> None:
        self.app = app
        self.token = token
        self.local_only = local_only

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if self.local_only and host_name(host) not in LOCAL_NAMES:
            await _refuse(send, 403, "forbidden_host", f"requests for host {host!r} are refused",
                          "open the app at http://127.0.0.1:<port>/ (this guards against DNS rebinding)")  # fmt: skip
            return
        origin = headers.get("origin")
        if origin and origin != "null" and urlsplit(origin).netloc.lower() != host.lower():
            await _refuse(send, 403, "cross_origin", f"requests from {origin} are refused",
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
