"""Every JSON body is checked once, before any route sees it: nested at most
`MAX_JSON_DEPTH` levels, and no lone surrogate in any string or key. Anything else is 400
`invalid_json` naming the problem.

Such values pass FastAPI's own parsing and most validators (a `dict[str, Any]` metadata field
takes anything), get stored, and then break every later response that has to serialize them.
(Numbers are the fields' business: NaN and Infinity are refused by the fields that take
numbers, with their own codes.)
A pure ASGI middleware inside the body-size limit: the body it reads is already bounded."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lobug.api.errors import error_response

MAX_JSON_DEPTH = 32
BODYLESS_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class JsonBodyGuard:
    def __init__(self, app: ASGIApp, applies_to: Callable[[str], bool]) -> None:
        self.app = app
        self.applies_to = applies_to

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._checks(scope):
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        problem = json_problem(body)
        if problem is not None:
            await error_response(400, "invalid_json", problem)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)

    def _checks(self, scope: Scope) -> bool:
        return (
            scope["type"] == "http"
            and scope["method"] not in BODYLESS_METHODS
            and self.applies_to(scope["path"])
            and content_type(scope) in ("", "application/json")
        )


def content_type(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return value.decode("latin-1").split(";")[0].strip().lower()
    return ""


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


def json_problem(body: bytes) -> str | None:
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
    return _walk(document)


def _walk(document: Any) -> str | None:
    """Depth and strings of a decoded document, without recursion."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if not _encodable(value):
                return "A string holds a lone surrogate (not valid Unicode text)"
        elif isinstance(value, dict | list):
            if depth > MAX_JSON_DEPTH:
                return f"The JSON is nested deeper than {MAX_JSON_DEPTH} levels"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                stack.append((key, depth))
                stack.append((item, depth + 1))
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
