from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import ConfigError, Settings
from lobug.store.errors import EmbeddingMismatch
from lobug.store.sqlite.engine import SQLiteStore
from lobug.voice.pipeline import Speech
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS, unreachable
from tests.polling import memory_work_done


def say(client: TestClient, text: str, device: str | None = None) -> dict[str, str]:
    headers = {"X-Device-Id": device} if device else {}
    response = client.post("/chat/text", json={"text": text}, headers=headers)
    assert response.status_code == 200, response.text
    memory_work_done(client)  # what the turn taught reaches the next one
    body: dict[str, str] = response.json()
    return body


def last_system_prompt(chat: FakeChat) -> str:
    return chat.chat_requests()[-1][0]["content"]


def test_health_follows_the_contract_and_adds_details(client: TestClient) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok"
    assert body["ollama"] is True
    assert isinstance(body["timestamp"], float)
    assert body["llm"] == {"backend": "fake", "model": "fake-chat", "reachable": True}
    assert body["embedding"] == {"backend": "fake", "model": "fake-embed", "dimension": 64}
    assert body["db_path"].endswith("memory.db")
    assert body["ready"] is True and body["version"]
    assert body["memory"]["learning_parked"] == 0


def test_health_is_ready_only_while_the_models_are_loaded_and_answer(
    client: TestClient, fake_chat: FakeChat
) -> None:
    """`ready` was a constant true, and `ollama` true with no model answering."""
    svc = client.app.state.services  # type: ignore[attr-defined]
    loaded = threading.Event()

    def slow_stt() -> FakeSTT:
        loaded.wait(10)
        return FakeSTT()

    svc.speech = svc.voice.speech = Speech(slow_stt, FakeTTS)
    loading = threading.Thread(target=svc.speech.load)
    loading.start()
    try:
        body = client.get("/health").json()
        assert (body["ready"], body["speech"]["loading"], body["ollama"]) == (False, True, True)
    finally:
        loaded.set()
        loading.join(10)
    assert client.get("/health").json()["ready"] is True

    fake_chat.fail_with = unreachable()
    svc._reachable = (0.0, True)  # the probe's answer from before has expired
    answer = client.get("/health")
    body = answer.json()
    assert answer.status_code == 200 and body["status"] == "ok"  # the device contract
    assert (body["ollama"], body["llm"]["reachable"], body["ready"]) == (False, False, False)


def test_chat_text_answers_and_logs_both_messages(
    client: TestClient, fake_chat: FakeChat, settings: Settings
) -> None:
    fake_chat.enqueue("Hello Alex!")
    assert say(client, "My name is Alex") == {"response": "Hello Alex!", "action": "respond"}
    store = SQLiteStore(settings.db_path)
    logged = [(m.role, m.content) for m in store.recent_messages("lobug", "default", 20)]
    store.close()
    assert logged == [("user", "My name is Alex"), ("assistant", "Hello Alex!")]


def test_stage_timings_are_reported(client: TestClient) -> None:
    response = client.post("/chat/text", json={"text": "hi"})
    stages = [part.split(";")[0] for part in response.headers["server-timing"].split(", ")]
    assert {"persist_user", "retrieve", "llm", "persist_reply"} <= set(stages)


def test_working_memory_carries_the_conversation(client: TestClient, fake_chat: FakeChat) -> None:
    fake_chat.enqueue("Nice to meet you.")
    say(client, "I am Alex")
    say(client, "What did I just say?")
    sent = fake_chat.chat_requests()[-1]
    assert [m["content"] for m in sent[1:]] == [
        "I am Alex",
        "Nice to meet you.",
        "What did I just say?",
    ]


def test_after_a_text_turn_the_model_reads_the_next_prompt_up_to_the_persons_words(
    client: TestClient, fake_chat: FakeChat
) -> None:
    say(client, "Hello")
    assert fake_chat.prefilled == []  # a model without a prompt cache is not asked to
    fake_chat.caches_prompt_prefix = True
    fake_chat.enqueue("Nice to meet you.")
    say(client, "I am Alex")
    primed = fake_chat.prefilled[-1]
    assert [m["content"] for m in primed[-2:]] == ["I am Alex", "Nice to meet you."]
    say(client, "What did I just say?")
    asked = fake_chat.chat_requests()[-1]
    assert asked[: len(primed)] == primed  # only the notes and the words are left to read
    assert asked[-1] == {"role": "user", "content": "What did I just say?"}


