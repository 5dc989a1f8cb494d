"""Noticing that a client has hung up while its request waits for the model.

The embedded model answers one request at a time; under load a reply can wait longer than a
device's own timeout. `watch_disconnect` gives the blocking code a check that turns true once
the client is gone, so the model skips a reply nobody would hear (the backends ask it when the
request reaches the model) and the conversation does not record an answer never delivered."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Request

from lobug.backends.base import AbandonCheck


@asynccontextmanager
async def watch_disconnect(request: Request) -> AsyncIterator[AbandonCheck]:
    """While the block runs, a check that is true once the client has disconnected. Use it
    after the body has been read: every message the client sends then is its goodbye."""
    gone = threading.Event()

    async def listen() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        gone.set()

    listener = asyncio.create_task(listen())
    try:
        yield gone.is_set
    finally:
        listener.cancel()
