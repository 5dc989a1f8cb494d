"""Streamed responses over blocking iterators: closed however they end, and the background
task (the memory-work hand-over) only after the body is closed."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

from starlette.background import BackgroundTask
from starlette.types import Message

from lobug.api.streaming import ClosingStreamingResponse, blocking_stream


def endless() -> Iterator[bytes]:
    while True:
        time.sleep(0.01)
        yield b"pcm"


def test_a_stream_closed_before_its_first_item_still_runs_after() -> None:
    finished = threading.Event()
    stream = blocking_stream(endless(), finished.set)
    asyncio.run(stream.aclose())
    assert finished.wait(5), "`after` never ran for a stream that never started"


def test_the_background_task_runs_after_the_body_of_an_abandoned_stream_is_closed() -> None:
    finished = threading.Event()  # the turn is over: what the stream said is stored
    seen: list[bool] = []

    def hand_over() -> None:
        seen.append(finished.wait(5))

    response = ClosingStreamingResponse(
        blocking_stream(endless(), finished.set), background=BackgroundTask(hand_over)
    )
    sent: list[Message] = []

    async def receive() -> Message:
        await asyncio.sleep(0.1)  # the client hangs up after a few pieces
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)
        if message["type"] == "http.response.body":
            await asyncio.sleep(30)  # a device that stopped reading: the write never drains

    scope = {"type": "http", "asgi": {"spec_version": "2.3"}}
    started = time.monotonic()
    asyncio.run(response(scope, receive, send))
    assert seen == [True]
    assert time.monotonic() - started < 5
    assert sent[0]["type"] == "http.response.start"
