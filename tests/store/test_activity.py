"""The log by device and day, growth per day and reply latency per day (the dashboard's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lobug.store.models import ConversationDay, DayGrowth, DayLatency, NewFact
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeClock

DAY = 86_400.0
JAN_1 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def test_days_growth_and_latency_come_from_the_log(tmp_path: Path) -> None:
    clock = FakeClock(JAN_1 + 3600)
    store = SQLiteStore(tmp_path / "activity.db", clock=clock)
    store.bind_embedding("fake", 2)
    store.append_message("a", "kitchen", "user", "hi")
    clock.now += 2.0
    store.append_message("a", "kitchen", "assistant", "hello")
    clock.now += 1.0
    store.append_message("a", "desk", "assistant", "unprompted")
    clock.now = JAN_1 + DAY + 60
    store.append_message("a", "kitchen", "user", "again")
    clock.now += 4.0
    store.append_message("a", "kitchen", "assistant", "yes")
    store.add_fact("a", NewFact("likes tea"), np.array([1.0, 0.0], dtype=np.float32))

    assert store.conversation_days("a", 10) == [
        ConversationDay("kitchen", "2026-01-02", 2, JAN_1 + DAY + 64),
        ConversationDay("desk", "2026-01-01", 1, JAN_1 + 3603),
        ConversationDay("kitchen", "2026-01-01", 2, JAN_1 + 3602),
    ]
    assert store.conversation_days("a", 1)[0].device_id == "kitchen"
    assert store.growth_by_day("a", JAN_1) == [
        DayGrowth("2026-01-01", 3, 0),
        DayGrowth("2026-01-02", 2, 1),
    ]
    assert store.growth_by_day("a", JAN_1 + DAY) == [DayGrowth("2026-01-02", 2, 1)]
    assert store.reply_latency_by_day("a", JAN_1) == [
        DayLatency("2026-01-01", 1, 2.0),
        DayLatency("2026-01-02", 1, 4.0),
    ]
    assert store.conversation_days("b", 10) == []
    store.close()
