"""One JSON error shape for every failure: {"error": "<stable code>", "detail": "<for people>"}."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from lobug.backends.base import Abandoned, BackendError, SpeechNotReady
from lobug.store.errors import StorageUnavailable

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
}


class ApiError(Exception):
    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail


def error_response(
    status: int, error: str, detail: Any, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail}, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    async def api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return error_response(exc.status, exc.error, exc.detail, headers)

    async def validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        problems = [
            {"loc": [str(part) for part in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in exc.errors()
        ]
        return error_response(422, "invalid_request", problems)

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, exc.detail, exc.headers)

    async def backend_error(_: Request, exc: Exception) -> JSONResponse:
        log.warning("model backend failed: %s", exc)
        return error_response(503, "llm_unavailable", f"The language model is unavailable: {exc}")

    async def abandoned(_: Request, exc: Exception) -> JSONResponse:
        # Nobody reads this answer: the client hung up while its request waited.
        log.info("skipped a reply: %s", exc)
        return error_response(499, "client_closed_request", str(exc))

    async def speech_not_ready(_: Request, exc: Exception) -> JSONResponse:
        return error_response(503, "speech_unavailable", f"Speech is unavailable: {exc}")

    async def storage_unavailable(_: Request, exc: Exception) -> JSONResponse:
        log.error("storage failed: %s", exc)
        return error_response(503, "storage_unavailable", str(exc))

    async def unexpected_error(_: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc)
        return error_response(500, "internal_error", "Internal server error")

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(BackendError, backend_error)
    app.add_exception_handler(SpeechNotReady, speech_not_ready)
    app.add_exception_handler(Abandoned, abandoned)
    app.add_exception_handler(StorageUnavailable, storage_unavailable)
    app.add_exception_handler(Exception, unexpected_error)
