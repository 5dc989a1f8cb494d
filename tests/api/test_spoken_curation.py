"""Forgetting and correcting by voice or text on the device path, over HTTP: the request is
carried out without the model, answered with a confirmation, and neither it nor what it
forgot is learned from."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.memory.spoken_requests import PHRASINGS
from lobug.store.models import FactQuery, NewFact
from lobug.store.sqlite.engine import SQLiteStore
from tests.api.test_voice import speech_wav, upload
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS, unreachable
from tests.polling import memory_work_done

DEVICE_TOKEN = "device-token-1-Xq9"


def say(client: TestClient, text: str, headers: dict[str, str] | None = None) -> str:
    response = client.post("/chat/text", json={"text": text}, headers=headers or {})
    assert response.status_code == 200, response.text
    memory_work_done(client)
    reply: str = response.json()["response"]
    return reply


def store_of(client: TestClient) -> SQLiteStore:
    found: SQLiteStore = client.app.state.services.store  # type: ignore[attr-defined]
    return found


def logged(client: TestClient) -> list[str]:
    return [m.content for m in store_of(client).recent_messages("lobug", "default", 50)]


def remember(client: TestClient, embedder: FakeEmbedder, text: str) -> int:
    store = store_of(client)
    return store.add_fact("lobug", NewFact(text), embedder.embed(text)).id


def current_facts(client: TestClient) -> list[str]:
    return [f.content for f in store_of(client).list_facts("lobug", FactQuery())[0]]


def test_forget_that_erases_the_last_turn_from_log_working_memory_and_prompt(
    client: TestClient, fake_chat: FakeChat
) -> None:
    say(client, "Good morning")
    fake_chat.enqueue("Zorblax is a lovely name for a cat.")
    say(client, "My cat is called Zorblax")
    asked = len(fake_chat.chat_requests())
    assert say(client, "Forget that") == "Okay, I forgot what you just said."
    assert len(fake_chat.chat_requests()) == asked  # the model was not asked
    assert not any("Zorblax" in text for text in logged(client))
    assert "Forget that" not in logged(client)  # the request is not logged either
    say(client, "What is my cat called?")
    prompt = " ".join(m["content"] for m in fake_chat.chat_requests()[-1])
    assert "Zorblax" not in prompt and "Good morning" in prompt
    assert not any("Zorblax" in fact for fact in current_facts(client))


def test_forget_a_topic_purges_its_facts_and_messages_and_keeps_the_rest(
    client: TestClient, fake_embedder: FakeEmbedder
) -> None:
    say(client, "My sister lives in Lisbon")
    say(client, "I like green tea")
    remember(client, fake_embedder, "The user's sister lives in Lisbon")
    remember(client, fake_embedder, "The user likes green tea")
    reply = say(client, "Forget what I told you about my sister")
    assert reply == "I forgot 1 fact: your sister lives in Lisbon."
    assert not any("sister" in text.lower() for text in logged(client) + current_facts(client))
    assert "The user likes green tea" in current_facts(client)
    assert say(client, "forget everything about Mars rovers") == (
        "I didn't find anything about mars rovers."
    )


def learned_from_last_exchange(client: TestClient, embedder: FakeEmbedder, text: str) -> int:
    """A fact stored as learned from the device's last exchange (its two messages)."""
    exchange = store_of(client).recent_messages("lobug", "default", 2)
    new = NewFact(text, source_message_ids=tuple(m.id for m in exchange))
    return store_of(client).add_fact("lobug", new, embedder.embed(text)).id


