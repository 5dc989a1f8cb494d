from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from lobug.config import MemoryConfig
from lobug.maintenance import Maintenance
from lobug.memory.learning import MAX_ATTEMPTS, LearningQueue, reembed_messages
from lobug.memory.manager import MemoryManager
from lobug.store.models import Message
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeChat, FakeEmbedder, unreachable
from tests.memory.test_manager import facts_reply


def answered(store: SQLiteStore, user: str, reply: str) -> tuple[Message, Message]:
    """An exchange as a turn stores it: the reply and its queue row in one transaction."""
    asked = store.append_message("lobug", "default", "user", user)
    return asked, store.append_reply_for_memory_work("lobug", "default", reply, asked)


def queue(store: SQLiteStore, chat: FakeChat, embedder: FakeEmbedder) -> LearningQueue:
    return LearningQueue(store, MemoryManager(store, chat, embedder, MemoryConfig()))


def test_the_reply_and_its_memory_work_are_queued_together(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    user, reply = answered(store, "My name is Alex", "Nice to meet you, Alex.")
    assert store.count_queued_exchanges() == 1
    learning = queue(store, fake_chat, fake_embedder)
    fake_chat.enqueue(facts_reply("The user's name is Alex"))
    job = learning.job(user, reply)
    assert learning.pending == 1
    job()
    assert learning.pending == 0
    assert store.count_queued_exchanges() == 0
    assert [f.content for f in store.facts("lobug")] == ["The user's name is Alex"]


def test_work_interrupted_by_a_crash_is_resumed_by_the_next_process(
    tmp_path: Path, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    path = tmp_path / "memory.db"
    first = SQLiteStore(path)
    first.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    answered(first, "My name is Alex", "Nice to meet you, Alex.")
    first.close()  # killed before its job ran

    reopened = SQLiteStore(path)
    reopened.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    fake_chat.enqueue(facts_reply("The user's name is Alex"))
    assert queue(reopened, fake_chat, fake_embedder).resume() == 1
    assert [f.content for f in reopened.facts("lobug")] == ["The user's name is Alex"]
    assert reopened.count_queued_exchanges() == 0
    reopened.close()


def test_failed_extraction_is_retried_then_dropped_with_a_log_line(
    store: SQLiteStore,
    fake_chat: FakeChat,
    fake_embedder: FakeEmbedder,
    caplog: pytest.LogCaptureFixture,
) -> None:
    answered(store, "My name is Alex", "Nice to meet you, Alex.")
    learning = queue(store, fake_chat, fake_embedder)
    fake_chat.fail_with = unreachable()
    for attempt in range(1, MAX_ATTEMPTS):
        assert learning.resume() == 1
        assert store.queued_exchanges(10, float("inf"))[0].attempts == attempt
    with caplog.at_level(logging.WARNING, logger="lobug.memory.learning"):
        assert learning.resume() == 1
    assert store.count_queued_exchanges() == 0
    assert "giving up" in caplog.text


def test_a_retry_after_the_model_is_back_learns_the_fact(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    answered(store, "My name is Alex", "Nice to meet you, Alex.")
    learning = queue(store, fake_chat, fake_embedder)
    fake_chat.fail_with = unreachable()
    learning.resume()
    fake_chat.fail_with = None
    fake_chat.enqueue(facts_reply("The user's name is Alex"))
    assert learning.resume() == 1
    assert [f.content for f in store.facts("lobug")] == ["The user's name is Alex"]


def test_resume_leaves_alone_the_exchanges_a_job_is_working_on(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    learning = queue(store, fake_chat, fake_embedder)
    user, reply = answered(store, "My name is Alex", "Nice to meet you, Alex.")
    job = learning.job(user, reply)  # handed to a request's background task, not run yet
    assert learning.resume() == 0
    job()
    assert store.count_queued_exchanges() == 0
    assert len(fake_chat.extraction_requests()) == 1


def test_resume_waits_before_taking_this_process_s_recent_rows(
    tmp_path: Path, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    now = [1000.0]
    store = SQLiteStore(tmp_path / "memory.db", clock=lambda: now[0])
    store.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    learning = LearningQueue(
        store, MemoryManager(store, fake_chat, fake_embedder, MemoryConfig()), clock=lambda: now[0]
    )
    now[0] += 1
    answered(store, "My name is Alex", "Nice to meet you, Alex.")  # its job not registered yet
    assert learning.resume() == 0
    now[0] += 120  # long past any request handler: left behind by a failed job
    assert learning.resume() == 1
    store.close()


def test_messages_stored_while_the_embedder_failed_are_embedded_later(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    kept = [
        store.append_message_to_embed("lobug", "api", "user", f"note {i} about copper")
        for i in range(5)
    ]
    store.append_message("lobug", "default", "user", "a device turn, never embedded")
    query = fake_embedder.embed("note about copper")
    assert store.search_messages("lobug", query, 10) == []
    assert reembed_messages(store, fake_embedder.embed_batch, batch=2) == 5
    found = {hit.message.id for hit in store.search_messages("lobug", query, 10)}
    assert found == {m.id for m in kept}
    assert reembed_messages(store, fake_embedder.embed_batch) == 0


def test_maintenance_runs_every_task_and_survives_a_failing_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran = threading.Event()

    def broken(should_stop: Callable[[], bool]) -> int:
        raise RuntimeError("embedder down")

    def working(should_stop: Callable[[], bool]) -> int:
        ran.set()
        return 2

    maintenance = Maintenance([("broken", broken), ("working", working)], interval_s=3600)
    with caplog.at_level(logging.INFO, logger="lobug.maintenance"):
        assert maintenance.run_once() == {"working": 2}
        ran.clear()
        maintenance.start()
        assert ran.wait(10)
        maintenance.stop()
    assert "broken failed: embedder down" in caplog.text
    assert "working: 2" in caplog.text


def test_resume_stops_between_exchanges_when_asked(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    for i in range(3):
        answered(store, f"fact number {i}", "Noted.")
    learning = queue(store, fake_chat, fake_embedder)
    calls = iter([False, True])
    assert learning.resume(should_stop=lambda: next(calls, True)) == 1
    assert store.count_queued_exchanges() == 2
