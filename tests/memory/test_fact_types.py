"""Facts typed and dated (issue 28, item 3): every learned fact was typed `identity` at
confidence 0.40, and "On Friday I'm hiking at Multnomah Falls with my sister" was no event
and had no due time. Now a statement's words give its type (seed 001), a plan its due time as
of when it was said, and the confidence says where the fact came from
(`memory/confidence.py`)."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from lobug.config import MemoryConfig
from lobug.memory import confidence
from lobug.memory.curation import Curation
from lobug.memory.disclosure import disclosed_type, self_disclosures
from lobug.memory.extraction import merge_facts, validate_facts
from lobug.memory.manager import MemoryManager
from lobug.store.models import MANUAL, VOICE, NewFact
from lobug.store.protocol import Store
from tests.fakes import FakeChat, FakeEmbedder

BERLIN = ZoneInfo("Europe/Berlin")
WEDNESDAY = datetime(2024, 3, 13, 10, 30, tzinfo=BERLIN)
HIKE = "On Friday I'm hiking at Multnomah Falls with my sister."


def at(*parts: int) -> float:
    return datetime(*parts, tzinfo=BERLIN).timestamp()  # type: ignore[misc]


def test_a_plan_said_in_the_first_person_is_an_event_due_when_it_says() -> None:
    (fact,) = self_disclosures(HIKE, (1, 2), said_at=WEDNESDAY)
    assert fact.content == "On Friday the user is hiking at Multnomah Falls with the user's sister"
    assert (fact.fact_type, fact.due_at, fact.time_span) == ("event", at(2024, 3, 15), "future")
    assert fact.confidence == confidence.SAID == 0.7


def test_the_small_models_identity_for_a_plan_becomes_an_event_with_its_due_time() -> None:
    """The 135M model copies its prompt's example type ("identity") for every fact: the
    rule reads the person's sentence the fact was grounded in."""
    (fact,) = validate_facts(
        [{"fact": "The user is hiking at Multnomah Falls with their sister", "type": "identity"}],
        user_text=f"Hello! {HIKE} What should I pack?",
        source_message_ids=(1, 2),
        max_facts=5,
        said_at=WEDNESDAY,
    )
    assert (fact.fact_type, fact.due_at) == ("event", at(2024, 3, 15))
    assert fact.confidence == confidence.EXTRACTED == 0.6


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("My name is Maya.", "identity"),
        ("I work as a software tester at a bank.", "identity"),
        ("I have a dog called Biscuit.", "identity"),
        ("I was born in May.", "identity"),
        ("I'll call Anna tomorrow.", "commitment"),
        ("I need to renew my passport by June.", "commitment"),
        ("I'm going to call mum tonight.", "commitment"),
        ("I'm allergic to peanuts.", "constraint"),
        ("I must not lift heavy things.", "constraint"),
        ("I have been vegetarian for ten years.", "constraint"),
        ("I cycle to work every day.", "trait"),
        ("I go swimming on Saturdays.", "trait"),
        ("I work Monday to Friday.", "trait"),
        ("I speak English and a little Spanish.", "trait"),
        ("I am afraid of spiders.", "trait"),
        ("I am learning to play the piano.", "trait"),
        ("We are going to Norway in June.", "event"),
        ("I am training for a half marathon in October.", "event"),
        ("I went to Paris last year.", "event"),
        ("My favourite band is Radiohead.", "preference"),
        ("I do not like horror films.", "preference"),
        ("I can't stand loud music.", "preference"),
        ("I hate everything about Mondays.", "preference"),
    ],
)
def test_a_statement_is_typed_by_its_words(said: str, kind: str) -> None:
    assert disclosed_type(said) == kind


@pytest.mark.parametrize(
    ("said", "kind", "due"),
    [
        ("On Friday I went hiking with my sister.", "event", None),  # done: no due time
        ("I am training for a half marathon in October.", "event", (2024, 10, 1)),
        ("I need to call Anna tomorrow.", "commitment", (2024, 3, 14)),  # "need" is no past
        ("I'm going to call mum tonight.", "commitment", (2024, 3, 13, 18)),
        ("I promised to bake a cake.", "commitment", None),
    ],
)
def test_only_what_is_to_come_has_a_due_time(
    said: str, kind: str, due: tuple[int, ...] | None
) -> None:
    (fact,) = self_disclosures(said, (1, 2), said_at=WEDNESDAY)
    assert (fact.fact_type, fact.due_at) == (kind, None if due is None else at(*due))