def test_a_failed_read_ahead_fails_no_turn(client: TestClient, fake_chat: FakeChat) -> None:
    fake_chat.caches_prompt_prefix = True
    fake_chat.prefill = unreachable_prefill  # type: ignore[method-assign]
    for said, answer in (("I am Alex", "Hi Alex."), ("Good morning", "Good morning, Alex.")):
        fake_chat.enqueue(answer)  # each turn's own (fact extraction asks the model too)
        assert say(client, said)["response"] == answer


def unreachable_prefill(messages: object) -> None:
    raise unreachable()


def test_learned_facts_reach_later_prompts(client: TestClient, fake_chat: FakeChat) -> None:
    fake_chat.enqueue(
        "Cool!", json.dumps({"facts": [{"fact": "The user works at NASA", "type": "identity"}]})
    )
    say(client, "I work at NASA")
    say(client, "Where does the user work?")
    assert '\n- "The user works at NASA"' in last_system_prompt(fake_chat)


def test_devices_have_their_own_working_memory_but_share_facts(
    client: TestClient, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue(
        "Noted.", json.dumps({"facts": [{"fact": "The user plays the cello", "type": "identity"}]})
    )
    say(client, "I play the cello", device="kitchen")
    say(client, "Does the user play the cello?", device="desk")
    sent = fake_chat.chat_requests()[-1]
    assert [m["content"] for m in sent[1:]] == ["Does the user play the cello?"]
    assert "The user plays the cello" in sent[0]["content"]


def test_devices_mapped_to_other_agents_do_not_share_facts(
    settings: Settings, backends: Backends, fake_chat: FakeChat
) -> None:
    mapped = settings.with_overrides(device_agents={"office": "work"})
    with TestClient(create_app(mapped, backends)) as client:
        fake_chat.enqueue(
            "Ok.", json.dumps({"facts": [{"fact": "The user hates mornings", "type": "identity"}]})
        )
        say(client, "I hate mornings", device="office")
        say(client, "Does the user hate mornings?", device="home")
        assert "hates mornings" not in last_system_prompt(fake_chat)


def test_sensor_state_is_per_device_and_reaches_the_prompt(
    client: TestClient, fake_chat: FakeChat
) -> None:
    reading = {
        "orientation": "face_down",
        "is_moving": False,
        "is_shaking": True,
        "tap_detected": False,
        "accel_x": 0.1,
        "accel_y": -0.2,
        "accel_z": 9.8,
        "gyro_x": 0,
        "gyro_y": 0,
        "gyro_z": 1,
    }
    response = client.post("/context/sensors", json=reading, headers={"X-Device-Id": "a"})
    assert response.json() == {"status": "ok"}
    assert client.post("/context/sensors", json={}).status_code == 200
    say(client, "hi", device="a")
    assert "Device orientation: face_down" in last_system_prompt(fake_chat)
    assert "being shaken" in last_system_prompt(fake_chat)
    say(client, "hi", device="b")
    assert "physical state" not in last_system_prompt(fake_chat)


def test_model_prefix_never_reaches_the_device(client: TestClient, fake_chat: FakeChat) -> None:
    fake_chat.enqueue("[REACT] *blinks*")
    assert say(client, "boop") == {"response": "*blinks*", "action": "react"}
    fake_chat.enqueue("[IGNORE]")
    assert say(client, "mmm") == {"response": "", "action": "ignore"}
    assert len(fake_chat.extraction_requests()) == 0  # no facts from unanswered turns


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        (b"{not json", 400, "invalid_json"),
        (b"[1, 2]", 422, "invalid_request"),
        (b"{}", 422, "missing_text"),
        (b'{"text": 42}', 422, "invalid_text"),
        (b'{"text": null}', 422, "invalid_text"),
        (b'{"text": "   "}', 422, "empty_text"),
        (json.dumps({"text": "x" * 4001}).encode(), 413, "text_too_long"),
        (b'{"text": "' + b"x" * 1_100_000 + b'"}', 413, "payload_too_large"),  # > max_body_bytes
        (b"\xff\xfe\x00", 400, "invalid_json"),
    ],
)
def test_bad_chat_input_gets_a_clear_4xx(
    client: TestClient, fake_chat: FakeChat, body: bytes, status: int, error: str
) -> None:
    response = client.post("/chat/text", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == status
    assert response.json()["error"] == error
    assert fake_chat.requests == []


@pytest.mark.parametrize(
    "body",
    [
        {"is_moving": "yes"},
        {"accel_x": "fast"},
        {"accel_x": 1e400},
        {"gyro_z": True},
        {"orientation": 3},
        {"accel_y": 10**400},
    ],
)
def test_bad_sensor_input_gets_a_422(client: TestClient, body: dict[str, object]) -> None:
    response = client.post(
        "/context/sensors",
        content=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_sensors"


def test_invalid_device_id_and_unknown_paths_are_json_errors(client: TestClient) -> None:
    response = client.post("/chat/text", json={"text": "hi"}, headers={"X-Device-Id": "a b/c"})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_device_id")
    response = client.get("/nope")
    assert (response.status_code, response.json()["error"]) == (404, "not_found")
    response = client.get("/chat/text")
    assert (response.status_code, response.json()["error"]) == (405, "method_not_allowed")


@pytest.mark.parametrize("device", ["api", "v1"])
def test_device_ids_of_internal_sources_are_refused(client: TestClient, device: str) -> None:
    """`api` and `v1` name the memory API and the proxy in the log: a device called so would
    warm its working memory from their messages."""
    response = client.get("/context/working-memory", headers={"X-Device-Id": device})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_device_id")


def test_unreachable_model_gives_503_and_keeps_the_message(
    client: TestClient, fake_chat: FakeChat, settings: Settings
) -> None:
    fake_chat.fail_with = unreachable()
    response = client.post("/chat/text", json={"text": "are you there?"})
    assert response.status_code == 503
    assert response.json()["error"] == "llm_unavailable"
    assert client.get("/health").json()["status"] == "ok"
    store = SQLiteStore(settings.db_path)
    assert [m.content for m in store.recent_messages("lobug", "default", 5)] == ["are you there?"]
    store.close()


def test_conversation_survives_a_restart(settings: Settings, fake_embedder: FakeEmbedder) -> None:
    first_chat = FakeChat(default="Hi Alex.")
    with TestClient(create_app(settings, Backends(first_chat, fake_embedder))) as client:
        say(client, "My name is Alex")
    second_chat = FakeChat(default="You are Alex.")
    with TestClient(create_app(settings, Backends(second_chat, FakeEmbedder()))) as client:
        say(client, "Who am I?")
    sent = second_chat.chat_requests()[0]
    assert [m["content"] for m in sent[1:]] == ["My name is Alex", "Hi Alex.", "Who am I?"]


def test_working_memory_shows_at_least_the_last_twenty_messages(
    client: TestClient, fake_chat: FakeChat
) -> None:
    shown = []
    for i in range(20):
        say(client, f"message {i}")
        shown.append(len(fake_chat.chat_requests()[-1]) - 1)  # less the system prompt
    # Older messages leave in blocks of ten, so the prompt's start repeats for five turns.
    assert shown == [2 * i + 1 for i in range(10)] + [21, 23, 25, 27, 29] * 2
    assert fake_chat.chat_requests()[-1][-1]["content"] == "message 19"
    seen = client.get("/context/working-memory").json()["messages"]
    assert len(seen) == 20 and seen[-1]["role"] == "assistant"


def test_concurrent_devices_are_all_answered(client: TestClient) -> None:
    with ThreadPoolExecutor(4) as pool:
        bodies = list(pool.map(lambda i: say(client, f"hi {i}", device=f"d{i % 4}"), range(12)))
    assert all(body["action"] == "respond" for body in bodies)


def test_tokens_guard_everything_but_health(settings: Settings, backends: Backends) -> None:
    guarded = settings.with_overrides(device_tokens=("s3cret-Tok3n-Mw8q", "other-token-Fh6Lp"))
    with TestClient(create_app(guarded, backends)) as client:
        assert client.get("/health").status_code == 200
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "s3cret-Tok3n-Mw8q"},
            {"Authorization": "Bearer s3crét".encode("latin-1")},
        ):
            response = client.post("/chat/text", json={"text": "hi"}, headers=headers)
            assert response.status_code == 401
            assert response.json()["error"] == "unauthorized"
            assert client.post("/context/sensors", json={}, headers=headers).status_code == 401
        ok = client.post(
            "/chat/text", json={"text": "hi"}, headers={"Authorization": "Bearer s3cret-Tok3n-Mw8q"}
        )
        assert ok.status_code == 200


