"""Memory requests understood by a model that calls tools (issue 41, item 2), through the real
app with the real OpenAI-compatible backend on a fake model server: the memory's requests are
offered as tools, carried out by the code a spoken request runs, and the model is told what
was done; the phrase rules are not asked, and such a turn is not learned from."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lobug.config import Settings
from lobug.store.models import FactQuery, NewFact
from lobug.turn.request_tools import FORGET_ABOUT, FORGET_LAST, MEMORY_TOOLS, WHAT_YOU_KNOW
from tests.api.test_spoken_curation import say, store_of
from tests.backends.test_remote import FakeOpenAI
from tests.fakes import FakeEmbedder
from tests.polling import memory_work_done
from tests.served_model import client_on


@pytest.fixture
def client(
    settings: Settings, model: FakeOpenAI, fake_embedder: FakeEmbedder
) -> Iterator[TestClient]:
    with client_on(settings, model, fake_embedder) as app_client:
        yield app_client


def remember(client: TestClient, embedder: FakeEmbedder, text: str) -> int:
    return store_of(client).add_fact("lobug", NewFact(text), embedder.embed(text)).id


def facts(client: TestClient) -> list[str]:
    return [f.content for f in store_of(client).list_facts("lobug", FactQuery())[0]]


def turns(model: FakeOpenAI) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = model.bodies("/v1/chat/completions")
    return [body for body in bodies if body.get("tools")]


def test_a_forget_in_any_words_is_carried_out_and_the_model_told_what_was_done(
    client: TestClient, model: FakeOpenAI, fake_embedder: FakeEmbedder
) -> None:
    remember(client, fake_embedder, "The user's trip is to Lisbon in August")
    remember(client, fake_embedder, "The user likes green tea")
    model.ask_for_tools((FORGET_ABOUT, {"topic": "my trip"}))
    model.say("Okay, I forgot that your trip is to Lisbon in August.")
    reply = say(client, "vergiss, was ich über meine Reise gesagt habe")
    assert reply == "Okay, I forgot that your trip is to Lisbon in August."
    assert facts(client) == ["The user likes green tea"]
    first, second = turns(model)
    assert {tool["function"]["name"] for tool in first["tools"]} == MEMORY_TOOLS
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call-0",
        "content": "I forgot 1 fact: your trip is to Lisbon in August.",
    }
    # Kept as a spoken request is: not logged, not learned from (no extraction asked).
    assert store_of(client).recent_messages("lobug", "default", 10) == []
    assert not [b for b in model.bodies("/v1/chat/completions") if not b.get("stream")]


def test_a_request_the_phrase_rules_know_goes_to_the_model_and_nothing_found_is_said(
    client: TestClient, model: FakeOpenAI
) -> None:
    model.ask_for_tools((FORGET_ABOUT, {"topic": "the moon landing"}))
    model.say("I had nothing about that.")
    assert say(client, "Forget everything about the moon landing") == "I had nothing about that."
    (_, second) = turns(model)
    assert second["messages"][-1]["content"] == "I didn't find anything about the moon landing."


def test_forget_the_last_thing_forgets_the_turn_before_the_request(
    client: TestClient, model: FakeOpenAI
) -> None:
    model.say("Zorblax is a fine name.")
    say(client, "My cat is called Zorblax")
    memory_work_done(client)
    model.ask_for_tools((FORGET_LAST, {}))
    model.say("Forgotten.")
    assert say(client, "Actually, please don't keep what I just told you") == "Forgotten."
    assert store_of(client).recent_messages("lobug", "default", 10) == []


def test_what_you_know_lists_the_facts_and_the_rules_switch_offers_no_tools(
    settings: Settings, model: FakeOpenAI, fake_embedder: FakeEmbedder
) -> None:
    with client_on(settings, model, fake_embedder) as client:
        remember(client, fake_embedder, "The user's dog is called Biscuit")
        model.ask_for_tools((WHAT_YOU_KNOW, {}))
        model.say("Your dog is Biscuit.")
        say(client, "tell me everything you've got on me")
        (_, second) = turns(model)
        assert second["messages"][-1]["content"] == "I know that your dog is called Biscuit."
    rules = settings.with_overrides(understanding="rules")
    with client_on(rules, model, fake_embedder) as client:
        assert say(client, "What do you know about me?") == (
            "I know that your dog is called Biscuit."
        )
        model.say("Hello!")
        say(client, "Hello")
        assert len(turns(model)) == 2  # no tools offered under the rules