def test_a_plan_is_due_as_of_when_it_was_said_not_when_it_is_learned() -> None:
    saturday = datetime(2024, 3, 16, 9, 0, tzinfo=BERLIN)
    (fact,) = self_disclosures(HIKE, (1, 2), said_at=saturday)
    assert fact.due_at == at(2024, 3, 22)


def test_confidence_says_where_a_fact_came_from() -> None:
    assert confidence.of_person(MANUAL) == 1.0  # typed by a person
    assert confidence.of_person(VOICE) == 0.9  # a correction said to a device
    assert confidence.of_statement("I live in Leeds") == 0.7
    assert confidence.of_statement("Leo is seven", about_user=False) == 0.5
    assert confidence.of_extraction("I live in Leeds") == 0.6
    assert confidence.of_statement("I think I live in Leeds") == 0.5  # hedged
    assert confidence.of_extraction("maybe I'll move to Leeds") == 0.4
    assert confidence.of_extraction("I live in Leeds", 0.2) == 0.2  # the model's lowers it
    assert confidence.of_extraction("I live in Leeds", 0.99) == 0.6  # ... never raises it
    assert confidence.of_extraction("I live in Leeds", True) == 0.6  # not a number


def test_a_statement_about_someone_named_before_is_less_sure() -> None:
    (fact,) = self_disclosures("Leo is seven years old.", (1, 2), known={"leo"})
    assert (fact.fact_type, fact.confidence) == ("identity", 0.5)


def test_the_model_and_the_persons_own_words_agreeing_take_the_higher_confidence() -> None:
    extracted = NewFact("The user lives in Leeds", "identity", confidence=0.6)
    said = NewFact("The user lives in Leeds", "identity", confidence=0.7)
    other = NewFact("The user has a cat", "identity", confidence=0.7)
    merged = merge_facts([extracted], [said, other], 5)
    assert [(f.content, f.confidence) for f in merged] == [
        ("The user lives in Leeds", 0.7),
        ("The user has a cat", 0.7),
    ]


class SmallModelChat(FakeChat):
    """The embedded model's backend: a simple schema, and the user's own statements kept."""

    prefers_simple_json = True


@pytest.mark.both_engines
def test_a_small_models_exchange_stores_a_dated_event(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    chat = SmallModelChat()
    chat.enqueue(json.dumps({"facts": [{"fact": "The user likes hiking", "type": "identity"}]}))
    user = store.append_message("lobug", "desk", "user", HIKE)
    reply = store.append_message("lobug", "desk", "assistant", "Have fun!")
    config = MemoryConfig(timezone="Europe/Berlin")
    MemoryManager(store, chat, fake_embedder, config).process_exchange("lobug", user, reply)
    (fact,) = store.facts("lobug")  # the model's "likes hiking" is not what was said
    said_at = datetime.fromtimestamp(user.created_at, BERLIN)
    friday = (4 - said_at.weekday()) % 7 or 7
    assert (fact.fact_type, fact.confidence) == ("event", 0.7)
    assert fact.due_at is not None
    due = datetime.fromtimestamp(fact.due_at, BERLIN)
    assert (due - said_at.replace(hour=0, minute=0, second=0, microsecond=0)).days == friday
    assert due.weekday() == 4


@pytest.mark.both_engines
def test_a_correction_said_to_a_device_is_less_sure_than_one_typed(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    curation = Curation(store, fake_embedder, MemoryConfig())
    typed = curation.add_fact("lobug", "The user's dog is Rex", actor=MANUAL).fact
    said = curation.add_fact("lobug", "The user lives in Porto", actor=VOICE).fact
    corrected = curation.correct_fact("lobug", typed.id, "The user's dog is Biscuit", actor=VOICE)
    assert (typed.confidence, said.confidence, corrected.confidence) == (1.0, 0.9, 0.9)