def test_forgetting_a_topic_takes_what_its_facts_were_learned_from_and_says_what_went(
    client: TestClient, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    """ "Forget what I said about my trip" answered "Okay, I forgot what you told me about
    your trip." and forgot only the assistant's "Have a lovely trip!"; the fact stayed."""
    fake_chat.enqueue("Lisbon in August sounds wonderful.")
    say(client, "We fly to Lisbon in August")
    learned_from_last_exchange(client, fake_embedder, "The user's trip is to Lisbon in August")
    fake_chat.enqueue("Have a lovely trip!")
    say(client, "I packed my bags")
    reply = say(client, "Forget what I said about my trip")
    assert reply == "I forgot 1 fact: your trip is to Lisbon in August."
    assert current_facts(client) == []
    assert not any("Lisbon" in text for text in logged(client))  # its exchange went with it
    assert "Have a lovely trip!" in logged(client)  # the assistant's words are not the person's


def test_facts_only_close_in_meaning_are_said_back_and_forgotten_on_a_yes(
    client: TestClient, fake_embedder: FakeEmbedder
) -> None:
    say(client, "We fly to Lisbon in August")
    learned_from_last_exchange(client, fake_embedder, "The user is flying to Lisbon in August")
    asked = say(client, "Forget everything about the Lisbon holiday")
    assert asked == (
        "I have nothing that names the Lisbon holiday, but this note may be about it: you are "
        'flying to Lisbon in August. Say "yes" and I\'ll forget it.'
    )
    assert current_facts(client) == ["The user is flying to Lisbon in August"]
    say(client, "Forget everything about the Lisbon holiday")
    say(client, "What time is it?")  # any other turn drops the question
    assert say(client, "yes") != "I forgot 1 fact: you are flying to Lisbon in August."
    assert current_facts(client) == ["The user is flying to Lisbon in August"]
    say(client, "Forget everything about the Lisbon holiday")
    assert say(client, "Yes") == "I forgot 1 fact: you are flying to Lisbon in August."
    assert current_facts(client) == []
    assert not any("Lisbon" in text for text in logged(client))


def test_a_topic_only_messages_name_says_so_and_nothing_found_is_said(client: TestClient) -> None:
    say(client, "The garden party was fun")
    reply = say(client, "Forget everything about the garden party")
    assert reply == "I deleted 1 message of yours that mentioned the garden party."
    assert not any("garden" in text for text in logged(client))
    assert say(client, "Forget about the garden party") == (
        "I didn't find anything about the garden party."
    )


def test_with_the_embedder_down_a_forget_says_it_could_not_check_and_changes_nothing(
    client: TestClient, fake_embedder: FakeEmbedder
) -> None:
    """It said it had nothing about the moon without having looked."""
    remember(client, fake_embedder, "The user's sister lives in Lisbon")
    remember(client, fake_embedder, "The user went to the Moon festival")  # found by meaning
    say(client, "I watched the moon rise")
    fake_embedder.fail_with = unreachable()
    before = logged(client), current_facts(client)
    reply = say(client, "forget everything about the lunar landing")
    assert reply == (
        "I couldn't check what I have saved about the lunar landing just now, so I haven't "
        "forgotten anything. Please ask me again in a moment."
    )
    corrected = say(client, "That's wrong, my brother's name is Tom")
    assert corrected.startswith("I couldn't check what I have saved about your brother")
    assert "so I haven't changed anything" in corrected
    assert (logged(client), current_facts(client)) == before
    # A topic its facts name is still found by its words, embedder or not.
    reply = say(client, "Forget what I told you about my sister")
    assert reply == "I forgot 1 fact: your sister lives in Lisbon."
    assert not any("sister" in fact for fact in current_facts(client))


def test_a_correction_replaces_the_one_fact_about_its_subject(
    client: TestClient, fake_embedder: FakeEmbedder
) -> None:
    old = remember(client, fake_embedder, "The user's sister's name is Eva")
    reply = say(client, "That's wrong, my sister's name is Ana")
    assert reply == "Got it, I corrected that: your sister's name is Ana."
    versions = store_of(client).fact_versions("lobug", old)
    assert [v.content for v in versions] == [
        "The user's sister's name is Eva",
        "The user's sister's name is Ana",
    ]
    assert store_of(client).audit_entries("lobug", 1)[0].actor == "voice"


def test_a_correction_with_nothing_to_replace_is_remembered_and_several_are_asked_about(
    client: TestClient, fake_embedder: FakeEmbedder
) -> None:
    reply = say(client, "that's wrong my car is blue")
    assert reply == "Thanks, I'll remember that your car is blue."
    assert current_facts(client) == ["The user's car is blue"]
    remember(client, fake_embedder, "The user's car is a red Volvo")
    asked = say(client, "No, that's not right: my car is green")
    assert asked.startswith("I have 2 notes about your car:") and asked.endswith("wrong?")
    assert len(current_facts(client)) == 2


def test_an_ordinary_turn_goes_to_the_model_and_is_learned_from(
    client: TestClient, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue("Good luck with the meeting.")
    assert (
        say(client, "Don't forget that I have a meeting at noon") == "Good luck with the meeting."
    )
    assert logged(client) == [
        "Don't forget that I have a meeting at noon",
        "Good luck with the meeting.",
    ]
    assert len(fake_chat.extraction_requests()) == 1


@pytest.mark.parametrize("phrasing", PHRASINGS, ids=lambda p: p.said)
def test_every_documented_phrasing_is_answered_without_the_model(
    client: TestClient, fake_chat: FakeChat, phrasing: object
) -> None:
    said = phrasing.said  # type: ignore[attr-defined]
    reply = say(client, said)
    assert reply and fake_chat.chat_requests() == []
    assert logged(client) == []


@pytest.fixture
def voice_client(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> Iterator[tuple[TestClient, FakeSTT]]:
    stt = FakeSTT("Tell me about Zorblax")
    guarded = settings.with_overrides(device_tokens=(DEVICE_TOKEN,))
    backends = Backends(fake_chat, fake_embedder, stt, FakeTTS())
    with TestClient(create_app(guarded, backends)) as client:
        yield client, stt


@pytest.mark.parametrize("path", ["/chat/audio", "/chat/audio/stream"])
def test_forget_by_voice_works_with_a_device_token(
    voice_client: tuple[TestClient, FakeSTT], fake_chat: FakeChat, path: str
) -> None:
    client, stt = voice_client
    auth = {"Authorization": f"Bearer {DEVICE_TOKEN}"}
    fake_chat.enqueue("Zorblax is a planet.")
    assert client.post("/chat/audio", files=upload(speech_wav()), headers=auth).status_code == 200
    memory_work_done(client)
    stt.heard = "Lo-Bug, forget what I just said."
    response = client.post(path, files=upload(speech_wav()), headers=auth)
    assert response.status_code == 200, response.text
    if path == "/chat/audio":
        assert response.json()["response"] == "Okay, I forgot what you just said."
    else:
        turn = client.get(f"/chat/turns/{response.headers['x-lobug-turn']}", headers=auth)
        assert turn.json()["response"] == "Okay, I forgot what you just said."
        assert len(response.content) > 44  # the confirmation is spoken
    memory_work_done(client)
    assert logged(client) == []
    assert current_facts(client) == []


def test_deleting_the_agent_of_a_device_empties_its_working_memory_and_stays_deleted(
    client: TestClient,
) -> None:
    say(client, "My cat is called Zorblax")
    response = client.delete("/memory/agents/lobug", params={"confirm": "lobug"})
    assert response.status_code == 200, response.text
    assert store_of(client).find_agent("lobug") is None
    assert client.get("/context/working-memory").json()["messages"] == []


def test_what_do_you_know_about_me_says_the_newest_facts_the_speaker_may_see(
    client: TestClient, fake_embedder: FakeEmbedder, fake_chat: FakeChat
) -> None:
    assert say(client, "What do you know about me?") == (
        "I don't know anything about you yet. Tell me, and I'll remember."
    )
    remember(client, fake_embedder, "The user's dog is called Biscuit")
    remember(client, fake_embedder, "The user works as a nurse")
    asked = len(fake_chat.chat_requests())
    assert say(client, "what do you remember about me") == (
        "I know that you work as a nurse; your dog is called Biscuit."
    )
    assert len(fake_chat.chat_requests()) == asked  # the model was not asked


def test_a_correction_of_a_fact_close_in_meaning_is_read_back_and_made_on_a_yes(
    client: TestClient, fake_embedder: FakeEmbedder
) -> None:
    """ "Actually my dog is called Pretzel now" stored a second fact beside "... a beagle named
    Biscuit", which no word of "my dog" names."""
    old = remember(client, fake_embedder, "The user has a beagle")
    asked = say(client, "Actually my sweet beagle is called Pretzel now")
    assert asked == (
        "I have this note: you have a beagle. "
        'Say "yes" and I\'ll change it to: your sweet beagle is called Pretzel.'
    )
    assert current_facts(client) == ["The user has a beagle"]
    assert say(client, "yes") == "Got it, I corrected that: your sweet beagle is called Pretzel."
    assert current_facts(client) == ["The user's sweet beagle is called Pretzel"]
    assert len(store_of(client).fact_versions("lobug", old)) == 2
