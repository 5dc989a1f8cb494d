"""One JSON error shape for every failure: {"error": "<stable code>", "detail": "<for people>"}.

Every failure reaches the client through the handlers installed here: `ApiError` raised by a
route or dependency, validation failures of the pydantic bodies (a validator names its stable
code by raising `PydanticCustomError(code, ...)` with a code listed in `VALIDATION_CODES`),
store errors, backend errors and anything unexpected."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError, ValidatorFunctionWrapHandler
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException as StarletteHTTPException

from lobug.audio import AudioError
from lobug.backends.base import Abandoned, BackendError, SpeechNotReady
from lobug.memory.agents import AgentNotFound
from lobug.memory.evidence import PersonNotAllowed, SummariesPrivate
from lobug.names import InvalidPersonName
from lobug.store.errors import (
    BlockExists,
    BlockNotFound,
    BlockReadOnly,
    BlockTooLong,
    DeviceTaken,
    DreamNotFound,
    DreamUndone,
    EmbeddingMismatch,
    FactHasNoOwner,
    FactNotCurrent,
    FactNotFound,
    ImportConflict,
    MessageNotFound,
    PersonExists,
    PersonNotFound,
    SourcesForgotten,
    StorageUnavailable,
    TopicNotFound,
)
from lobug.tokens import PromptTooLong
from lobug.turn.devices import DeviceBusy

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "invalid_json",  # FastAPI answers 400 only when a JSON body cannot be decoded
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
}

# Stable codes that body validators raise as pydantic error types, with their status.
VALIDATION_CODES = {
    "missing_text": 422,
    "invalid_text": 422,
    "empty_text": 422,
    "invalid_sensors": 422,
    "invalid_agent": 422,
    "invalid_person": 422,
    "invalid_request": 422,
    "span_required": 422,
    "invalid_span": 422,
}

_STORE_ERRORS: dict[type[Exception], tuple[int, str]] = {
    AgentNotFound: (404, "agent_not_found"),
    PersonNotAllowed: (403, "person_not_allowed"),
    SummariesPrivate: (403, "summaries_private"),
    BlockExists: (409, "block_exists"),
    BlockNotFound: (404, "block_not_found"),
    BlockReadOnly: (403, "block_read_only"),
    BlockTooLong: (422, "block_too_long"),
    FactNotFound: (404, "fact_not_found"),
    MessageNotFound: (404, "message_not_found"),
    FactNotCurrent: (409, "fact_not_current"),
    SourcesForgotten: (409, "sources_forgotten"),
    ImportConflict: (409, "import_conflict"),
    DreamNotFound: (404, "dream_not_found"),
    DreamUndone: (409, "dream_undone"),
    TopicNotFound: (404, "topic_not_found"),
    PersonNotFound: (404, "person_not_found"),
    PersonExists: (409, "person_exists"),
    DeviceTaken: (409, "device_taken"),
    FactHasNoOwner: (409, "fact_has_no_owner"),
    InvalidPersonName: (422, "invalid_person"),
    # Only where the embedder is built on first use (the command line's local app): a server
    # checks its model when the database opens.
    EmbeddingMismatch: (409, "embedding_mismatch"),
}


# What each stable code of the curation routes means, for their OpenAPI `responses`.
ERROR_DOCS: dict[str, tuple[int, str]] = {
    "agent_not_found": (404, "no agent by this name (POST /agents first)"),
    "block_not_found": (404, "the agent has no memory block with this label"),
    "fact_not_found": (404, "the agent has no fact with this id"),
    "message_not_found": (404, "the agent has no message with this id"),
    "dream_not_found": (404, "the agent has no dream with this id"),
    "dream_undone": (409, "the dream was undone already"),
    "topic_not_found": (404, "the agent has no topic with this id (ids change at each rebuild)"),
    "fact_not_current": (409, "the fact was superseded or forgotten: change its current version"),
    "invalid_request": (422, "a parameter or the body is invalid"),
    "span_required": (422, "none of device, since, until given: the whole log is never forgotten"),
    "invalid_span": (422, "since is after until"),
    "confirmation_required": (422, "confirm does not repeat the agent's name"),
    "invalid_export": (422, "not an export document: the detail names the JSON path"),
    "import_conflict": (409, "the agent holds other memory: merge=true to add to it"),
    "person_not_found": (404, "the household has no person with this id"),
    "person_exists": (409, "the household has a person of this name (any case)"),
    "device_taken": (409, "the device is another person's: move=true moves it"),
    "recognition_off": (409, "recognition by voice is off (LOBUG_SPEAKER_RECOGNITION)"),
    "voice_refused": (422, "the recordings cannot make a voice profile: the detail says why"),
    "fact_has_no_owner": (409, "a household fact with no owner cannot become private"),
    "invalid_person": (422, "not a person's name: 1-40 letters, words joined by ' - . or a space"),
    "summaries_private": (
        403,
        "made from every person's words: in a household of several people, admin tokens only",
    ),
    "person_not_allowed": (
        403,
        "the token may not ask as this person (the admin, or a device's own token of their device)",
    ),
}


def documented(*codes: str) -> dict[int | str, dict[str, Any]]:
    """A route's `responses=`: its error answers by stable code (see `ERROR_DOCS`); codes that
    share a status share its entry."""
    by_status: dict[int | str, list[str]] = {}
    for code in codes:
        status, meaning = ERROR_DOCS[code]
        by_status.setdefault(status, []).append(f"{code}: {meaning}")
    return {status: {"description": "; ".join(lines)} for status, lines in by_status.items()}


class ApiError(Exception):
    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail


def body_error(code: str, reason: str) -> PydanticCustomError:
    """A validation failure of a body field with a stable code of its own (in
    `VALIDATION_CODES`); raise it from a pydantic validator."""
    return PydanticCustomError(code, "{reason}", {"reason": reason})


def valid_or(value: Any, handler: ValidatorFunctionWrapHandler, code: str, reason: str) -> Any:
    """For wrap validators: `value` validated, or any failure reported as `code`."""
    try:
        return handler(value)
    except ValidationError:
        raise body_error(code, reason) from None


def error_response(
    status: int, error: str, detail: Any, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail}, status_code=status, headers=headers)


def validation_response(errors: Sequence[Any]) -> JSONResponse:
    """The first error with a stable code of its own decides; else 422 `invalid_request` with
    every problem listed."""
    for error in errors:
        kind = error.get("type")
        if kind in VALIDATION_CODES:
            return error_response(VALIDATION_CODES[kind], kind, str(error.get("msg", "")))
        if kind == "json_invalid":
            return error_response(400, "invalid_json", "The body is not valid JSON")
        if tuple(error.get("loc", ())) == ("body",):
            return _whole_body_error(kind)
    problems = [
        {"loc": [str(part) for part in e.get("loc", ())], "msg": str(e.get("msg", ""))}
        for e in errors
    ]
    return error_response(422, "invalid_request", problems)


def _whole_body_error(kind: str) -> JSONResponse:
    if kind == "missing":  # an empty body is no JSON at all
        return error_response(400, "invalid_json", "The body is not valid JSON")
    return error_response(422, "invalid_request", "The body must be a JSON object")


def install_error_handlers(app: FastAPI) -> None:
    async def api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return error_response(exc.status, exc.error, exc.detail, headers)

    async def validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return validation_response(exc.errors())

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, exc.detail, exc.headers)

    async def store_error(_: Request, exc: Exception) -> JSONResponse:
        status, code = next(v for k, v in _STORE_ERRORS.items() if isinstance(exc, k))
        return error_response(status, code, str(exc))

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    for store_exception in _STORE_ERRORS:
        app.add_exception_handler(store_exception, store_error)
    _install_service_handlers(app)


def _install_service_handlers(app: FastAPI) -> None:
    """Failures of what a request depends on: the model, speech, the database; and bugs."""

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

    async def prompt_too_long(_: Request, exc: Exception) -> JSONResponse:
        return error_response(413, "text_too_long_for_model", str(exc))

    async def audio_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, AudioError)  # each kind says its status and code
        return error_response(exc.status, exc.error, str(exc))

    async def device_busy(_: Request, exc: Exception) -> JSONResponse:
        return error_response(429, "device_busy", str(exc))

    async def unexpected_error(_: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc)
        return error_response(500, "internal_error", "Internal server error")

    app.add_exception_handler(BackendError, backend_error)
    app.add_exception_handler(SpeechNotReady, speech_not_ready)
    app.add_exception_handler(Abandoned, abandoned)
    app.add_exception_handler(StorageUnavailable, storage_unavailable)
    app.add_exception_handler(PromptTooLong, prompt_too_long)
    app.add_exception_handler(AudioError, audio_error)
    app.add_exception_handler(DeviceBusy, device_busy)
    app.add_exception_handler(Exception, unexpected_error)
