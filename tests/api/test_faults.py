"""Faults in the parts around the server: each gives a clear error or a degraded answer, the
server stays up, and nothing stored is lost."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends, build_stt
from lobug.backends.base import ChatMessage, JsonSchema
from lobug.backends.remote import OpenAIChat
from lobug.config import Settings
from lobug.voice.pipeline import WARM_UP_TEXT, Speech
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS, unreachable
from tests.polling import memory_work_done


def say(client: TestClient, text: str, device: str = "default") -> tuple[int, dict[str, object]]:
    response = client.post("/chat/text", json={"text": text}, headers={"X-Device-Id": device})
    return response.status_code, response.json()


def logged_texts(client: TestClient, device: str = "default") -> list[str]:
    body = client.get("/context/working-memory", headers={"X-Device-Id": device}).json()
    return [m["content"] for m in body["messages"]]


def services(client: TestClient) -> object:
    return client.app.state.services  # type: ignore[attr-defined]


# ---------------------------------------------------------------- storage


def test_a_full_disk_is_a_503_and_what_was_stored_survives(client: TestClient) -> None:
    assert say(client, "remember the blue door")[0] == 200
    conn = services(client).store._conn  # type: ignore[attr-defined]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    acknowledged = []
    for i in range(40):
        status, body = say(client, f"note {i} " + "x" * 3900)
        if status != 200:
            break
        acknowledged.append(f"note {i} " + "x" * 3900)
    assert status == 503 and body["error"] == "storage_unavailable"
    assert "full" in str(body["detail"])
    assert client.get("/health").status_code == 200
    conn.execute("PRAGMA max_page_count = 1073741823")
    assert say(client, "and the red window")[0] == 200
    store = services(client).store  # type: ignore[attr-defined]
    logged = [
        m.content for m in store.recent_messages("lobug", "default", 1000) if m.role == "user"
    ]
    expected = ["remember the blue door", *acknowledged, "and the red window"]
    assert [t for t in logged if t in expected] == expected
    refused = f"note {len(acknowledged)} " + "x" * 3900
    assert [t for t in logged if t not in expected] in ([], [refused])


def test_a_read_only_database_is_a_503_on_every_write_path(client: TestClient) -> None:
    assert client.post("/memory/agents", json={"name": "a"}).status_code == 200
    conn = services(client).store._conn  # type: ignore[attr-defined]
    conn.execute("PRAGMA query_only = ON")
    writes = [
        client.post("/chat/text", json={"text": "hello there"}),
        client.post("/memory/agents", json={"name": "b"}),
        client.post("/memory/messages", json={"agent_name": "a", "role": "user", "content": "hi"}),
        client.post("/memory/memory-blocks", json={"agent_name": "a", "label": "l", "value": "v"}),
        client.post(
            "/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        ),
    ]
    for response in writes:
        assert response.status_code == 503, response.text
        assert response.json()["error"] == "storage_unavailable"
    assert client.get("/memory/agents/a").status_code == 200
    conn.execute("PRAGMA query_only = OFF")
    assert say(client, "hello again")[0] == 200


# ---------------------------------------------------------------- chat backend


class SlowHandler(BaseHTTPRequestHandler):
    delay_s = 5.0

    def do_POST(self) -> None:
        time.sleep(self.delay_s)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_chat_backend_slower_than_the_timeout_is_a_503(
    settings: Settings, slow_server: str
) -> None:
    chat = OpenAIChat(
        "slow", base_url=slow_server, api_key=None, timeout_s=1.0, connect_timeout_s=0.5
    )
    with TestClient(create_app(settings, Backends(chat, FakeEmbedder()))) as client:
        started = time.monotonic()
        status, body = say(client, "are you there?")
        waited = time.monotonic() - started
        assert status == 503 and body["error"] == "llm_unavailable"
        assert waited < SlowHandler.delay_s
        assert logged_texts(client) == ["are you there?"]
    chat.close()


def test_garbage_from_extraction_never_breaks_a_turn_and_is_kept_for_a_retry(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Garbage was read as "no facts" and its queue row deleted; now only a reply that says
    it found nothing (readable, if malformed: `{"fact": 7}` is no fact) leaves the queue."""
    outputs = iter(["{not json", '{"facts": [{"fact": 7}]}', "\x00\xff]]", '{"facts": "x"}'])

    def responder(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
        return next(outputs, "[]") if schema is not None else "Sure."

    chat = FakeChat(responder=responder)
    caplog.set_level(logging.INFO)
    with TestClient(create_app(settings, Backends(chat, FakeEmbedder()))) as client:
        for i in range(4):
            assert say(client, f"I like tea number {i}")[0] == 200
            memory_work_done(client)
        memory = client.get("/health").json()["memory"]
        assert (memory["facts"], memory["learning_queue"], memory["learning_parked"]) == (0, 3, 0)
        store = services(client).store  # type: ignore[attr-defined]
        waiting = store.queued_exchanges(10, float("inf"))
        said = [q.user.content for q in waiting]
        assert said == ["I like tea number 0", "I like tea number 2", "I like tea number 3"]
        assert all(q.attempts == 1 for q in waiting)
    lines = [r.getMessage() for r in caplog.records if "memory: +" in r.getMessage()]
    assert len(lines) == 4 and sum("extract_facts" in line for line in lines) == 3


def test_a_failing_extraction_is_logged_and_kept_for_a_retry(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    def responder(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
        if schema is not None:
            raise unreachable()
        return "Noted."

    caplog.set_level(logging.INFO)
    with TestClient(
        create_app(settings, Backends(FakeChat(responder=responder), FakeEmbedder()))
    ) as client:
        assert say(client, "My name is Alex and I work at NASA")[0] == 200
        assert say(client, "hello again")[0] == 200
        assert client.get("/health").json()["memory"]["learning_queue"] == 2
    lines = [r.getMessage() for r in caplog.records if "memory: +" in r.getMessage()]
    assert len(lines) == 2 and all("extract_facts" in line for line in lines)


# ---------------------------------------------------------------- embeddings


def test_without_embeddings_everything_still_answers(
    settings: Settings, fake_chat: FakeChat
) -> None:
    embedder = FakeEmbedder()
    with TestClient(create_app(settings, Backends(fake_chat, embedder))) as client:
        client.post("/memory/agents", json={"name": "a"})
        embedder.fail_with = unreachable()
        stored = client.post(
            "/memory/messages", json={"agent_name": "a", "role": "user", "content": "I own a kayak"}
        )
        assert stored.status_code == 200 and stored.headers["X-Lobug-Embedded"] == "0"
        found = client.post("/memory/messages/search", json={"agent_name": "a", "query": "kayak"})
        assert found.status_code == 200 and found.headers["X-Lobug-Search-Mode"] == "keyword"
        assert [m["content"] for m in found.json()] == ["I own a kayak"]
        context = client.post("/memory/context/a", json={"query": "kayak"}).json()
        assert context["search_mode"] == "keyword"
        assert say(client, "what do I own?")[0] == 200
        embedder.fail_with = None
        again = client.post(
            "/memory/messages", json={"agent_name": "a", "role": "user", "content": "and a tent"}
        )
        assert again.headers["X-Lobug-Embedded"] == "1"
        store = client.app.state.services.store  # type: ignore[attr-defined]
        assert [m.content for m in store.messages_to_embed(10)] == ["I own a kayak"]
        repaired = client.app.state.maintenance.run_once()  # type: ignore[attr-defined]
        assert repaired["re-embedded messages"] == 1
        assert store.messages_to_embed(10) == []


# ---------------------------------------------------------------- speech


def test_speech_is_warmed_up_before_it_is_ready() -> None:
    stt, tts = FakeSTT(), FakeTTS()
    speech = Speech(lambda: stt, lambda: tts)
    speech.load()
    assert speech.ready
    assert tts.spoken == [WARM_UP_TEXT]
    assert stt.calls == 1 and stt.heard_samples[0] > 0  # what was spoken, at 16 kHz


def test_a_missing_speech_model_is_reported_not_fatal(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "m.db", stt_model=str(tmp_path / "no-such-model"))
    speech = Speech(lambda: build_stt(settings), FakeTTS)
    speech.load()
    assert not speech.ready and not speech.loading
    assert speech.error is not None and "failed to load" in speech.error
    with pytest.raises(Exception, match="failed to load"):
        speech.require()
