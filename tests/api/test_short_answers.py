"""Voice turns are answered in at most `voice_max_sentences` sentences on both audio paths,
and the log keeps what was spoken; text chat keeps its own limit (`text_max_sentences`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.api.test_voice import speech_wav, upload
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.polling import memory_work_done

TEN_SENTENCES = (
    "Once a fox lived by the river. She fished at dawn. Her den was under an old oak. "
    "Winter came early that year. The river froze over. Hungry owls watched the snow. "
    "A kind miller shared his bread. Spring returned with rain. Ducks came back to the reeds. "
    "The fox raised four cubs."
)
SPOKEN = "Once a fox lived by the river. She fished at dawn."


@pytest.fixture
def tts() -> FakeTTS:
    return FakeTTS()


@pytest.fixture
def voice_client(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder, tts: FakeTTS
) -> Iterator[TestClient]:
    backends = Backends(fake_chat, fake_embedder, FakeSTT("Tell me a story"), tts)
    with TestClient(create_app(settings, backends)) as client:
        yield client


def logged_reply(client: TestClient) -> str:
    messages = client.get("/memory/messages/lobug").json()
    return next(m["content"] for m in messages if m["role"] == "assistant")


def test_ten_sentences_are_spoken_as_two_and_the_model_stopped(
    voice_client: TestClient, fake_chat: FakeChat, tts: FakeTTS
) -> None:
    fake_chat.enqueue(TEN_SENTENCES)
    body = voice_client.post("/chat/audio", files=upload(speech_wav())).json()
    assert body["response"] == SPOKEN
    # the first piece is said from its first phrase (`language.text.PHRASE_START`)
    assert tts.spoken == ["Once a fox lived", "by the river.", "She fished at dawn."]
    assert fake_chat.abandoned_streams == 1  # not made to write all ten first
    assert logged_reply(voice_client) == SPOKEN


def test_ten_streamed_sentences_are_spoken_as_two_and_the_model_stopped(
    voice_client: TestClient, fake_chat: FakeChat, tts: FakeTTS
) -> None:
    fake_chat.enqueue(TEN_SENTENCES)
    response = voice_client.post("/chat/audio/stream", files=upload(speech_wav()))
    assert response.status_code == 200
    assert " ".join(tts.spoken) == SPOKEN
    assert fake_chat.abandoned_streams == 1  # stopped at the boundary, not run to the end
    sidecar = voice_client.get(f"/chat/turns/{response.headers['x-lobug-turn']}").json()
    assert sidecar["response"] == SPOKEN
    assert logged_reply(voice_client) == SPOKEN


SHORT_THEN_LONG = (
    "Pack boots and a warm coat. You might also bring a small stove, a map of the valley, "
    "spare socks, a torch with new batteries and some chocolate for the long way up."
)


@pytest.mark.parametrize("path", ["/chat/audio", "/chat/audio/stream"])
def test_a_second_sentence_is_not_said_when_it_makes_the_answer_too_long(
    voice_client: TestClient, fake_chat: FakeChat, tts: FakeTTS, settings: Settings, path: str
) -> None:
    assert len(SHORT_THEN_LONG.split()) > settings.voice_max_words
    fake_chat.enqueue(SHORT_THEN_LONG)
    assert voice_client.post(path, files=upload(speech_wav())).status_code == 200
    assert tts.spoken == ["Pack boots and a warm coat."]
    assert fake_chat.abandoned_streams == 1
    assert logged_reply(voice_client) == "Pack boots and a warm coat."


def test_voice_turns_ask_for_short_answers_and_text_chat_keeps_three_sentences(
    voice_client: TestClient, fake_chat: FakeChat, settings: Settings
) -> None:
    voice_client.post("/chat/audio", files=upload(speech_wav()))
    voice_prompt = fake_chat.chat_requests()[-1][0]["content"]
    assert "at most 2 short sentences" in voice_prompt
    assert fake_chat.reply_token_limits[-1] == settings.voice_max_tokens
    memory_work_done(voice_client)  # its requests would take the scripted reply
    stopped = fake_chat.abandoned_streams
    fake_chat.enqueue(TEN_SENTENCES)
    text = voice_client.post("/chat/text", json={"text": "Tell me a story"}).json()
    three = "Once a fox lived by the river. She fished at dawn. Her den was under an old oak."
    assert settings.text_max_sentences == 3
    assert text["response"] == three
    assert fake_chat.abandoned_streams == stopped + 1  # stopped there, not run to the end
    assert "short sentences" not in fake_chat.chat_requests()[-1][0]["content"]
    assert fake_chat.reply_token_limits[-1] == fake_chat.reply_tokens  # the model's own
    logged = [m["content"] for m in voice_client.get("/memory/messages/lobug").json()]
    assert three in logged and TEN_SENTENCES not in logged


def test_text_chat_keeps_as_many_sentences_as_configured(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    one = dataclasses.replace(settings, text_max_sentences=1)
    backends = Backends(fake_chat, fake_embedder, FakeSTT("Tell me a story"), FakeTTS())
    with TestClient(create_app(one, backends)) as client:
        fake_chat.enqueue(TEN_SENTENCES)
        text = client.post("/chat/text", json={"text": "Tell me a story"}).json()
    assert text["response"] == "Once a fox lived by the river."
