"""A real uvicorn server for an app built in the test process (fakes inside, real HTTP)."""

from __future__ import annotations

import socket
import sys
import threading
import time

import uvicorn
from starlette.types import ASGIApp


class LiveServer:
    """An ASGI app served by uvicorn on a free local port, in a background thread; with
    `traced=False` the thread runs without the tracer coverage set for new threads."""

    def __init__(self, app: ASGIApp, *, start_timeout_s: float = 20, traced: bool = True) -> None:
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP,
        # and without it every response waits ~40 ms for a delayed ACK.
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run if traced else self._run_untraced,
            kwargs={"sockets": [self._socket]},
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + start_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("memory server did not start")
            time.sleep(0.01)

    def _run_untraced(self, sockets: list[socket.socket]) -> None:
        sys.settrace(None)
        self._server.run(sockets=sockets)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=20)
        self._socket.close()
