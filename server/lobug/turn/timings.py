"""The stage timings (`Server-Timing`) of the device server's recent turns, kept in memory
for the dashboard: a bounded ring, so nothing grows and nothing is written to disk. They are
lost on restart; the log's own timestamps give reply latency for older days."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

RECENT_TURNS = 200


@dataclass(frozen=True)
class TimedTurn:
    device_id: str
    at: float
    stages_ms: dict[str, float]

    @property
    def total_ms(self) -> float:
        return sum(self.stages_ms.values())


class TurnTimings:
    """Thread-safe: turns are recorded from request handlers, read by the dashboard."""

    def __init__(self, capacity: int = RECENT_TURNS) -> None:
        self._turns: deque[TimedTurn] = deque(maxlen=capacity)
        self._lock = threading.Lock()

    def record(self, device_id: str, stages_ms: dict[str, float]) -> None:
        with self._lock:
            self._turns.append(TimedTurn(device_id, time.time(), dict(stages_ms)))

    def recent(self) -> list[TimedTurn]:
        """Newest first."""
        with self._lock:
            return list(reversed(self._turns))
