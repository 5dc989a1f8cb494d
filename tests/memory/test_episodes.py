"""Episodes: summaries with their span of time, found by words, meaning and dates, in a
device turn's context and the budgeted one. The clock is fixed: Wednesday 13 March 2024,
10:30 in Berlin."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from lobug.config import ConfigError, MemoryConfig
from lobug.memory.assembly import ContextRequest, assemble
from lobug.memory.manager import MemoryManager
from lobug.store.models import Message
from lobug.store.protocol import Store
from lobug.store.sqlite.database import open_connection
from lobug.store.sqlite.engine import SQLiteStore
from lobug.store.sqlite.schema import MIGRATIONS
from tests.fakes import FakeChat, FakeClock, FakeEmbedder

BERLIN = ZoneInfo("Europe/Berlin")


def at(*parts: int) -> float:
    return datetime(*parts, tzinfo=BERLIN).timestamp()  # type: ignore[misc]


NOW = at(2024, 3, 13, 10, 30)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(NOW)


@pytest.fixture
def dated_store(
    engine: str,
    tmp_path: Path,
    clock: FakeClock,
    fake_embedder: FakeEmbedder,
    request: pytest.FixtureRequest,
) -> Iterator[Store]:
    """A store on the fixed clock: SQLite, or PostgreSQL for the tests marked `both_engines`."""
    opened: Store
    if engine == "sqlite":
        opened = SQLiteStore(tmp_path / "episodes.db", clock=clock)
    else:
        from lobug.store.postgres.engine import PostgresStore

        opened = PostgresStore(request.getfixturevalue("database_url"), clock=clock)
    opened.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    yield opened
    opened.close()


def said(store: Store, clock: FakeClock, when: float, *texts: str) -> list[Message]:
    clock.now = when
    messages = []
    for i, text in enumerate(texts):
        clock.now = when + 60 * i
        role = "user" if i % 2 == 0 else "assistant"
        messages.append(store.append_message("lobug", "kitchen", role, text))
    return messages


def episode(store: Store, embedder: FakeEmbedder, summary: str, messages: list[Message]) -> None:
    store.add_summary("lobug", summary, messages, vector=embedder.embed(summary))


def memory_of(store: Store, clock: FakeClock, embedder: FakeEmbedder) -> MemoryManager:
    config = MemoryConfig(timezone="Europe/Berlin")
    return MemoryManager(store, FakeChat(), embedder, config, clock=clock)


@pytest.mark.both_engines
def test_an_episode_spans_the_times_of_its_messages(
    dated_store: Store, clock: FakeClock, fake_embedder: FakeEmbedder
) -> None:
    messages = said(dated_store, clock, at(2024, 3, 12, 9, 0), "hello", "hi", "bye")
    summary = dated_store.add_summary("lobug", "Greetings.", messages)
    assert (summary.started_at, summary.ended_at) == (at(2024, 3, 12, 9, 0), at(2024, 3, 12, 9, 2))
    assert dated_store.summaries("lobug")[0] == summary


@pytest.mark.both_engines
def test_a_dated_question_recalls_the_episodes_and_messages_of_its_window(
    dated_store: Store, clock: FakeClock, fake_embedder: FakeEmbedder
) -> None:
    older = said(dated_store, clock, at(2024, 3, 5, 20, 0), "I bought a kayak", "Fun!")
    episode(dated_store, fake_embedder, "The user bought a kayak.", older)
    yesterday = said(dated_store, clock, at(2024, 3, 12, 19, 0), "We booked Lisbon", "Great!")
    episode(dated_store, fake_embedder, "The user booked a trip to Lisbon.", yesterday)
    clock.now = NOW
    memory = memory_of(dated_store, clock, fake_embedder)
    context = memory.retrieve_context("lobug", "what did we talk about yesterday?")
    assert [s.content for s in context.summaries] == ["The user booked a trip to Lisbon."]
    assert [hit.message.content for hit in context.messages] == ["We booked Lisbon", "Great!"]
    prompt = "\n".join(context.turn_sections())
    assert '- Tue 2024-03-12 19:00 to 19:01: "The user booked a trip to Lisbon."' in prompt
    assert '- Tue 2024-03-12 19:00 user: "We booked Lisbon"' in prompt
    assert "kayak" not in prompt


@pytest.mark.both_engines
def test_episodes_are_found_by_their_words_and_meaning(
    dated_store: Store, clock: FakeClock, fake_embedder: FakeEmbedder
) -> None:
    kayak = said(dated_store, clock, at(2024, 3, 5, 20, 0), "I bought a kayak", "Fun!")
    episode(dated_store, fake_embedder, "The user bought a red kayak.", kayak)
    trip = said(dated_store, clock, at(2024, 3, 6, 20, 0), "Lisbon in May", "Lovely")
    episode(dated_store, fake_embedder, "The user plans a trip to Lisbon.", trip)
    clock.now = NOW
    memory = memory_of(dated_store, clock, fake_embedder)
    context = memory.retrieve_context("lobug", "tell me about the kayak")
    assert context.summaries[0].content == "The user bought a red kayak."
    assert context.messages == ()  # no time named: no window's messages
    by_meaning = dated_store.search_summaries("lobug", fake_embedder.embed("trip to Lisbon"), 1)
    assert by_meaning[0][0].content == "The user plans a trip to Lisbon."


@pytest.mark.both_engines
def test_the_budgeted_context_carries_the_episodes_before_the_messages(
    dated_store: Store, clock: FakeClock, fake_embedder: FakeEmbedder
) -> None:
    yesterday = said(dated_store, clock, at(2024, 3, 12, 19, 0), "We booked Lisbon", "Great!")
    episode(dated_store, fake_embedder, "The user booked a trip to Lisbon.", yesterday)
    clock.now = NOW
    memory = memory_of(dated_store, clock, fake_embedder)
    found = assemble(
        memory, "lobug", "what did I say yesterday", ContextRequest(1500, 5, topics=True)
    )
    assert found.prompt.index("[Earlier conversations]") < found.prompt.index(
        "[Relevant past messages]"
    )
    contents = [hit.message.content for hit in found.context.messages]
    assert contents[:2] == ["We booked Lisbon", "Great!"]
    assert len(contents) == len(set(contents))  # the window's messages are not repeated


def test_a_device_turn_is_assembled_by_the_same_call_less_what_its_history_holds(
    dated_store: Store, clock: FakeClock, fake_embedder: FakeEmbedder
) -> None:
    yesterday = said(dated_store, clock, at(2024, 3, 12, 19, 0), "We booked Lisbon", "Great!")
    episode(dated_store, fake_embedder, "The user booked a trip to Lisbon.", yesterday)
    clock.now = NOW
    memory = memory_of(dated_store, clock, fake_embedder)
    history = [{"role": "user", "content": "We booked Lisbon"}]
    turn = assemble(
        memory, "lobug", "what did I say yesterday", ContextRequest(None, history=history)
    )
    program = assemble(memory, "lobug", "what did I say yesterday", ContextRequest(1500))
    assert turn.context.summaries == program.context.summaries  # one gathering, one order
    said_again = [hit.message.content for hit in turn.context.messages]
    assert "We booked Lisbon" not in said_again and "Great!" in said_again
    assert turn.max_tokens == 0 and turn.sections == ()  # nothing fitted: the layout fits


def test_the_budgeted_context_embeds_the_question_once(
    dated_store: Store, clock: FakeClock, fake_embedder: FakeEmbedder
) -> None:
    said(dated_store, clock, at(2024, 3, 12, 19, 0), "We booked Lisbon", "Great!")
    memory = memory_of(dated_store, clock, fake_embedder)
    before = fake_embedder.calls
    found = assemble(memory, "lobug", "the Lisbon trip", ContextRequest(1500, 5, topics=True))
    assert fake_embedder.calls - before == 1  # facts, episodes and messages share it
    assert found.search_mode == "hybrid"


@pytest.mark.both_engines
def test_forgetting_a_message_drops_the_episode_its_vector_and_its_words(
    dated_store: Store, clock: FakeClock, fake_embedder: FakeEmbedder
) -> None:
    messages = said(dated_store, clock, at(2024, 3, 12, 19, 0), "zanzibar plans", "ok")
    episode(dated_store, fake_embedder, "The user talked about zanzibar.", messages)
    dated_store.forget_messages("lobug", [messages[0].id], actor="test")
    assert dated_store.summaries("lobug") == []
    assert dated_store.keyword_summaries("lobug", "zanzibar", 5) == []
    assert dated_store.search_summaries("lobug", fake_embedder.embed("zanzibar"), 5) == []


@pytest.mark.both_engines
def test_a_device_turn_is_embedded_by_the_memory_work(
    dated_store: Store, clock: FakeClock, fake_embedder: FakeEmbedder
) -> None:
    user, assistant = said(dated_store, clock, NOW, "my cat is called Miso", "Cute!")
    memory_of(dated_store, clock, fake_embedder).process_exchange("lobug", user, assistant)
    found = dated_store.search_messages("lobug", fake_embedder.embed("my cat is called Miso"), 2)
    assert {hit.message.id for hit in found} == {user.id, assistant.id}


def test_migration_6_gives_existing_summaries_their_span(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    conn = open_connection(path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at REAL NOT NULL)"
    )
    for migration in MIGRATIONS[:5]:
        for statement in migration.statements:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, ?)",
            (migration.version, migration.name, time.time()),
        )
    conn.execute("INSERT INTO agents(id, name, created_at) VALUES (1, 'lobug', 0)")
    for i, created in enumerate((100.0, 160.0, 220.0), start=1):
        conn.execute(
            "INSERT INTO conversation_log(id, agent_id, device_id, role, content, created_at) "
            "VALUES (?, 1, 'd', 'user', 'hi', ?)",
            (i, created),
        )
    conn.execute(
        "INSERT INTO summaries(agent_id, content, source_from_id, source_to_id, created_at) "
        "VALUES (1, 'An old greeting.', 1, 2, 300)"
    )
    conn.commit()
    conn.close()
    store = SQLiteStore(path)
    try:
        summary = store.summaries("lobug")[0]
        assert (summary.started_at, summary.ended_at) == (100.0, 160.0)
        assert store.keyword_summaries("lobug", "greeting", 5)[0][0].id == summary.id
    finally:
        store.close()


def test_an_unknown_time_zone_is_refused() -> None:
    with pytest.raises(ConfigError, match="LOBUG_TIMEZONE"):
        MemoryConfig(timezone="Mars/Olympus")


@pytest.mark.both_engines
def test_the_episode_vectors_kept_in_memory_follow_new_and_dropped_episodes(
    dated_store: Store, clock: FakeClock, fake_embedder: FakeEmbedder
) -> None:
    query = fake_embedder.embed("a trip to Lisbon")
    first = said(dated_store, clock, at(2024, 3, 5, 20, 0), "kayak talk", "ok")
    episode(dated_store, fake_embedder, "The user bought a kayak.", first)
    assert [s.content for s, _ in dated_store.search_summaries("lobug", query, 5)] == [
        "The user bought a kayak."
    ]
    second = said(dated_store, clock, at(2024, 3, 6, 20, 0), "lisbon talk", "ok")
    episode(dated_store, fake_embedder, "The user plans a trip to Lisbon.", second)
    found = dated_store.search_summaries("lobug", query, 5)
    assert found[0][0].content == "The user plans a trip to Lisbon."
    assert found[0][1] == pytest.approx(float(fake_embedder.embed(found[0][0].content) @ query))
    dated_store.forget_messages("lobug", [second[0].id], actor="test")
    assert [s.content for s, _ in dated_store.search_summaries("lobug", query, 5)] == [
        "The user bought a kayak."
    ]
