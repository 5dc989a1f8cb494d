from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from lobug.config import MemoryConfig
from lobug.memory.manager import (
    PINNED_BUDGET_TOKENS,
    ExchangeReport,
    MemoryManager,
    oldest_that_fit,
)
from lobug.store.models import FactFlags, FactQuery, Message, NewFact
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeChat, FakeEmbedder, unreachable


def unit_of(text: str) -> np.ndarray:
    return FakeEmbedder().embed(text)


def facts_reply(*facts: str) -> str:
    return json.dumps({"facts": [{"fact": f, "type": "identity"} for f in facts]})


def exchange(store: SQLiteStore, user: str, assistant: str) -> tuple[Message, Message]:
    return (
        store.append_message("lobug", "default", "user", user),
        store.append_message("lobug", "default", "assistant", assistant),
    )


def manager(
    store: SQLiteStore, chat: FakeChat, embedder: FakeEmbedder, **config: float
) -> MemoryManager:
    return MemoryManager(store, chat, embedder, MemoryConfig(**config))  # type: ignore[arg-type]


def test_extracted_grounded_facts_are_stored_with_sources(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    fake_chat.enqueue(facts_reply("The user's name is Alex", "The user was born on Mars"))
    user, assistant = exchange(store, "My name is Alex", "Hi Alex!")
    report = manager(store, fake_chat, fake_embedder).process_exchange("lobug", user, assistant)
    assert [f.content for f in report.facts_added] == ["The user's name is Alex"]
    assert store.facts("lobug")[0].source_message_ids == (user.id, assistant.id)
    assert fake_chat.requests[0][1] is not None  # structured output was asked for


def test_near_duplicate_supersedes_the_old_fact(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    memory = manager(store, fake_chat, fake_embedder)
    fake_chat.enqueue(facts_reply("The user works at NASA in Houston"))
    memory.process_exchange("lobug", *exchange(store, "I work at NASA in Houston", "Cool"))
    fake_chat.enqueue(facts_reply("The user works at NASA in Houston now"))
    report = memory.process_exchange(
        "lobug", *exchange(store, "I work at NASA in Houston now", "Nice")
    )
    history = store.list_facts("lobug", FactQuery(include_history=True))[0][::-1]
    assert len(history) == 2
    assert history[0].superseded_by == history[1].id
    assert report.facts_superseded == [history[0].id]
    assert [f.content for f in store.facts("lobug")] == ["The user works at NASA in Houston now"]


def test_distinct_fact_does_not_supersede(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    memory = manager(store, fake_chat, fake_embedder)
    fake_chat.enqueue(facts_reply("The user works at NASA"))
    memory.process_exchange("lobug", *exchange(store, "I work at NASA", "Cool"))
    fake_chat.enqueue(facts_reply("The user has a dog called Rex"))
    memory.process_exchange("lobug", *exchange(store, "I have a dog called Rex", "Nice"))
    assert len(store.facts("lobug")) == 2


def test_retrieval_applies_floor_and_top_k(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    memory = manager(store, fake_chat, fake_embedder, retrieval_top_k=2)
    for text in (
        "The user likes green tea",
        "The user likes black tea",
        "The user likes tea",
        "The user owns a red bicycle",
    ):
        fake_chat.enqueue(facts_reply(text))
        memory.process_exchange("lobug", *exchange(store, text.replace("The user", "I"), "ok"))
    context = memory.retrieve_context("lobug", "does the user like tea")
    assert len(context.facts) == 2
    assert all("tea" in scored.fact.content for scored in context.facts)
    assert all(scored.similarity >= 0.3 for scored in context.facts)
    assert memory.retrieve_context("lobug", "quantum chromodynamics").facts == ()


def test_retrieval_survives_a_failing_embedder(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    store.distill_base_memory("lobug", "User Profile:\n- Alex", [])
    fake_embedder.fail_with = unreachable()
    context = manager(store, fake_chat, fake_embedder).retrieve_context("lobug", "hello")
    assert context.facts == ()
    assert context.base_memory == "User Profile:\n- Alex"


def fill_log(store: SQLiteStore, count: int) -> None:
    for i in range(count):
        store.append_message("lobug", "default", "user" if i % 2 == 0 else "assistant", f"m{i}")


@pytest.mark.parametrize(("messages", "summarized"), [(29, False), (30, True)])
def test_short_term_cascade_fires_at_its_threshold(
    store: SQLiteStore,
    fake_chat: FakeChat,
    fake_embedder: FakeEmbedder,
    messages: int,
    summarized: bool,
) -> None:
    fill_log(store, messages - 2)
    user, assistant = exchange(store, "hello there", "hi")
    fake_chat.enqueue('{"facts": []}', "The user said m0, m2 and m4 to Lo-Bug.")
    report = manager(store, fake_chat, fake_embedder).process_exchange("lobug", user, assistant)
    assert report.summarized is summarized
    if summarized:
        assert store.count_unsummarized("lobug") == 10  # short_term_keep
        assert store.summaries("lobug")[0].content == "The user said m0, m2 and m4 to Lo-Bug."
    else:
        assert store.summaries("lobug") == []


@pytest.mark.parametrize(("summaries", "distilled"), [(19, False), (20, True)])
def test_long_term_cascade_fires_at_its_threshold(
    store: SQLiteStore,
    fake_chat: FakeChat,
    fake_embedder: FakeEmbedder,
    summaries: int,
    distilled: bool,
) -> None:
    for i in range(summaries):
        message = store.append_message("lobug", "default", "user", f"old {i}")
        store.add_summary("lobug", f"summary {i}", [message])
    fake_chat.enqueue('{"facts": []}', "User Profile:\n- likes summaries 0 and 1")
    report = manager(store, fake_chat, fake_embedder).process_exchange(
        "lobug", *exchange(store, "hi", "hello")
    )
    assert report.distilled is distilled
    if distilled:
        assert store.base_memory("lobug") == "User Profile:\n- likes summaries 0 and 1"
        assert store.count_unincorporated("lobug") == 10  # long_term_keep
        distill_prompt = fake_chat.requests[-1][0][-1]["content"]
        assert "summary 0" in distill_prompt and "summary 9" in distill_prompt
        assert "summary 10" not in distill_prompt
    else:
        assert store.base_memory("lobug") == ""


def test_a_failing_step_does_not_stop_the_others(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    fill_log(store, 28)
    user, assistant = exchange(store, "I live in Oslo", "Oslo is lovely")
    fake_chat.enqueue(facts_reply("The user lives in Oslo"), "A summary.")
    fake_embedder.fail_with = unreachable()
    report = manager(store, fake_chat, fake_embedder).process_exchange("lobug", user, assistant)
    assert "extract_facts" in report.errors  # embedding the fact failed
    assert report.summarized  # the cascade still ran
    assert store.facts("lobug") == []


def test_a_summary_backlog_is_taken_in_batches_that_fit_the_context(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    """A backlog larger than the model's context (a failing model, many API messages) drains
    batch by batch instead of failing forever."""
    for i in range(60):
        store.append_message("lobug", "default", "user", f"long story {i} " + "blah " * 100)
    memory = MemoryManager(store, fake_chat, fake_embedder, MemoryConfig(), context_tokens=1024)
    budget = (1024 - 300 - 256) * 3
    rounds = 0
    while store.count_unsummarized("lobug") >= 30 + 2:
        rounds += 1
        assert rounds <= 30, "the backlog does not drain"
        fake_chat.enqueue('{"facts": []}', f"Summary {rounds}: a long story.")
        report = memory.process_exchange("lobug", *exchange(store, "hi", "hello"))
        assert report.summarized and not report.errors
        prompt = fake_chat.requests[-1][0][-1]["content"]
        assert len(prompt) <= budget
        assert rounds < 30
    assert rounds > 3
    covered = [s.content for s in store.summaries("lobug")]
    assert covered[:2] == ["Summary 1: a long story.", "Summary 2: a long story."]


def test_oldest_that_fit_always_takes_one() -> None:
    assert oldest_that_fit([5, 5, 5], lambda n: n, 12) == [5, 5]
    assert oldest_that_fit([50, 1], lambda n: n, 10) == [50]
    assert oldest_that_fit([], lambda n: n, 10) == []


def test_jobs_learning_the_same_fact_at_once_keep_one_current_fact(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    """The near-duplicate check and the insert are one transaction: jobs racing on the same
    fact each supersede the one before, never store it side by side."""
    fact = facts_reply("The user works at NASA in Houston")
    chat = FakeChat(responder=lambda _, schema: fact if schema else "A summary.")
    memory = manager(store, chat, fake_embedder)
    exchanges = [exchange(store, "I work at NASA in Houston", "Cool") for _ in range(8)]
    start = threading.Barrier(len(exchanges))

    def job(pair: tuple[Message, Message]) -> ExchangeReport:
        start.wait(timeout=30)
        return memory.process_exchange("lobug", *pair)

    with ThreadPoolExecutor(len(exchanges)) as pool:
        reports = list(pool.map(job, exchanges))
    assert [r.errors for r in reports] == [{}] * len(exchanges)
    assert [f.content for f in store.facts("lobug")] == ["The user works at NASA in Houston"]
    _, with_history = store.list_facts("lobug", FactQuery(include_history=True))
    assert with_history == len(exchanges)
    assert sum(len(r.facts_superseded) for r in reports) == len(exchanges) - 1


def test_pinned_facts_come_first_after_the_personality_and_within_their_budget(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    memory = manager(store, fake_chat, fake_embedder)
    pinned = store.add_fact("lobug", NewFact("The user is allergic to nuts"), unit_of("nuts"))
    store.set_fact_flags("lobug", pinned.id, FactFlags(pinned=True), actor="manual")
    store.distill_base_memory("lobug", "User Profile", [])
    context = memory.retrieve_context("lobug", "quantum chromodynamics")
    sections = context.prompt_sections()
    assert sections[0].startswith("[Do not forget]") and "allergic to nuts" in sections[0]
    assert sections[1].startswith("[Long-term memory]")
    found = memory.retrieve_context("lobug", "is the user allergic to nuts")
    assert found.facts == ()  # already in the pinned section, not twice
    long = "x" * (PINNED_BUDGET_TOKENS * 4)
    for i in range(3):
        extra = store.add_fact("lobug", NewFact(f"{long} {i}"), unit_of(f"long {i}"))
        store.set_fact_flags("lobug", extra.id, FactFlags(pinned=True), actor="manual")
    assert len(memory.retrieve_context("lobug", "hi").pinned) == 1  # the newest alone


def test_an_exchange_forgotten_before_its_turn_is_not_learned_from(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    user, assistant = exchange(store, "My name is Alex", "Hi Alex!")
    store.forget_messages("lobug", [user.id, assistant.id], actor="manual")
    report = manager(store, fake_chat, fake_embedder).process_exchange("lobug", user, assistant)
    assert report == ExchangeReport() and fake_chat.requests == []


def test_a_stale_base_memory_is_rewritten_from_what_is_left(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    kept = store.append_message("lobug", "default", "user", "I like tea")
    gone = store.append_message("lobug", "default", "user", "I like Zorblax")
    store.add_summary("lobug", "The user likes tea", [kept])
    store.add_summary("lobug", "The user likes Zorblax", [gone])
    store.distill_base_memory("lobug", "Likes tea and Zorblax", store.summaries("lobug"))
    store.forget_messages("lobug", [gone.id], actor="manual")
    fake_chat.enqueue('{"facts": []}', "User Profile: likes tea")
    report = manager(store, fake_chat, fake_embedder).process_exchange(
        "lobug", *exchange(store, "hi", "hello")
    )
    assert report.distilled and store.base_memory("lobug") == "User Profile: likes tea"
    assert not store.base_memory_is_stale("lobug")
    prompt = fake_chat.requests[-1][0][-1]["content"]
    assert "The user likes tea" in prompt and "Zorblax" not in prompt


def test_a_small_model_learns_what_the_user_says_of_someone_named_before(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    """The model extracts nothing (as the bundled one often does); the user's own words do."""
    chat = FakeChat()
    chat.prefers_simple_json = True
    learner = manager(store, chat, fake_embedder)
    for said in ("I adopted a cat called Pixel.", "Pixel sleeps on the piano all day."):
        learner.process_exchange("lobug", *exchange(store, said, "How lovely!"))
    assert sorted(f.content for f in store.facts("lobug")) == [
        "Pixel sleeps on the piano all day",
        "The user adopted a cat called Pixel",
    ]