def test_exposed_server_without_tokens_refuses_to_start(
    settings: Settings, backends: Backends
) -> None:
    with pytest.raises(ConfigError):
        create_app(settings.with_overrides(host="0.0.0.0"), backends)


def test_other_embedding_model_stops_start_up(settings: Settings, fake_chat: FakeChat) -> None:
    with TestClient(create_app(settings, Backends(fake_chat, FakeEmbedder(dim=64)))):
        pass
    app = create_app(settings, Backends(fake_chat, FakeEmbedder(dim=32)))
    with pytest.raises(EmbeddingMismatch, match="lobug reindex"), TestClient(app):
        pass


def test_unreachable_ollama_answers_503_quickly(settings: Settings) -> None:
    from lobug.backends.remote import OllamaChat
    from tests.e2e.server import free_port

    ollama = OllamaChat(
        f"http://127.0.0.1:{free_port()}", "llama3.2", timeout_s=5, connect_timeout_s=1
    )
    with TestClient(create_app(settings, Backends(ollama, FakeEmbedder()))) as client:
        response = client.post("/chat/text", json={"text": "hello?"})
        assert response.status_code == 503
        assert response.json()["error"] == "llm_unavailable"
        health = client.get("/health").json()
        assert (health["status"], health["ollama"]) == ("ok", False)


