"""`MemoryEngine` in-process, with fake models: facts, learning from messages, the budgeted
context, blocks, threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lobug import AsyncMemoryEngine, MemoryEngine
from lobug.config import Settings
from lobug.engine import database_path
from lobug.names import InvalidAgentName
from lobug.store.errors import FactNotCurrent
from lobug.store.models import FactFlags, MemoryBlock
from lobug.tokens import estimate_tokens
from tests.fakes import FakeChat, FakeEmbedder
from tests.memory.test_manager import facts_reply


@pytest.fixture
def chat() -> FakeChat:
    return FakeChat()


@pytest.fixture
def engine(tmp_path: Path, chat: FakeChat) -> Iterator[MemoryEngine]:
    settings = Settings(db_path=tmp_path / "unused.db")
    with MemoryEngine(
        tmp_path / "engine.db", agent="alice", chat=chat, embedder=FakeEmbedder(), settings=settings
    ) as opened:
        yield opened


def test_database_is_a_path_or_a_sqlite_url(tmp_path: Path) -> None:
    assert database_path(tmp_path / "a.db") == tmp_path / "a.db"
    assert database_path(f"sqlite:///{tmp_path}/b.db") == tmp_path / "b.db"
    with pytest.raises(ValueError, match="SQLite"):
        database_path("redis://localhost/0")


@pytest.mark.parametrize("name", ["a/b", "..", ".", "", "x" * 65])
def test_an_agent_name_breaking_the_rule_opens_nothing(tmp_path: Path, name: str) -> None:
    settings = Settings(db_path=tmp_path / "unused.db")
    with pytest.raises(InvalidAgentName, match="not dots alone"):
        MemoryEngine(
            tmp_path / "x.db", agent=name or "a b", embedder=FakeEmbedder(), settings=settings
        )
    assert not (tmp_path / "x.db").exists()


def test_saved_facts_are_found_updated_and_forgotten(engine: MemoryEngine) -> None:
    saved = engine.save("Alice's sister is called Ana", type="identity")
    assert saved["type"] == "identity" and saved["superseded"] == []
    engine.save("Alice plays the cello")
    hits = engine.search_memory("sister Ana", limit=1)
    assert [hit["id"] for hit in hits] == [saved["id"]]
    assert engine.search_memory("cello", mode="keyword")[0]["content"] == "Alice plays the cello"
    assert engine.search_memory("cello", mode="vector")[0]["content"] == "Alice plays the cello"

    corrected = engine.manage_memory(
        "Alice's sister is called Anna", action="update", id=saved["id"]
    )
    assert corrected["id"] != saved["id"]
    with pytest.raises(FactNotCurrent):
        engine.manage_memory("again", action="update", id=saved["id"])
    engine.manage_memory(action="delete", id=corrected["id"])
    assert all("sister" not in hit["content"] for hit in engine.search_memory("sister"))
    with pytest.raises(ValueError, match="action"):
        engine.manage_memory("x", action="rename")
    with pytest.raises(ValueError, match="'id'"):
        engine.manage_memory("x", action="update")


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ({"role": "user", "content": "hi", "metadata": {"k": "x" * 16_400}}, "16384"),
        ({"role": "user", "content": "hi", "metadata": {"k": "\ud800"}}, "lone surrogate"),
        ({"role": "user", "content": "hi", "metadata": {"k": float("nan")}}, "NaN"),
        ({"role": "user", "content": "\udc00"}, "lone surrogate"),
        ({"role": "user", "content": ""}, "1 to 100000"),
        ({"role": "narrator", "content": "hi"}, "role"),
    ],
)
def test_messages_meet_the_apis_rule_before_any_is_stored(
    engine: MemoryEngine, bad: dict[str, object], problem: str
) -> None:
    fine = {"role": "user", "content": "I keep bees", "metadata": {"k": "x" * 16_000}}
    with pytest.raises(ValueError, match=problem):
        engine.add_messages([fine, bad])
    assert engine.services.store.agent_messages("alice", 10) == []
    assert len(engine.add_messages([fine])) == 1


def test_an_exchange_is_learned_from_as_it_is_added(engine: MemoryEngine, chat: FakeChat) -> None:
    chat.enqueue(facts_reply("The user lives in Lisbon"))
    engine.add_messages(
        [
            {"role": "user", "content": "I live in Lisbon now"},
            {"role": "assistant", "content": "Lisbon is lovely."},
        ]
    )
    engine.flush()
    assert [hit["content"] for hit in engine.search_memory("Lisbon")] == [
        "The user lives in Lisbon"
    ]
    extraction = chat.extraction_requests()[0][-1]["content"]
    assert "User: I live in Lisbon now\nAssistant: Lisbon is lovely." in extraction


def test_a_lone_message_is_learned_from_at_flush(engine: MemoryEngine, chat: FakeChat) -> None:
    chat.enqueue(facts_reply("The user has a dog called Rex"))
    engine.add_messages([{"role": "user", "content": "I have a dog called Rex"}])
    assert chat.extraction_requests() == []  # waiting for an answer or the quiet period
    assert engine.flush() == 1
    assert (
        chat.extraction_requests()[0][-1]["content"] == "User: I have a dog called Rex\nAssistant: "
    )
    assert engine.search_memory("dog Rex")[0]["content"] == "The user has a dog called Rex"
    assert engine.flush() == 0


def test_learning_can_be_turned_off_per_message_and_per_agent(
    tmp_path: Path, engine: MemoryEngine, chat: FakeChat
) -> None:
    engine.add_messages(
        [
            {"role": "user", "content": "my pin is 1234", "learn": False},
            {"role": "system", "content": "be brief"},
        ]
    )
    assert engine.flush() == 0
    engine.services.store.ensure_agent("private", {"learn": False})
    private = MemoryEngine.attached(engine.services, "private")
    private.add_messages([{"role": "user", "content": "I like tea"}])
    assert private.flush() == 0 and chat.extraction_requests() == []


def test_context_keeps_pinned_facts_first_and_stays_in_its_budget(engine: MemoryEngine) -> None:
    pinned = engine.save("Alice is allergic to peanuts")
    engine.services.store.set_fact_flags("alice", pinned["id"], FactFlags(pinned=True), actor="api")
    engine.update_block("human", "Name: Alice. " * 200)
    for n in range(20):
        engine.save(f"Alice visited city number {n} in spring")
    engine.add_messages([{"role": "user", "content": "I visited a city in spring"}])
    full = engine.context("which city did Alice visit in spring?", max_tokens=5000)
    assert [s["name"] for s in full["sections"]] == [
        "pinned",
        "base_memory",
        "blocks",
        "skills",
        "facts",
        "summaries",
        "messages",
        "topics",
    ]
    assert full["pinned"] == ["Alice is allergic to peanuts"]
    assert full["facts"] and full["messages"]
    small = engine.context("which city did Alice visit in spring?", max_tokens=120)
    assert small["pinned"] == ["Alice is allergic to peanuts"]
    assert small["tokens"] <= 120 == small["max_tokens"]
    assert estimate_tokens(small["prompt"]) == small["tokens"]
    assert small["blocks"][0]["value"].endswith("[...]")  # cut to the room left
    assert small["facts"] == [] and small["messages"] == []
    shares = {s["name"]: s for s in small["sections"]}
    assert shares["pinned"]["tokens"] > 0 and shares["facts"]["tokens"] == 0
    assert shares["blocks"]["share"] == pytest.approx(shares["blocks"]["tokens"] / 120, abs=1e-3)
    assert (
        engine.format_for_injection("which city did Alice visit in spring?", 120) == small["prompt"]
    )


def test_empty_memory_gives_an_empty_prompt(engine: MemoryEngine) -> None:
    assert engine.format_for_injection("anything") == ""


def test_blocks_are_created_read_and_rewritten(engine: MemoryEngine) -> None:
    assert engine.update_block("human", "Name: Alice")["value"] == "Name: Alice"
    assert engine.update_block("human", "Name: Alice B.")["value"] == "Name: Alice B."
    assert engine.read_block("human") == {
        "label": "human",
        "value": "Name: Alice B.",
        "read_only": False,
    }


def test_block_writes_go_through_curation_as_api(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    curation = engine.services.curation
    writes: list[tuple[str, str, str]] = []
    set_block = curation.set_block

    def recorded(agent: str, label: str, value: str, *, actor: str) -> MemoryBlock:
        writes.append((agent, label, actor))
        return set_block(agent, label, value, actor=actor)

    monkeypatch.setattr(curation, "set_block", recorded)
    engine.update_block("human", "Name: Alice")
    engine.update_block("human", "Name: Alice B.")
    assert writes == [("alice", "human", "api")] * 2
    history = engine.services.store.block_history("alice", "human")
    assert {change.changed_by for change in history} == {"api"}


def test_threads_may_share_one_engine(engine: MemoryEngine) -> None:
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(10):
                engine.save(f"thread {n} item {i} is unique{n}x{i}")
                engine.search_memory(f"unique{n}x{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(engine.search_memory("thread item", limit=20, mode="keyword")) == 20


def test_the_async_twin_runs_the_same_calls(engine: MemoryEngine) -> None:
    memory = AsyncMemoryEngine(engine)

    async def use() -> None:
        saved = await memory.save("Alice runs marathons")
        assert (await memory.search_memory("marathons"))[0]["id"] == saved["id"]
        assert "marathons" in await memory.format_for_injection("marathons")

    asyncio.run(use())


def test_a_dream_merges_a_near_duplicate_and_is_undone(
    engine: MemoryEngine, chat: FakeChat
) -> None:
    engine.save("Alice works at NASA")
    engine.save("Alice works at NASA in Houston")  # past the write-time duplicate check
    assert engine.dream(dry_run=True)["id"] is None
    chat.enqueue("Alice works at NASA in Houston.")
    dreamed = engine.dream()
    assert [c["action"] for c in dreamed["changes"]] == ["merge"]
    assert "Merged near-duplicates (1)" in dreamed["diary"]
    assert len(engine.search_memory("NASA", mode="keyword")) == 1
    engine.undo_dream(dreamed["id"])
    assert len(engine.search_memory("NASA", mode="keyword")) == 2
