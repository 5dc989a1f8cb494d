"""`lobug learning` and the parked line of `lobug stats` (issue 28, item 5): exchanges whose
fact extraction failed `MAX_ATTEMPTS` times are shown and learned from again, on the local
file (with the configured models, here fakes) and through a server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from click.testing import CliRunner, Result

from lobug import backends as backend_module
from lobug.app import create_app
from lobug.backends import Backends
from lobug.cli import access, cli
from lobug.cli.rest import MemoryAccess, local_access
from lobug.config import Settings
from lobug.memory.work_queue import MAX_ATTEMPTS
from lobug.services import LazyChat
from lobug.store.models import FactQuery
from lobug.store.protocol import Store
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeChat, FakeEmbedder
from tests.live import LiveServer
from tests.memory.test_manager import facts_reply
from tests.polling import eventually

UNREADABLE = "unreadable fact-extraction output (27 characters)"


def park(store: Store, said: str) -> int:
    """An exchange whose extraction failed `MAX_ATTEMPTS` times, as the work queue parks it."""
    asked = store.append_message("lobug", "kitchen", "user", said)
    reply = store.append_reply_for_memory_work("lobug", "kitchen", "Noted.", asked)
    for _ in range(MAX_ATTEMPTS):
        store.count_failed_attempt(reply.id, UNREADABLE)
    store.park_exchange(reply.id)
    return reply.id


@pytest.fixture
def local_file(
    settings: Settings, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeChat]:
    """`lobug` in this process on the settings' file, its configured chat model a fake
    (returned), built when a command needs it (`LazyChat`)."""
    chat = FakeChat()

    @contextmanager
    def fake_opened(url: str | None, token: str | None) -> Iterator[MemoryAccess]:
        opened = local_access(settings, Backends(LazyChat(settings), fake_embedder))
        try:
            yield opened
        finally:
            opened.close()

    monkeypatch.setattr(access, "opened", fake_opened)
    monkeypatch.setattr(backend_module, "build_chat", lambda settings: chat)
    yield chat


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_stats_list_and_retry_on_the_local_file(settings: Settings, local_file: FakeChat) -> None:
    store = SQLiteStore(settings.db_path)
    try:
        store.ensure_agent("lobug")
        kept = park(store, "My sister is called Ana")
        park(store, "I keep bees")
    finally:
        store.close()
    stats = run("stats").output
    assert [line.split() for line in stats.splitlines() if "learning" in line] == [
        ["learning_queue", "0"],
        ["learning_parked", "2"],
    ]
    listed = run("learning")  # lists, as `lobug learning list` does
    first = listed.output.splitlines()[0]
    assert first == (
        "0 exchanges waiting to be learned from, 2 parked after 3 failed attempts "
        "(`lobug learning retry` runs them again)"
    )
    assert "My sister is called Ana" in listed.output and "unreadable" in listed.output

    local_file.enqueue(facts_reply("The user's sister is called Ana"))
    retried = run("learning", "retry", str(kept))
    assert (retried.exit_code, retried.output.strip()) == (
        0,
        "Retried 1 parked exchange; 1 still parked.",
    )
    assert run("facts", "list", "--json").output.count("The user's sister is called Ana") == 1
    assert run("learning", "retry").output.strip() == "Retried 1 parked exchange; 0 still parked."
    assert "0 exchanges waiting to be learned from, 0 parked" in run("learning", "list").output


def test_through_a_server_the_retry_is_its_memory_work(
    settings: Settings, fake_embedder: FakeEmbedder
) -> None:
    chat = FakeChat()
    app = create_app(settings, Backends(chat, fake_embedder))
    server = LiveServer(app)
    remote = MemoryAccess(server.url, None)
    try:
        remote.create_agent("lobug")
        kept = park(app.state.services.store, "My sister is called Ana")
        assert (remote.stats()["learning_queue"], remote.stats()["learning_parked"]) == (0, 1)
        [parked] = remote.learning(10)["parked_exchanges"]
        assert (parked["id"], parked["said"], parked["error"]) == (
            str(kept),
            "My sister is called Ana",
            UNREADABLE,
        )
        assert parked["attempts"] == MAX_ATTEMPTS and parked["device_id"] == "kitchen"
        chat.enqueue(facts_reply("The user's sister is called Ana"))
        done = remote.retry_learning(None)
        assert (done["retrying"], done["waited"]) == (1, False)
        assert eventually(lambda: remote.learning(10)["parked"] == 0)
        facts = remote.facts("lobug", FactQuery())["facts"]
        assert [f["content"] for f in facts] == ["The user's sister is called Ana"]
    finally:
        remote.close()
        server.stop()