def test_working_memory_endpoint_shows_messages_and_sensors(client: TestClient) -> None:
    client.post("/context/sensors", json={"orientation": "upright"}, headers={"X-Device-Id": "w"})
    say(client, "hello", device="w")
    body = client.get("/context/working-memory", headers={"X-Device-Id": "w"}).json()
    assert body["device_id"] == "w" and body["agent"] == "lobug"
    assert [m["content"] for m in body["messages"]] == ["hello", "Okay."]
    assert body["sensors"]["orientation"] == "upright"


def test_health_counts_memory(client: TestClient, fake_chat: FakeChat) -> None:
    fake_chat.enqueue(
        "Ok.", json.dumps({"facts": [{"fact": "The user likes jazz", "type": "preference"}]})
    )
    say(client, "I like jazz")
    memory = client.get("/health").json()["memory"]
    assert memory == {
        "messages": 2,
        "facts": 1,
        "summaries": 0,
        "pending_learning": 0,
        "learning_queue": 0,
        "learning_parked": 0,
    }


def test_eight_devices_at_once_never_cross(settings: Settings, fake_embedder: FakeEmbedder) -> None:
    def echo(messages: object, schema: object) -> str:
        assert isinstance(messages, list)
        return '{"facts": []}' if schema else f"echo: {messages[-1]['content']}"

    chat = FakeChat(responder=echo)
    with TestClient(create_app(settings, Backends(chat, fake_embedder))) as client:

        def talk(device: int) -> None:
            for turn in range(5):
                said = f"device {device} turn {turn}"
                reply = say(client, said, device=f"dev{device}")
                assert reply["response"] == f"echo: {said}"

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(talk, range(8)))
        for device in range(8):
            messages = client.get(
                "/context/working-memory", headers={"X-Device-Id": f"dev{device}"}
            ).json()["messages"]
            assert len(messages) == 10
            assert all(f"device {device} " in m["content"] for m in messages)
