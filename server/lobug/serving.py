"""How the servers listen: uvicorn with timeouts a home server needs and an access log that
never shows a query string.

uvicorn closes an idle keep-alive connection after `timeout_keep_alive`, but never times out a
connection that sends nothing, or sends a request's headers or body slowly: 50 idle sockets
and 20 half-sent headers stayed open for minutes. `GuardedH11Protocol` gives every connection
`idle_timeout_s` to start a request, and every request `request_timeout_s` from its first byte
until it has been received whole (headers and body); past either, the connection is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

import h11
import uvicorn
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

KEEP_ALIVE_TIMEOUT_S = 5
IDLE_TIMEOUT_S = 10.0
REQUEST_TIMEOUT_S = 60.0
# Once a stop is asked (SIGTERM, Ctrl-C): requests in flight get GRACE_S to finish; whatever
# still runs STOP_DEADLINE_S after the signal (a model call, a batch being embedded, a pass
# of the maintenance thread) ends with the process. Every acknowledged write is committed
# before its answer, so this loses nothing acknowledged (the guarantee `make crash` checks).
GRACE_S = 2
STOP_DEADLINE_S = 4.0


class GuardedH11Protocol(H11Protocol):
    idle_timeout_s = IDLE_TIMEOUT_S
    request_timeout_s = REQUEST_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for_a_request = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.idle_timeout_s)
        self._waiting_for_a_request = True

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._receiving_a_request():
            self._disarm()
        elif self._deadline is None or self._waiting_for_a_request:
            self._arm(self.request_timeout_s)  # from the request's first byte

    def on_response_complete(self) -> None:
        self._disarm()  # the keep-alive timeout takes over
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _receiving_a_request(self) -> bool:
        """Whether a request has begun and has not been received whole."""
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return self.conn.their_state is h11.IDLE  # bytes of the next request's head
        return cycle.more_body

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        self._waiting_for_a_request = False
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


class RedactQueryStrings(logging.Filter):
    """Access-log lines without query strings: a token or a search someone put in a URL is
    not written to the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].split("?", 1)[0], *args[3:])
        return True


def uvicorn_config(
    app: Any,
    host: str,
    port: int,
    log_level: str,
    *,
    idle_timeout_s: float = IDLE_TIMEOUT_S,
    request_timeout_s: float = REQUEST_TIMEOUT_S,
) -> Any:
    """The uvicorn config every server of this project runs with."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactQueryStrings) for f in access.filters):
        access.addFilter(RedactQueryStrings())
    protocol = type(
        "Protocol",
        (GuardedH11Protocol,),
        {"idle_timeout_s": idle_timeout_s, "request_timeout_s": request_timeout_s},
    )
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level.lower(),
        http=protocol,
        timeout_keep_alive=KEEP_ALIVE_TIMEOUT_S,
        timeout_graceful_shutdown=GRACE_S,
    )


class AnswerWhenStopped:
    """A request still running GRACE_S after a stop signal is cancelled by uvicorn, which then
    answers a plain 500; this answers it 503 `server_stopping` in the API's JSON shape (when
    nothing was sent yet: a stream already under way just ends)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except asyncio.CancelledError:
            if started:
                raise
            detail = "The server is stopping; nothing of this request was acknowledged"
            answer = JSONResponse({"error": "server_stopping", "detail": detail}, 503)
            await answer(scope, receive, send)  # the task ends here, answered


class PromptlyStoppingServer(uvicorn.Server):
    """uvicorn's server whose first stop signal also arms the deadline: STOP_DEADLINE_S
    later, the process ends whatever it is still doing (`stop_now`). A second SIGTERM ends it
    at once."""

    deadline_s = STOP_DEADLINE_S

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit:
            timer = threading.Timer(self.deadline_s, stop_now, args=(self.deadline_s, sig))
            timer.daemon = True
            timer.start()
            if sig == signal.SIGTERM:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
        super().handle_exit(sig, frame)


def stop_now(after_s: float, sig: int) -> None:
    """End the process at once, as a clean stop ends: by SIGTERM itself, or status 0 after
    Ctrl-C."""
    log.warning(
        "still busy %.0f s after the stop was asked: stopping now (what was acknowledged is "
        "committed; unfinished memory work stays queued for the next start)",
        after_s,
    )
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    if sig == signal.SIGTERM:
        os.kill(os.getpid(), signal.SIGTERM)  # its default action, set by handle_exit
    os._exit(0)


def serve(app: Any, host: str, port: int, log_level: str) -> None:
    """Run `app` until stopped, within STOP_DEADLINE_S whatever it is doing: Ctrl-C ends it
    with exit status 0, SIGTERM by the signal itself (as uvicorn re-raises it)."""
    # uvicorn re-raises the signal it handled once it has shut down; uvicorn.run swallows it
    with contextlib.suppress(KeyboardInterrupt):
        PromptlyStoppingServer(uvicorn_config(AnswerWhenStopped(app), host, port, log_level)).run()
