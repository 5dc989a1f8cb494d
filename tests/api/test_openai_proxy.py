"""The OpenAI-compatible memory proxy, driven by the official `openai` client."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.backends.base import BackendError
from lobug.config import Settings
from lobug.memory.work_queue import StreamedExchange
from lobug.store.sqlite.engine import SQLiteStore
from lobug.turn.proxy import MemoryProxy, ProxyRequest
from tests.fakes import FakeChat, FakeEmbedder, unreachable
from tests.live import LiveServer
from tests.polling import eventually, memory_work_done


@pytest.fixture
def llm(client: TestClient) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        base_url="http://testserver/v1", api_key="unused", http_client=client, max_retries=0
    ) as sdk:
        yield sdk


def facts(*contents: str) -> str:
    return json.dumps({"facts": [{"fact": c, "type": "identity"} for c in contents]})


def test_models_lists_the_chat_model(llm: openai.OpenAI) -> None:
    assert [m.id for m in llm.models.list()] == ["fake-chat"]


def test_reply_comes_from_the_backend_and_the_exchange_is_remembered(
    llm: openai.OpenAI, client: TestClient, fake_chat: FakeChat, settings: Settings
) -> None:
    fake_chat.enqueue("Hello Sam!", facts("The user's name is Sam"))
    reply = llm.chat.completions.create(
        model="anything", messages=[{"role": "user", "content": "My name is Sam"}], user="sam"
    )
    memory_work_done(client)
    assert reply.choices[0].message.content == "Hello Sam!"
    store = SQLiteStore(settings.db_path)
    logged = [(m.role, m.content) for m in store.recent_messages("sam", "v1", 10)]
    learned = [f.content for f in store.facts("sam")]
    store.close()
    assert logged == [("user", "My name is Sam"), ("assistant", "Hello Sam!")]
    assert learned == ["The user's name is Sam"]


def test_memory_is_injected_after_the_callers_system_message(
    llm: openai.OpenAI, client: TestClient, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue("Noted.", facts("The user plays the cello"))
    llm.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "I play the cello"}], user="ana"
    )
    memory_work_done(client)
    llm.chat.completions.create(
        model="m",
        messages=[
            {"role": "system", "content": "You are a music teacher."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Does the user play the cello?"}],
            },
        ],
        extra_headers={"X-Agent": "ana"},
    )
    memory_work_done(client)
    sent, _ = fake_chat.requests[-2]  # the reply request (extraction follows it)
    assert [m["role"] for m in sent] == ["system", "system", "user"]
    assert sent[0]["content"] == "You are a music teacher."
    assert "The user plays the cello" in sent[1]["content"]
    assert sent[2]["content"] == "Does the user play the cello?"


def test_agents_are_isolated(llm: openai.OpenAI, client: TestClient, fake_chat: FakeChat) -> None:
    fake_chat.enqueue("Ok.", facts("The user hates mornings"))
    llm.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "I hate mornings"}], user="a"
    )
    memory_work_done(client)
    llm.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Do I hate mornings?"}], user="b"
    )
    memory_work_done(client)
    sent, _ = fake_chat.requests[-2]
    assert all("mornings" not in m["content"] for m in sent if m["role"] == "system")


def test_streaming_passes_sentences_and_remembers_the_whole_reply(
    llm: openai.OpenAI, fake_chat: FakeChat, settings: Settings
) -> None:
    fake_chat.enqueue("One, two. Three!\nFour.")
    stream = llm.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Count please"}], stream=True, user="c"
    )
    pieces = [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
    assert [p for p in pieces if p] == ["One, two. ", "Three!\n", "Four."]
    store = SQLiteStore(settings.db_path)
    assert [m.content for m in store.recent_messages("c", "v1", 10)] == [
        "Count please",
        "One, two. Three!\nFour.",
    ]
    store.close()


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"model": "m"}, "invalid_request"),
        ({"model": "m", "messages": []}, "invalid_request"),
        ({"model": "m", "messages": [{"role": "wizard", "content": "x"}]}, "invalid_request"),
        ({"model": "m", "messages": [{"role": "system", "content": "x"}]}, "invalid_request"),
        ({"messages": [{"role": "user", "content": 5}]}, "invalid_request"),
        (
            # the last user turn holds no text: an earlier one is never taken (and stored) for it
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": "y"},
                    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "z"}}]},
                ]
            },
            "invalid_request",
        ),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "invalid_request"),
        ({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"}, "invalid_request"),
        ({"messages": [{"role": "user", "content": "x"}], "user": "a b/c"}, "invalid_agent"),
        ({"messages": [{"role": "user", "content": "x"}], "user": "alex\n"}, "invalid_agent"),
    ],
)
def test_bad_requests_get_422(client: TestClient, body: dict[str, object], error: str) -> None:
    response = client.post("/v1/chat/completions", json=body)
    assert (response.status_code, response.json()["error"]) == (422, error)


def test_unreachable_backend_is_a_503(llm: openai.OpenAI, fake_chat: FakeChat) -> None:
    fake_chat.fail_with = unreachable()
    with pytest.raises(openai.InternalServerError) as caught:
        llm.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 503


def test_tokens_guard_the_proxy(settings: Settings, backends: object) -> None:
    assert isinstance(backends, Backends)
    guarded = settings.with_overrides(device_tokens=("t0k-pr0xy-T0ken-Aq",))
    with TestClient(create_app(guarded, backends)) as client:
        assert client.get("/v1/models").status_code == 401
        ok = client.get("/v1/models", headers={"Authorization": "Bearer t0k-pr0xy-T0ken-Aq"})
        assert ok.status_code == 200


def test_a_stream_the_client_abandons_keeps_what_was_sent_for_later_learning(
    client: TestClient, fake_chat: FakeChat
) -> None:
    services = client.app.state.services  # type: ignore[attr-defined]
    proxy = MemoryProxy(services.store, services.memory, fake_chat)
    request = ProxyRequest(
        agent="d",
        messages=[{"role": "user", "content": "Tell me a story"}],
        query="Tell me a story",
        max_tokens=64,
        temperature=0.0,
    )
    fake_chat.enqueue("Once upon a time. There was a robot.")
    user, messages = proxy.prepare(request)
    stored = StreamedExchange()
    pieces = proxy.stream(request, user, messages, stored)
    assert next(pieces) == "Once upon a time. "
    pieces.close()  # the client hung up
    assert fake_chat.abandoned_streams == 1
    store = services.store
    assert [m.content for m in store.recent_messages("d", "v1", 10)] == [
        "Tell me a story",
        "Once upon a time.",
    ]
    assert stored.wait(timeout_s=0) is None  # nothing handed over now:
    assert store.count_queued_exchanges() == 1  # learned from by the next maintenance pass
    assert services.memory_work.pending == 0


def test_a_streamed_reply_ends_while_its_memory_work_is_still_running(tmp_path: Path) -> None:
    """Over real HTTP: the client gets `[DONE]` and the response completes while a slow fact
    extraction for that exchange is still held; the work then finishes on its own."""
    chat = FakeChat()
    chat.extraction_gate = threading.Event()
    chat.enqueue("One two three.", facts("The user counts"))
    settings = Settings(db_path=tmp_path / "memory.db")
    server = LiveServer(create_app(settings, Backends(chat, FakeEmbedder())))
    body = {"model": "m", "messages": [{"role": "user", "content": "Count"}], "stream": True}
    try:
        with httpx.stream(
            "POST", f"{server.url}/v1/chat/completions", json=body, timeout=5
        ) as response:
            lines = [line for line in response.iter_lines() if line]
        assert lines[-1] == "data: [DONE]"
        assert chat.extraction_started.wait(10), "the memory work never started"
        health = httpx.get(f"{server.url}/health", timeout=5).json()
        assert health["memory"]["pending_learning"] == 1  # still held
        chat.extraction_gate.set()
        assert eventually(
            lambda: httpx.get(f"{server.url}/health").json()["memory"]["pending_learning"] == 0
        )
    finally:
        chat.extraction_gate.set()
        server.stop()
    store = SQLiteStore(settings.db_path)
    learned = [f.content for f in store.facts("lobug")]
    store.close()
    assert learned == ["The user counts"]


class FailingMidStream(FakeChat):
    """Writes one sentence of its reply and a word of the next, then fails."""

    def stream(self, messages, *, max_tokens, temperature=0.7, abandoned=None):  # type: ignore[no-untyped-def, override]
        yield "Hello. "
        yield "How"
        raise BackendError("the model crashed")


def test_a_stream_that_fails_before_its_first_piece_is_a_503(
    client: TestClient, fake_chat: FakeChat, settings: Settings
) -> None:
    fake_chat.fail_with = unreachable()
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    response = client.post("/v1/chat/completions", json=body)
    assert (response.status_code, response.json()["error"]) == (503, "llm_unavailable")
    store = SQLiteStore(settings.db_path)
    logged = [(m.role, m.content) for m in store.recent_messages("lobug", "v1", 5)]
    store.close()
    assert logged == [("user", "hi")]  # the question is kept, like any failed reply


def test_a_stream_that_fails_midway_ends_with_an_error_event_not_done(
    settings: Settings, fake_embedder: FakeEmbedder
) -> None:
    backends = Backends(FailingMidStream(), fake_embedder, None, None)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with TestClient(create_app(settings, backends)) as client:
        response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200
    events = [line for line in response.text.splitlines() if line.startswith("data: ")]
    assert json.loads(events[-1][6:])["error"]["type"] == "server_error"
    assert "data: [DONE]" not in events and '"finish_reason": "stop"' not in response.text
