"""A person first on a model server (issue 28): a background call to Ollama or an
OpenAI-compatible server of one's own is streamed and its stream closed when a person's call
arrives (the server then stops generating, instead of making the person wait behind it on a
server that answers one request at a time), and asked again afterwards: its answer is whole."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from lobug.backends.base import ChatBackend
from lobug.backends.remote import OpenAIChat
from lobug.backends.sharing import QUIET_S
from tests.backends.test_remote import (
    HELLO,
    SCHEMA,
    Closer,
    FakeOllama,
    FakeOpenAI,
    FakeServer,
    _ollama_chat,
    _openai_chat,
)
from tests.polling import eventually

PIECES = [f"word{n} " for n in range(30)]
JSON_PIECES = [json.dumps({"facts": ["a", "b"]})[i : i + 3] for i in range(0, 21, 3)]

# Fixtures of test_remote, used here by name.
pytest_plugins = ("tests.backends.test_remote",)


@pytest.fixture
def servers() -> Iterator[dict[str, FakeServer]]:
    made: dict[str, FakeServer] = {"ollama": FakeOllama(models=["llama3.2:latest"])}
    made["openai"] = FakeOpenAI(models=["served-model"])
    yield made
    for server in made.values():
        server.close()


def chat_on(kind: str, server: FakeServer, closing: Closer) -> ChatBackend:
    if kind == "ollama":
        return _ollama_chat(closing, server.url)
    assert isinstance(server, FakeOpenAI)
    return _openai_chat(closing, server.base_url)


def in_thread(call: Callable[[], str]) -> tuple[threading.Thread, list[str]]:
    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(call()))
    thread.start()
    return thread, result


def chat_bodies(server: FakeServer) -> list[Any]:
    return server.bodies("/api/chat") + server.bodies("/v1/chat/completions")


@pytest.mark.parametrize("kind", ["ollama", "openai"])
@pytest.mark.parametrize("schema", [None, SCHEMA])
def test_a_background_call_gives_way_to_a_person_and_is_answered_whole(
    servers: dict[str, FakeServer], closing: Closer, kind: str, schema: Any
) -> None:
    server = servers[kind]
    chat = chat_on(kind, server, closing)
    pieces = PIECES if schema is None else JSON_PIECES
    server.chunk_delay_s, server.one_at_a_time = 0.03, True
    server.say(*pieces)  # the background call's first try
    server.say("Hello!")  # the person's
    server.say(*pieces)  # the background call again
    thread, result = in_thread(
        lambda: chat.complete(HELLO, max_tokens=64, json_schema=schema, background=True)
    )
    assert eventually(lambda: len(chat_bodies(server)) == 1)
    time.sleep(0.1)  # it is writing
    started = time.monotonic()
    assert chat.complete(HELLO, max_tokens=8) == "Hello!"  # not streamed: no pace
    answered_in = time.monotonic() - started
    thread.join(10)
    assert result == ["".join(pieces)]  # whole: nothing lost, nothing twice
    assert eventually(lambda: server.streams_closed_early == 1)  # the first try was stopped
    first, person, again = chat_bodies(server)
    assert first["stream"] is True and again["stream"] is True
    assert not person.get("stream")
    assert ("format" in again or "response_format" in again) == (schema is not None)
    assert answered_in < 1.0


def test_background_work_waits_while_a_person_streams(
    servers: dict[str, FakeServer], closing: Closer
) -> None:
    server = servers["ollama"]
    chat = chat_on("ollama", server, closing)
    server.chunk_delay_s = 0.02
    server.say(*PIECES[:10])
    server.say("done")
    streaming = chat.stream(HELLO, max_tokens=32)
    assert next(streaming) == PIECES[0]
    thread, result = in_thread(lambda: chat.complete(HELLO, max_tokens=8, background=True))
    time.sleep(0.1)
    assert len(chat_bodies(server)) == 1  # the background call waits for the person
    assert "".join(streaming) == "".join(PIECES[1:10])
    left = time.monotonic()
    thread.join(10)
    assert result == ["done"] and time.monotonic() - left >= QUIET_S * 0.9


def test_openai_background_calls_give_way_only_on_a_server_of_ones_own(
    servers: dict[str, FakeServer], closing: Closer
) -> None:
    cloud = OpenAIChat("gpt", base_url=None, api_key="sk-test", timeout_s=1, connect_timeout_s=1)
    closing(cloud)
    assert not cloud.background_gives_way  # OpenAI serves both at once; no call paid twice
    server = servers["openai"]
    assert isinstance(server, FakeOpenAI)
    chat = _openai_chat(closing, server.base_url)
    assert chat.background_gives_way
    chat.background_gives_way = False
    server.say("plain")
    assert chat.complete(HELLO, max_tokens=8, background=True) == "plain"
    assert not server.bodies("/v1/chat/completions")[0].get("stream")


def test_a_refused_response_format_is_asked_again_without_it_in_the_background(
    servers: dict[str, FakeServer], closing: Closer
) -> None:
    server = servers["openai"]
    assert isinstance(server, FakeOpenAI)
    server.rejects_response_format = True
    server.say(*JSON_PIECES)
    chat = _openai_chat(closing, server.base_url)
    reply = chat.complete(HELLO, max_tokens=64, json_schema=SCHEMA, background=True)
    assert json.loads(reply) == {"facts": ["a", "b"]}
    refused, asked = server.bodies("/v1/chat/completions")
    assert "response_format" in refused and "response_format" not in asked
    assert asked["stream"] is True and not chat.supports_json_schema
