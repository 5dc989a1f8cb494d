"""The reply guard on the OpenAI-compatible proxy, over real HTTP with the `openai` client
(issue 18): a looping or off-language reply is asked for once more, else the fallback is
sent; a stream is checked sentence by sentence and keeps OpenAI's format; the log marks what
the guard did and a fallback is never learned from."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from lobug.app import create_app
from lobug.backends import Backends
from lobug.backends.base import ChatMessage
from lobug.config import Settings
from lobug.language.quality import is_learnable
from lobug.memory.work_queue import StreamedExchange
from lobug.services import Services
from lobug.store.models import Message
from lobug.turn.proxy import MemoryProxy, ProxyRequest
from lobug.turn.reply_guard import FALLBACK_REPLY
from tests.fakes import LOOP_REPLY, FakeChat, FakeEmbedder, LoopingChat
from tests.live import LiveServer
from tests.polling import eventually

PORTUGUESE = "Não pode ser mais difícil que estejo também já esta deixar com Joana!"
GOOD = "Lisbon is lovely. How long have you lived there?"
SAID = "I live in Lisbon with my partner Joana."


@pytest.fixture
def looping() -> bool:
    return False


@pytest.fixture
def served(
    settings: Settings, fake_chat: FakeChat, looping: bool
) -> Iterator[tuple[openai.OpenAI, Services]]:
    chat = LoopingChat() if looping else fake_chat
    app = create_app(settings, Backends(chat, FakeEmbedder()))
    live = LiveServer(app)
    try:
        with openai.OpenAI(base_url=f"{live.url}/v1", api_key="unused", max_retries=0) as sdk:
            yield sdk, app.state.services
    finally:
        live.stop()


def ask(sdk: openai.OpenAI, text: str = SAID) -> str:
    reply = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content or ""


def stream(sdk: openai.OpenAI, text: str = SAID) -> list[str]:
    """The content of each chunk of a streamed reply (the role chunk and the end left out)."""
    chunks = sdk.chat.completions.create(
        model="m", messages=[{"role": "user", "content": text}], stream=True
    )
    return [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]


def logged_reply(services: Services) -> Message:
    assert eventually(lambda: services.memory_work.pending == 0, 30)
    replies = [m for m in services.store.recent_messages("lobug", "v1", 10) if m.role != "user"]
    return replies[-1]


def guard_of(message: Message) -> Any:
    return (message.metadata or {}).get("guard")


def test_a_sane_reply_passes_untouched(
    served: tuple[openai.OpenAI, Services], fake_chat: FakeChat
) -> None:
    sdk, services = served
    fake_chat.enqueue(GOOD)
    assert ask(sdk) == GOOD
    assert logged_reply(services).metadata is None
    assert len(fake_chat.reply_token_limits) == 1  # asked once


@pytest.mark.parametrize("refused", [LOOP_REPLY, PORTUGUESE])
def test_a_refused_reply_is_asked_for_again_with_safer_settings(
    served: tuple[openai.OpenAI, Services], fake_chat: FakeChat, refused: str
) -> None:
    sdk, services = served
    fake_chat.enqueue(refused, GOOD)
    assert ask(sdk) == GOOD
    retry, _ = fake_chat.requests[1]
    assert "Write in English only." in retry[0]["content"]
    assert fake_chat.reply_token_limits[1] < fake_chat.reply_token_limits[0]
    reply = logged_reply(services)
    assert guard_of(reply) == "regenerated" and is_learnable(reply.metadata)


@pytest.mark.parametrize("looping", [True])
def test_a_looping_model_gets_the_fallback_and_is_never_learned_from(
    served: tuple[openai.OpenAI, Services],
) -> None:
    sdk, services = served
    assert ask(sdk) == FALLBACK_REPLY
    assert "".join(stream(sdk, "I am allergic to peanuts.")) == FALLBACK_REPLY
    # A stream's exchange is handed over after its last byte: wait for both to be learned.
    assert eventually(lambda: len(services.store.facts("lobug")) == 2, 30)
    log = services.store.recent_messages("lobug", "v1", 10)
    replies = [m for m in log if m.role == "assistant"]
    assert [m.content for m in replies] == [FALLBACK_REPLY, FALLBACK_REPLY]
    assert all(guard_of(m) == "fallback" and not is_learnable(m.metadata) for m in replies)
    facts = sorted(f.content.rstrip(".") for f in services.store.facts("lobug"))
    assert facts == [
        "The user is allergic to peanuts",
        "The user lives in Lisbon with the user's partner Joana",
    ]


def test_a_stream_refused_at_its_first_sentence_sends_the_second_try(
    served: tuple[openai.OpenAI, Services], fake_chat: FakeChat
) -> None:
    sdk, services = served
    fake_chat.enqueue(f"{PORTUGUESE} And more.", GOOD)
    assert "".join(stream(sdk)) == GOOD
    reply = logged_reply(services)
    assert (reply.content, guard_of(reply)) == (GOOD, "regenerated")
    assert fake_chat.abandoned_streams == 1  # the refused answer's model was stopped


def test_a_stream_cut_after_good_sentences_keeps_only_them(
    served: tuple[openai.OpenAI, Services], fake_chat: FakeChat
) -> None:
    sdk, services = served
    fake_chat.enqueue("That sounds lovely. I see. I see. I see. I see. Tell me more.")
    assert stream(sdk) == ["That sounds lovely. ", "I see. ", "I see. "]
    reply = logged_reply(services)
    assert reply.content == "That sounds lovely. I see. I see."
    assert reply.metadata == {"guard": "cut", "problem": "degenerate: a phrase repeated in a loop"}
    assert is_learnable(reply.metadata)


@pytest.mark.parametrize("looping", [True])
def test_a_guarded_stream_keeps_the_openai_format(
    served: tuple[openai.OpenAI, Services],
) -> None:
    sdk, _ = served
    body = {"model": "m", "messages": [{"role": "user", "content": SAID}], "stream": True}
    url = str(sdk.base_url).rstrip("/")
    with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=10) as response:
        events = [line for line in response.iter_lines() if line]
    assert all(line.startswith("data: ") for line in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "stop"}
    said = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert said == FALLBACK_REPLY


@pytest.mark.parametrize("looping", [True])
def test_a_client_that_hangs_up_after_the_fallback_leaves_it_marked(
    served: tuple[openai.OpenAI, Services],
) -> None:
    _, services = served
    proxy = MemoryProxy(services.store, services.memory, services.chat)
    said: ChatMessage = {"role": "user", "content": SAID}
    request = ProxyRequest("d", [said], SAID, max_tokens=64, temperature=0.0)
    user, messages = proxy.prepare(request)
    pieces = proxy.stream(request, user, messages, StreamedExchange())
    assert next(pieces) == FALLBACK_REPLY
    pieces.close()  # the client hung up
    reply = services.store.recent_messages("d", "v1", 10)[-1]
    assert reply.content == FALLBACK_REPLY and not is_learnable(reply.metadata)
