"""Streamed responses fed by blocking iterators, closed the moment the client hangs up.

Starlette steps a plain iterator in worker threads but, when the client goes away, leaves it
suspended until garbage collection. Ours hold the model (and for a device, its turn), so
`ClosingStreamingResponse` closes its body however the response ends, and `blocking_stream`
closes the blocking iterator, in a worker thread, once any step in progress has finished."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Generic, TypeVar

from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

T = TypeVar("T")


class ClosingStreamingResponse(StreamingResponse):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            body = self.body_iterator
            if isinstance(body, AsyncGenerator):
                await body.aclose()


class _Stepper(Generic[T]):
    """Steps the iterator one item at a time from worker threads; `close` waits for a step
    in progress, closes the iterator, then runs `after`."""

    def __init__(self, items: Iterator[T], after: Callable[[], object] | None) -> None:
        self._items = items
        self._after = after
        self._lock = threading.Lock()

    def step(self) -> tuple[bool, T | None]:
        with self._lock:
            for item in self._items:
                return True, item
            return False, None

    def close(self) -> None:
        with self._lock:
            close = getattr(self._items, "close", None)
            if close is not None:
                close()
        if self._after is not None:
            self._after()


async def blocking_stream(
    items: Iterator[T], after: Callable[[], object] | None = None
) -> AsyncGenerator[T, None]:
    """`items` as an async generator; however it ends, `items` is closed and then `after` runs
    (both in a worker thread)."""
    stepper = _Stepper(items, after)
    try:
        while True:
            more, item = await asyncio.to_thread(stepper.step)
            if not more:
                break
            yield item  # type: ignore[misc]
    except BaseException:
        # The client hung up: nothing here may await any more, so a thread closes.
        threading.Thread(target=stepper.close, name="stream-close", daemon=True).start()
        raise
    await asyncio.to_thread(stepper.close)
