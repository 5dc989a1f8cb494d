"""The order in which a server stops (issue 41): the background learning stops before the
store closes, and what it had not finished stays queued for the next start."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.services import Services
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeChat, FakeEmbedder
from tests.memory.test_manager import facts_reply
from tests.polling import eventually


@pytest.fixture
def held() -> Iterator[FakeChat]:
    """A chat model whose fact extraction waits until its `extraction_gate` is set."""
    chat = FakeChat()
    chat.extraction_gate = threading.Event()
    yield chat
    chat.extraction_gate.set()


def learning_when_stopped(settings: Settings, chat: FakeChat) -> tuple[TestClient, Services]:
    """A server whose one exchange is being learned from (its extraction held)."""
    client = TestClient(create_app(settings, Backends(chat, FakeEmbedder())))
    client.__enter__()
    response = client.post("/chat/text", json={"text": "My name is Alex"})
    assert response.status_code == 200, response.text
    assert chat.extraction_started.wait(10), "the memory work never started"
    return client, client.app.state.services  # type: ignore[attr-defined]


def queued(settings: Settings) -> list[tuple[str, int]]:
    """The exchanges waiting in the database file: the user's words and the attempts."""
    store = SQLiteStore(settings.db_path)
    try:
        return [(q.user.content, q.attempts) for q in store.queued_exchanges(10, float("inf"))]
    finally:
        store.close()


def test_a_stop_during_extraction_leaves_the_exchange_queued_for_the_next_start(
    settings: Settings, held: FakeChat, caplog: pytest.LogCaptureFixture
) -> None:
    client, services = learning_when_stopped(settings, held)
    assert held.extraction_gate is not None
    threading.Timer(0.1, held.extraction_gate.set).start()  # the model's next step
    with caplog.at_level(logging.WARNING):
        client.__exit__(None, None, None)
    assert services.memory_work.pending == 0
    assert "failed" not in caplog.text
    assert queued(settings) == [("My name is Alex", 0)]  # not counted as a failed attempt

    chat = FakeChat()
    chat.enqueue(facts_reply("The user's name is Alex"))
    with TestClient(create_app(settings, Backends(chat, FakeEmbedder()))) as restarted:
        work = restarted.app.state.services.memory_work  # type: ignore[attr-defined]
        assert eventually(lambda: bool(chat.extraction_requests()) and work.pending == 0)
    assert queued(settings) == []
    store = SQLiteStore(settings.db_path)
    assert [f.content for f in store.facts("lobug")] == ["The user's name is Alex"]
    store.close()


def test_a_model_call_outliving_the_stop_never_meets_a_closed_store(
    settings: Settings, held: FakeChat, caplog: pytest.LogCaptureFixture
) -> None:
    """Ctrl-C printed four "Cannot operate on a closed database" tracebacks: the store was
    closed while the exchange in progress was still in its model call."""
    client, services = learning_when_stopped(settings, held)
    with caplog.at_level(logging.WARNING):
        client.__exit__(None, None, None)  # the extraction is still held
        assert held.extraction_gate is not None
        held.extraction_gate.set()
        assert eventually(lambda: services.memory_work.pending == 0)
    assert "closed database" not in caplog.text
    assert "failed" not in caplog.text
    services.store.close()  # left open for the work that outlived the stop
    assert queued(settings) == [("My name is Alex", 0)]
