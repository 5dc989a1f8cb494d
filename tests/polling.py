"""Waiting for something another thread or process does, with a bound."""

from __future__ import annotations

import time
from collections.abc import Callable

from fastapi.testclient import TestClient


def eventually(condition: Callable[[], bool], timeout_s: float = 10) -> bool:
    """Whether `condition` became true within `timeout_s` (polled every 10 ms)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def memory_work_done(client: TestClient, timeout_s: float = 10) -> None:
    """Wait for the server's memory work after the replies so far (it runs on the queue's
    own thread once a response is sent)."""
    work = client.app.state.services.memory_work  # type: ignore[attr-defined]
    assert eventually(lambda: work.pending == 0, timeout_s), "memory work did not finish"
