"""Request bodies are refused with 413 before they are read whole.

A pure ASGI middleware: a declared `Content-Length` over the limit is answered at once; a body
sent without one (chunked) is counted as it arrives, and the request ends with 413 as soon as
it passes the limit, whatever the endpoint was doing with it."""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lobug.api.errors import error_response


class BodyTooLarge(Exception):
    """Raised into the endpoint reading the body; the middleware answers 413."""


class BodySizeLimit:
    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = declared_length(scope)
        if declared is not None and declared > limit:
            await too_large(limit)(scope, receive, send)
            return
        guard = _Guard(receive, send, limit)
        try:
            await self.app(scope, guard.receive, guard.send)
        except Exception:
            if not guard.overflowed:
                raise
        if guard.overflowed and not guard.started:
            await too_large(limit)(scope, receive, send)


class _Guard:
    """Counts the body as the app reads it; once over the limit, the app's own answer is
    dropped so the middleware can answer 413."""

    def __init__(self, receive: Receive, send: Send, limit: int) -> None:
        self._receive = receive
        self._send = send
        self.limit = limit
        self.received = 0
        self.overflowed = False
        self.started = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limit:
                self.overflowed = True
                raise BodyTooLarge(f"body larger than {self.limit} bytes")
        return message

    async def send(self, message: Message) -> None:
        if self.overflowed and not self.started:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)


def declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


def too_large(limit: int) -> ASGIApp:
    return error_response(413, "payload_too_large", f"The body is larger than {limit} bytes")
