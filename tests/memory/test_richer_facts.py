"""Richer facts: types and time spans from the model, commitments with their due time (found
when the user asks what they promised), and the confidence below which nothing is stored."""

from __future__ import annotations

import json
from datetime import datetime
from typing import get_args
from zoneinfo import ZoneInfo

import pytest

from lobug.api.facts import FactTypeName
from lobug.clock import local_time
from lobug.config import MemoryConfig
from lobug.memory.assembly import ContextRequest, assemble
from lobug.memory.commitments import asks_about_commitments
from lobug.memory.disclosure import disclosed_type, self_disclosures
from lobug.memory.extraction import validate_facts
from lobug.memory.manager import MemoryManager
from lobug.memory.when import due_time
from lobug.store.models import FACT_TYPES, NewFact, fact_type_of
from lobug.store.protocol import Store
from tests.fakes import FakeChat, FakeEmbedder

BERLIN = ZoneInfo("Europe/Berlin")
WEDNESDAY = datetime(2024, 3, 13, 10, 30, tzinfo=BERLIN)


def at(*parts: int) -> float:
    return datetime(*parts, tzinfo=BERLIN).timestamp()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("I'll call Anna tomorrow", (2024, 3, 14)),
        ("the day after tomorrow", (2024, 3, 15)),
        ("tonight", (2024, 3, 13, 18)),
        ("by Friday", (2024, 3, 15)),
        ("on Wednesday", (2024, 3, 20)),
        ("next week", (2024, 3, 18)),
        ("this weekend", (2024, 3, 16)),
        ("in 3 days", (2024, 3, 16)),
        ("in two weeks", (2024, 3, 27)),
        ("next month", (2024, 4, 1)),
        ("in May", (2024, 5, 1)),
        ("by February", (2025, 2, 1)),
    ],
)
def test_the_due_time_of_a_promise(text: str, due: tuple[int, ...]) -> None:
    assert due_time(text, WEDNESDAY) == at(*due)


def test_a_promise_with_no_time_has_no_due_time() -> None:
    assert due_time("I will water the plants", WEDNESDAY) is None


@pytest.mark.parametrize("text", ["in 300 years", "in 99999 years", "in 3000000 days"])
def test_a_due_time_beyond_the_kept_times_is_none(text: str) -> None:
    """Only times from 1970 to 2200 are kept (`memory/limits.py`): beyond them, or beyond the
    calendar, a promise has no due time rather than a failure."""
    assert due_time(f"I will call Ana {text}", WEDNESDAY) is None


def test_the_model_gives_type_time_span_and_due_time() -> None:
    items = [
        {
            "fact": "The user will call Anna",
            "type": "commitment",
            "time_span": "future",
            "due": "on Friday",
        },
        {"fact": "The user must not eat peanuts", "type": "constraint", "time_span": "forever"},
        {"fact": "The user's name is Alex", "type": "personal"},
        {"fact": "The user knows Python", "type": "knowledge"},
    ]
    facts = validate_facts(
        items,
        user_text="My name is Alex. I know Python. I must not eat peanuts. I will call Anna.",
        source_message_ids=(1, 2),
        max_facts=5,
        said_at=WEDNESDAY,
    )
    assert [(f.fact_type, f.time_span, f.due_at) for f in facts] == [
        ("commitment", "future", at(2024, 3, 15)),
        ("constraint", None, None),  # not one of the coarse spans
        ("identity", None, None),  # old types are mapped as the migration maps them
        ("trait", None, None),
    ]


def test_a_commitment_without_a_due_field_is_due_when_its_sentence_says() -> None:
    (fact,) = validate_facts(
        [{"fact": "The user will call Anna tomorrow", "type": "commitment"}],
        user_text="I will call Anna tomorrow",
        source_message_ids=(1, 2),
        max_facts=5,
        said_at=WEDNESDAY,
    )
    assert fact.due_at == at(2024, 3, 14)


def test_the_api_takes_the_stored_types() -> None:
    assert get_args(FactTypeName) == FACT_TYPES


