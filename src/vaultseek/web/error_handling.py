"""How the study app's errors leave it: ``{"error": {"code", "message", "hint"}}`` with the HTTP
status chosen by the error's type, never by its wording."""

from __future__ import annotations

import sys
import traceback

from ..errors import (
    IndexBusyError,
    IndexClosedError,
    IndexNotFoundError,
    LLMError,
    MapUnavailableError,
    MissingExtraError,
    NotFoundError,
    QueryError,
    VaultNotFoundError,
    VaultseekError,
)
from ..study.uploads import UploadError

try:
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
except ImportError as exc:  # installed without the study extra
    raise MissingExtraError.from_import(exc, "study", feature="the study app (vaultseek serve)") from exc


def error_response(status: int, code: str, message: str, hint: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, "hint": hint}}, status_code=status)


def status_of(exc: VaultseekError) -> tuple[int, str]:
    """The HTTP status and error code of a vaultseek error, by its type."""
    if isinstance(exc, UploadError):
        return exc.status, "upload_refused"
    if isinstance(exc, NotFoundError):
        return 404, "not_found"
    if isinstance(exc, QueryError):
        return 400, "bad_request"
    if isinstance(exc, (IndexNotFoundError, VaultNotFoundError)):
        return 503, "no_index"
    if isinstance(exc, IndexBusyError):
        return 503, "busy"
    if isinstance(exc, IndexClosedError):
        return 503, "shutting_down"
    if isinstance(exc, MapUnavailableError):
        return 503, "map_unavailable"
    if isinstance(exc, LLMError):
        return 502, "llm_error"
    return 500, "error"


async def on_vaultseek_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, VaultseekError)
    status, code = status_of(exc)
    return error_response(status, code, exc.message, exc.hint)


async def on_http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return error_response(exc.status_code, code, str(exc.detail))


async def on_unexpected(_request: Request, exc: Exception) -> Response:
    traceback.print_exception(exc, file=sys.stderr)
    return error_response(500, "internal", f"unexpected {exc.__class__.__name__}: {exc}",
                          "this is a bug in vaultseek; the server log has the details")  # fmt: skip


HANDLERS = {VaultseekError: on_vaultseek_error, HTTPException: on_http_error, Exception: on_unexpected}
"""The app's exception handlers, most specific first."""
