"""On a capable backend the extraction's own schema says a fact's type and whose it is
(issue 41, item 2): the model understands the sentence in any phrasing or language, so its
answer is taken and the English word rules only fill what it left out. A small model's
answers stay checked by the rules (`tests/memory/test_fact_types.py`)."""

from __future__ import annotations

import json

import pytest

from lobug.config import MemoryConfig
from lobug.memory.extraction import validate_facts
from lobug.memory.manager import MemoryManager
from lobug.memory.people import attributed
from lobug.memory.prompts import fact_extraction_messages, fact_schema
from lobug.store.household import HOUSEHOLD, PRIVATE, Speaker
from lobug.store.models import NewFact
from lobug.store.protocol import Store
from tests.fakes import FakeChat, FakeEmbedder

AGENT = "home"
PREFERENCE = "Honestly the thing I enjoy most is baking sourdough on Sundays."


def test_the_capable_schema_asks_whose_a_fact_is_and_the_simple_one_does_not() -> None:
    assert "whose" in fact_schema(5)["properties"]["facts"]["items"]["properties"]
    assert "whose" not in fact_schema(5, simple=True)["properties"]["facts"]["items"]["properties"]
    system = fact_extraction_messages("hi", "hello")[0]["content"]
    assert "whose: speaker" in system


@pytest.mark.parametrize(
    ("trust_model", "kind", "whose"),
    [(True, "preference", "household"), (False, "trait", None)],
)
def test_a_trusted_models_type_and_whose_are_taken_as_given(
    trust_model: bool, kind: str, whose: str | None
) -> None:
    """The rule reads a habit in "on Sundays" (trait) and goes before a small model's type;
    a capable model's preference is kept, and so is its whose."""
    item = {
        "fact": "The user enjoys baking sourdough on Sundays",
        "type": "preference",
        "whose": "household",
    }
    (fact,) = validate_facts(
        [item],
        user_text=PREFERENCE,
        source_message_ids=(1, 2),
        max_facts=5,
        trust_model=trust_model,
    )
    assert (fact.fact_type, fact.whose) == (kind, whose)


def test_a_whose_outside_the_schema_is_left_to_the_rules() -> None:
    item = {"fact": "The user enjoys baking sourdough", "type": "preference", "whose": "mine"}
    (fact,) = validate_facts(
        [item], user_text=PREFERENCE, source_message_ids=(1, 2), max_facts=5, trust_model=True
    )
    assert fact.whose is None


def test_whose_the_model_said_decides_the_scope_over_the_word_rules(store: Store) -> None:
    store.ensure_agent(AGENT)
    jordan = store.add_person(AGENT, "Jordan", actor="test").id
    spoken = Speaker(jordan, "device_default", 0.9)
    said = store.append_message(AGENT, "k", "user", "Der Hund heißt Keks.", speaker=spoken)
    keks = "The household's dog is called Keks"
    [by_words] = attributed([NewFact(keks)], said, True)
    [by_model] = attributed([NewFact(keks, whose="household")], said, True)
    assert (by_words.scope, by_model.scope) == (PRIVATE, HOUSEHOLD)
    ours = store.append_message(AGENT, "k", "user", "Our code is 4411", speaker=spoken)
    [mine] = attributed([NewFact("The user's code is 4411", whose="speaker")], ours, True)
    assert (mine.owner_person_id, mine.scope) == (jordan, PRIVATE)
    guest = store.append_message(AGENT, "k", "user", "Our dog is Rex")
    assert attributed([NewFact("The user's dog is Rex", whose="speaker")], guest, True) == []


@pytest.mark.both_engines
def test_a_capable_backends_extraction_stores_the_type_and_scope_it_gave(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    store.ensure_agent(AGENT)
    jordan = store.add_person(AGENT, "Jordan", actor="test").id
    chat = FakeChat()  # a capable backend: the full schema, its answers taken
    item = {
        "fact": "The user enjoys baking sourdough on Sundays",
        "type": "preference",
        "time_span": "long_term",
        "whose": "speaker",
    }
    chat.enqueue(json.dumps({"facts": [item]}))
    spoken = Speaker(jordan, "device_default", 0.9)
    user = store.append_message(AGENT, "k", "user", PREFERENCE, speaker=spoken)
    reply = store.append_message(AGENT, "k", "assistant", "Lovely!", speaker=spoken)
    MemoryManager(store, chat, fake_embedder, MemoryConfig()).process_exchange(AGENT, user, reply)
    (fact,) = store.facts(AGENT)
    assert (fact.fact_type, fact.time_span) == ("preference", "long_term")
    assert (fact.owner_person_id, fact.scope) == (jordan, PRIVATE)
