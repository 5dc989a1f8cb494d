"""Waiting for something another thread or process does, with a bound."""

from __future__ import annotations

import time
from collections.abc import Callable


def eventually(condition: Callable[[], bool], timeout_s: float = 10) -> bool:
    """Whether `condition` became true within `timeout_s` (polled every 10 ms)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
