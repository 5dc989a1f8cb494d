"""Memory work after a reply, scheduled one way on every path: one background task on the
response, which Starlette runs after the response's last byte (for a stream, after the stream
ended, also when the client hung up), hands the stored exchange to the services' queue."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import BackgroundTasks

from lobug.memory.work_queue import Exchange, MemoryWork


def hand_over_exchange(
    background: BackgroundTasks, work: MemoryWork, exchange: Callable[[], Exchange | None]
) -> None:
    """Once the response is sent, give `exchange()` (what the reply stored; None when
    there is nothing to learn from) to the memory-work queue."""

    def hand_over() -> None:
        stored = exchange()
        if stored is not None:
            work.submit(stored)

    background.add_task(hand_over)
