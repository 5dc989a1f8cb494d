"""Streamed responses fed by blocking iterators, closed the moment the client hangs up.

Starlette steps a plain iterator in worker threads but, when the client goes away, leaves it
suspended until garbage collection. Ours hold the model (and for a device, its turn), so
`ClosingStreamingResponse` closes its body however the response ends, and `blocking_stream`
closes the blocking iterator, in a worker thread, once any step in progress has finished."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

T = TypeVar("T")


class ClosingStreamingResponse(StreamingResponse):
    """Closes its body however the response ends, and only then runs the background task: the
    memory work hand-over waits for what the stream stored, and a device's turn is free before
    the next request can need it (Starlette would run the task first on a hang-up)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        background, self.background = self.background, None
        try:
            await super().__call__(scope, receive, send)
        finally:
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:
                await close()
        if background is not None:
            await background()


class _Stepper(Generic[T]):
    """Steps the iterator one item at a time from worker threads; `close` waits for a step
    in progress, closes the iterator, then runs `after` (once)."""

    def __init__(self, items: Iterator[T], after: Callable[[], object] | None) -> None:
        self._items = items
        self._after = after
        self._lock = threading.Lock()
        self._closed = False

    def step(self) -> tuple[bool, T | None]:
        with self._lock:
            for item in self._items:
                return True, item
            return False, None

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            close = getattr(self._items, "close", None)
            if close is not None:
                close()
        if self._after is not None:
            self._after()


class BlockingStream(Generic[T]):
    """A blocking iterator as an async iterator, stepped in worker threads. However it ends
    (exhausted, the client gone, or closed before its first item), the iterator is closed and
    `after` runs, in a thread: nothing here awaits once the request is being cancelled."""

    def __init__(self, items: Iterator[T], after: Callable[[], object] | None = None) -> None:
        self._stepper = _Stepper(items, after)

    def __aiter__(self) -> BlockingStream[T]:
        return self

    async def __anext__(self) -> T:
        try:
            more, item = await asyncio.to_thread(self._stepper.step)
        except BaseException:
            self._close_in_thread()  # the client hung up mid-step
            raise
        if not more:
            await asyncio.to_thread(self._stepper.close)
            raise StopAsyncIteration
        return item  # type: ignore[return-value]

    async def aclose(self) -> None:
        self._close_in_thread()

    def _close_in_thread(self) -> None:
        threading.Thread(target=self._stepper.close, name="stream-close", daemon=True).start()


def started(items: Iterator[T]) -> Iterator[T]:
    """`items` with its first item already produced (blocking: call in a worker thread), so
    that a failure before anything was sent raises here, while the route can still answer
    with an error status. Closing the result closes `items`."""
    for first in items:
        return _resumed(first, items)
    return iter(())


def _resumed(first: T, items: Iterator[T]) -> Iterator[T]:
    try:
        yield first
        yield from items
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()


def blocking_stream(
    items: Iterator[T], after: Callable[[], object] | None = None
) -> BlockingStream[T]:
    """`items` as an async iterator; however it ends, `items` is closed and then `after` runs
    (both in a worker thread)."""
    return BlockingStream(items, after)
