"""Another conversation language (issue 41, item 6): with `LOBUG_LANGUAGE=de` and a model that
calls tools (the real OpenAI-compatible backend on a fake model server, whose German answers
are scripted: what a capable model would say), German speech is heard by the bundled whisper,
the model is told to answer in German, German replies pass the guard, and a German memory
request is carried out through the memory's tools; the start-up says what the language lacks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lobug.backends.speech import WhisperSTT
from lobug.config import Settings
from lobug.language import language_notices
from lobug.store.models import FactQuery, NewFact
from lobug.turn.request_tools import FORGET_ABOUT
from tests.api.test_spoken_curation import store_of
from tests.api.test_voice import upload
from tests.backends.test_remote import FakeOpenAI
from tests.fakes import FakeEmbedder
from tests.polling import memory_work_done
from tests.served_model import client_on

SPEECH = Path(__file__).parents[1] / "data" / "speech"


@pytest.fixture
def german(
    settings: Settings, model: FakeOpenAI, fake_embedder: FakeEmbedder
) -> Iterator[TestClient]:
    stt = WhisperSTT(None, language="de", threads=1)
    german = settings.with_overrides(language="de")
    with client_on(german, model, fake_embedder, stt) as client:
        yield client


def turns(model: FakeOpenAI) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = model.bodies("/v1/chat/completions")
    return [body for body in bodies if body.get("stream")]


@pytest.mark.models
def test_a_german_voice_turn_is_heard_answered_and_kept_in_german(
    german: TestClient, model: FakeOpenAI, fake_embedder: FakeEmbedder
) -> None:
    store_of(german).add_fact(
        "lobug", NewFact("Der Hund heißt Bello"), fake_embedder.embed("Bello")
    )
    model.say("Dein Hund heißt Bello.")
    wav = (SPEECH / "de-wie-heisst-mein-hund.wav").read_bytes()
    response = german.post("/chat/audio", files=upload(wav))
    assert response.status_code == 200, response.text
    body = response.json()
    assert "hund" in body["transcription"].lower()
    assert body["response"] == "Dein Hund heißt Bello."  # German passes the German guard
    (turn,) = turns(model)
    assert "Write in German only." in turn["messages"][0]["content"]
    memory_work_done(german)


def test_a_german_memory_request_is_carried_out_by_the_models_tool(
    german: TestClient, model: FakeOpenAI, fake_embedder: FakeEmbedder
) -> None:
    trip = "Die Reise des Benutzers geht im August nach Lissabon"
    store_of(german).add_fact("lobug", NewFact(trip), fake_embedder.embed(trip))
    model.ask_for_tools((FORGET_ABOUT, {"topic": "Reise"}))
    model.say("Erledigt, ich habe die Reise nach Lissabon vergessen.")
    said = german.post("/chat/text", json={"text": "Vergiss, was ich über meine Reise gesagt habe"})
    assert said.json()["response"] == "Erledigt, ich habe die Reise nach Lissabon vergessen."
    assert store_of(german).list_facts("lobug", FactQuery())[0] == []
    result = turns(model)[-1]["messages"][-1]
    assert result["role"] == "tool" and result["content"].startswith("I forgot 1 fact")


def test_an_english_reply_in_a_german_conversation_is_asked_for_again(
    german: TestClient, model: FakeOpenAI, fake_embedder: FakeEmbedder
) -> None:
    store_of(german).add_fact(
        "lobug", NewFact("Der Hund heißt Bello"), fake_embedder.embed("Bello")
    )
    model.say("Your dog is called Bello and he is a very good boy, I think.")
    model.say("Dein Hund heißt Bello.")
    said = german.post("/chat/text", json={"text": "Wie heißt mein Hund?"})
    assert said.json()["response"] == "Dein Hund heißt Bello."
    first, second = model.bodies("/v1/chat/completions")[-2:]
    assert "Write in German only." in second["messages"][-1]["content"]  # told again, last
    assert json.dumps(first).count("Write in German only.") == 1  # first in the standing prompt


def test_the_start_up_says_what_another_language_lacks() -> None:
    assert language_notices("en", own_voice=False) == []
    german = language_notices("de", own_voice=False)
    assert len(german) == 2
    assert "English only" in german[0] and "LOBUG_TTS_VOICE" in german[1]
    assert len(language_notices("de", own_voice=True)) == 1
    assert "not checked for their language" in language_notices("nl", own_voice=True)[0]


def test_a_german_answer_giving_a_name_memory_lacks_is_refused_in_german(
    german: TestClient, model: FakeOpenAI
) -> None:
    model.say("Deine Katze heißt Felix.")
    model.say("Deine Katze heißt Felix.")
    said = german.post("/chat/text", json={"text": "Wie heißt meine Katze?"})
    assert (
        said.json()["response"] == "Das weiß ich noch nicht. Erzähl es mir, dann merke ich es mir."
    )
