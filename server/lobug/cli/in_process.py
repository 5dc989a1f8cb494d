"""An httpx transport to an ASGI app run in this process: the command line's local mode
calls the memory API app (`lobug.app.create_local_app`) through it, so a local command goes
through the same routes as one sent to a server.

The app runs on an event loop of its own thread; its lifespan is entered when the transport
opens (a failure to open, such as a database embedded with another model, is raised there)
and left when it closes. A request's body is read whole before it crosses to that thread,
and its answer comes back whole. An exception no error handler of the app answers (a bug, a
configuration error met on first use) is raised to the command as it was raised in the app,
so the command's exit code says what it was."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx
from anyio.from_thread import BlockingPortal, start_blocking_portal
from starlette.types import ASGIApp


class InProcess(httpx.BaseTransport):
    def __init__(self, app: ASGIApp, lifespan: AbstractAsyncContextManager[Any]) -> None:
        self._portal_opened = start_blocking_portal()
        self._portal: BlockingPortal = self._portal_opened.__enter__()
        self._asgi = httpx.ASGITransport(app=app)
        self._lifespan = self._portal.wrap_async_context_manager(lifespan)
        try:
            self._lifespan.__enter__()
        except BaseException:
            self._portal_opened.__exit__(None, None, None)
            raise

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        status, headers, body = self._portal.call(self._answer, request)
        return httpx.Response(status, headers=headers, content=body, request=request)

    async def _answer(self, request: httpx.Request) -> tuple[int, httpx.Headers, bytes]:
        response = await self._asgi.handle_async_request(request)
        return response.status_code, response.headers, await response.aread()

    def close(self) -> None:
        try:
            self._lifespan.__exit__(None, None, None)
        finally:
            self._portal_opened.__exit__(None, None, None)
