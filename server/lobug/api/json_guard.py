"""Every body that FastAPI reads as JSON is checked once, before any route sees it: nested at
most `MAX_JSON_DEPTH` levels, and no lone surrogate in any string or key (`memory/limits.py`,
the rule imports and `MemoryEngine` follow too). Anything else is 400 `invalid_json` naming
the problem.

A body is JSON here exactly when FastAPI would parse it as JSON (`fastapi/routing.py`): sent
without a Content-Type (this app is not strict about it), as `application/json`, or as any
`application/*+json` (`merge-patch+json`, `vnd.api+json`, ...), parameters and case aside.
Whatever the method.

Such values pass FastAPI's own parsing and most validators (a `dict[str, Any]` metadata field
takes anything), get stored, and then break every later response that has to serialize them.
(Numbers are the fields' business: NaN and Infinity are refused by the fields that take
numbers, with their own codes.)
A pure ASGI middleware inside the body-size limit: the body it reads is already bounded."""

from __future__ import annotations

import email.message
import json
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lobug.api.errors import error_response
from lobug.memory.limits import MAX_JSON_DEPTH, json_problem

__all__ = ["MAX_JSON_DEPTH", "JsonBodyGuard", "body_problem", "read_as_json"]


class JsonBodyGuard:
    def __init__(self, app: ASGIApp, applies_to: Callable[[str], bool]) -> None:
        self.app = app
        self.applies_to = applies_to

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._checks(scope):
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        problem = body_problem(body)
        if problem is not None:
            await error_response(400, "invalid_json", problem)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)

    def _checks(self, scope: Scope) -> bool:
        return (
            scope["type"] == "http"
            and self.applies_to(scope["path"])
            and read_as_json(content_type(scope))
        )


def content_type(scope: Scope) -> str | None:
    """The first Content-Type header, as Starlette's `request.headers.get` reads it."""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return str(value.decode("latin-1"))
    return None


def read_as_json(value: str | None) -> bool:
    """Whether FastAPI parses a body sent with this Content-Type as JSON: none (or empty), or
    `application/json` or `application/*+json`, read by the same header parser it uses."""
    if not value:
        return True
    header = email.message.Message()
    header["content-type"] = value
    if header.get_content_maintype() != "application":
        return False
    subtype = header.get_content_subtype()
    return subtype == "json" or subtype.endswith("+json")


async def read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the app the body already read, then the real channel (so a
    disconnect is still seen)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def body_problem(body: bytes) -> str | None:
    """Why `body` is refused, or None (also for a body that is not JSON at all: the route's
    own parsing answers that)."""
    if not body.strip():
        return None
    try:
        document = json.loads(body)
    except RecursionError:
        return f"The JSON is nested deeper than {MAX_JSON_DEPTH} levels"
    except ValueError:
        return None  # not JSON: the route answers it as today
    problem = json_problem(document)
    return None if problem is None else f"The JSON {problem}"
