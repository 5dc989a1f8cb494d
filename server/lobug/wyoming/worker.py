"""A blocking iterator (the model writing sentences, piper speaking one) walked in a worker
thread while the event loop sends what it yields, the first item before the rest is made."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import TypeVar

T = TypeVar("T")
_DONE = object()


async def walked(
    make: Callable[[], Iterator[T]], stopped: Callable[[], bool] = lambda: False
) -> AsyncGenerator[T, None]:
    """The items of `make()`, made in a worker thread; the walk ends at the next item once
    `stopped()` (the client left) or this generator was closed early. An exception in the
    worker is raised here."""
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    items: asyncio.Queue[object] = asyncio.Queue()
    failure: list[BaseException] = []

    def walk() -> None:
        try:
            for item in make():
                loop.call_soon_threadsafe(items.put_nowait, item)
                if stop.is_set() or stopped():
                    break
        except Exception as exc:
            failure.append(exc)
        finally:
            loop.call_soon_threadsafe(items.put_nowait, _DONE)

    worker = loop.run_in_executor(None, walk)
    try:
        while (item := await items.get()) is not _DONE:
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        await asyncio.shield(worker)
    if failure:
        raise failure[0]