def test_unknown_types_become_the_default() -> None:
    assert [fact_type_of(t) for t in ("event", "knowledge", "gossip", None)] == [
        "event",
        "trait",
        "trait",
        "trait",
    ]


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("I'll call Anna on Friday", "commitment"),
        ("I promised to bake a cake", "commitment"),
        ("I'm allergic to peanuts", "constraint"),
        ("I can't drive at night", "constraint"),
        ("I really love jazz", "preference"),
        ("My name is Alex", "identity"),
    ],
)
def test_the_users_own_statements_are_typed(said: str, kind: str) -> None:
    assert disclosed_type(said) == kind


def test_a_stated_promise_keeps_its_due_time() -> None:
    (fact,) = self_disclosures("I will call Anna tomorrow.", (1, 2), said_at=WEDNESDAY)
    assert (fact.fact_type, fact.due_at) == ("commitment", at(2024, 3, 14))


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What did I promise to do?", True),
        ("what do I have to do this week", True),
        ("Anything on my to-do list?", True),
        ("what am I supposed to bring", True),
        ("What is my name?", False),
        ("Tell me a joke", False),
    ],
)
def test_questions_about_promises(question: str, asks: bool) -> None:
    assert asks_about_commitments(question) is asks


def memory(store: Store, chat: FakeChat, embedder: FakeEmbedder, **config: float) -> MemoryManager:
    settings = MemoryConfig(timezone="Europe/Berlin", **config)  # type: ignore[arg-type]
    return MemoryManager(store, chat, embedder, settings)


@pytest.mark.both_engines
def test_a_learned_promise_is_found_when_the_user_asks_what_they_promised(
    store: Store, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    manager = memory(store, fake_chat, fake_embedder)
    fake_chat.enqueue(
        json.dumps({"facts": [{"fact": "The user will call Anna tomorrow", "type": "commitment"}]})
    )
    user = store.append_message("lobug", "desk", "user", "I will call Anna tomorrow")
    reply = store.append_message("lobug", "desk", "assistant", "Good idea.")
    manager.process_exchange("lobug", user, reply)
    for fact in ("The user likes tea", "The user lives in Porto", "The user has a cat"):
        store.add_fact("lobug", NewFact(fact, "preference"), fake_embedder.embed(fact))
    (promise,) = [f for f in store.facts("lobug") if f.fact_type == "commitment"]
    assert promise.due_at == due_time("tomorrow", local_time(user.created_at, BERLIN))

    asked = manager.retrieve_context("lobug", "What did I promise to do?")
    assert asked.facts[0].fact.id == promise.id
    prompt = "\n".join(asked.prompt_sections())
    assert '"The user will call Anna tomorrow" (due ' in prompt
    other = manager.retrieve_context("lobug", "Do I have a cat?")
    assert other.facts[0].fact.content == "The user has a cat"  # no promise put first
    budgeted = assemble(
        manager, "lobug", "What did I promise?", ContextRequest(500, 0, topics=True)
    )
    assert budgeted.context.facts[0].fact.id == promise.id


@pytest.mark.both_engines
def test_facts_less_sure_than_the_setting_are_not_stored(
    store: Store, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    manager = memory(store, fake_chat, fake_embedder, min_fact_confidence=0.6)
    fake_chat.enqueue(
        json.dumps(
            {
                "facts": [
                    {"fact": "The user works at NASA", "type": "identity", "confidence": 0.9},
                    {"fact": "The user likes rockets", "type": "preference", "confidence": 0.4},
                    {"fact": "The user lives in Houston", "type": "identity"},  # 0.5 by default
                ]
            }
        )
    )
    user = store.append_message(
        "lobug", "desk", "user", "I work at NASA, I like rockets and I live in Houston"
    )
    reply = store.append_message("lobug", "desk", "assistant", "Nice.")
    report = manager.process_exchange("lobug", user, reply)
    kept = ["The user works at NASA", "The user lives in Houston"]
    assert [f.content for f in report.facts_added] == kept
    assert [f.content for f in store.facts("lobug")] == kept
    # a grounded extraction is 0.6, and the model's own 0.9 does not raise it
    assert [f.confidence for f in store.facts("lobug")] == [0.6, 0.6]
