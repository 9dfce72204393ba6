"""The front end's files, served from memory: one stylesheet with its ``@import`` lines
inlined, every file under a versioned URL the browser keeps for good, and under its plain URL
revalidated by ETag (``app.py`` mounts it at ``/`` and ``/static/…``)."""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import MissingExtraError

try:
    from starlette.requests import Request
    from starlette.responses import Response
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc

ASSET_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml",
               ".json": "application/json", ".md": "text/markdown", ".txt": "text/plain", ".html": "text/html"}  # fmt: skip
"""The static files' types, set here rather than read from the system's mime.types: module
scripts are refused unless served as JavaScript (the app sends ``nosniff``), and a system table
may map ``.js`` to something else or lack ``.mjs``. A file of any other type is served as bytes."""
REVALIDATE = "no-cache"
"""``/`` and ``/static/{path}``: kept by the browser, asked again each time (304 when unchanged)."""
IMMUTABLE = "public, max-age=31536000, immutable"
"""``/static/{version}/{path}``: a versioned URL never changes its bytes: never asked again."""
_CSS_IMPORT = re.compile(rb'^@import url\("([^"]+)"\);[ \t]*\r?\n?', re.MULTILINE)
_VERSION = re.compile(r"[0-9a-f]{12}")


@dataclass(frozen=True, slots=True)
class Asset:
    """One file as it is served: its bytes, its ``Content-Type`` and its ETag."""

    body: bytes
    media_type: str
    etag: str


def _asset(body: bytes, name: str) -> Asset:
    kind = ASSET_TYPES.get(Path(name).suffix, "application/octet-stream")
    media_type = f"{kind}; charset=utf-8" if kind.startswith("text/") else kind
    return Asset(body, media_type, '"' + hashlib.sha256(body).hexdigest()[:20] + '"')


def _inline_imports(name: str, files: dict[str, bytes], seen: frozenset[str] = frozenset()) -> bytes:
    """A stylesheet with its ``@import url("…");`` lines naming this app's own files replaced by
    those files (recursively): the page loads one stylesheet, not one after another."""
    folder = posixpath.dirname(name)

    def inline(found: re.Match[bytes]) -> bytes:
        target = posixpath.normpath(posixpath.join(folder, found[1].decode()))
        if target not in files or target in seen or target == name:
            return found[0]
        return _inline_imports(target, files, seen | {name}).rstrip(b"\n") + b"\n"

    return _CSS_IMPORT.sub(inline, files[name])


class Assets:
    """The front end's files, read once when the app is made and served from memory.

    Each file is served at ``/static/{path}``, revalidated on every use (an ETag, answered 304
    when unchanged), and at ``/static/{version}/{path}``, where ``version`` is a hash of every
    file: those bytes never change under that URL, so the browser keeps them without asking
    again. The page (``index.html``) names the versioned URLs, and the modules' relative imports
    resolve under the same version, so a reload costs one request for the page and the API
    calls; a changed file changes the version, so old and new files are never mixed. A
    stylesheet's ``@import`` lines of the app's own files are inlined (one request for all the
    styles). A request for a version this server did not make (a page opened before the app
    was upgraded) is served today's file, revalidated. Files are read at start-up: an edit to
    them shows after a restart."""

    def __init__(self, folder: Path) -> None:
        raw = {path.relative_to(folder).as_posix(): path.read_bytes()
               for path in sorted(folder.rglob("*")) if path.is_file()}  # fmt: skip
        bodies = {name: _inline_imports(name, raw) if name.endswith(".css") else body for name, body in raw.items()}
        digest = hashlib.sha256()
        for name, body in bodies.items():
            digest.update(name.encode() + b"\0" + hashlib.sha256(body).digest())
        self.version = digest.hexdigest()[:12]
        bodies["index.html"] = bodies["index.html"].replace(b'"/static/', f'"/static/{self.version}/'.encode())
        self.files = {name: _asset(body, name) for name, body in bodies.items()}

    def respond(self, request: Request, name: str, cache_control: str) -> Response:
        asset = self.files.get(name)
        if asset is None:
            return Response(b"Not Found", status_code=404, media_type="text/plain")
        headers = {"ETag": asset.etag, "Cache-Control": cache_control}
        offered = request.headers.get("if-none-match", "")
        if asset.etag in (tag.strip().removeprefix("W/") for tag in offered.split(",")):
            return Response(status_code=304, headers=headers)
        if request.method == "HEAD":
            headers["Content-Length"] = str(len(asset.body))
            return Response(b"", media_type=asset.media_type, headers=headers)
        return Response(asset.body, media_type=asset.media_type, headers=headers)

    async def page(self, request: Request) -> Response:
        return self.respond(request, "index.html", REVALIDATE)

    async def static(self, request: Request) -> Response:
        path: str = request.path_params["path"]
        first, _, rest = path.partition("/")
        if rest and _VERSION.fullmatch(first):
            return self.respond(request, rest, IMMUTABLE if first == self.version else REVALIDATE)
        return self.respond(request, path, REVALIDATE)
