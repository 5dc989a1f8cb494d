"""A xiaozhi connection through the real app (Starlette's test client) with fake models:
the hello, a manual turn in each binary protocol version, abort, tokens, bad input."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.xiaozhi import frames
from lobug.xiaozhi.opus import OpusDecoder, OpusEncoder
from lobug.xiaozhi.routes import StarletteLink
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.polling import eventually

MAC = "AA:BB:CC:00:00:01"
DEVICE_TOKEN = "dev-token-9fK2mQ7xLp4Z"
HELLO = {
    "type": "hello",
    "version": 1,
    "features": {"mcp": True},
    "transport": "websocket",
    "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
}


def headers(version: int = 1, **more: str) -> dict[str, str]:
    return {"Device-Id": MAC, "Client-Id": "c1", "Protocol-Version": str(version), **more}


def tone_frames(seconds: float) -> list[bytes]:
    count = int(16000 * seconds)
    tone = (np.sin(2 * np.pi * 300 * np.arange(count) / 16000) * 8000).astype(np.int16)
    encoder = OpusEncoder(16000)
    return encoder.encode(tone) + encoder.flush()


def greet(ws: Any) -> dict[str, Any]:
    ws.send_text(json.dumps(HELLO))
    hello: dict[str, Any] = ws.receive_json()
    mcp = [ws.receive_json()["payload"]["method"] for _ in range(2)]
    assert mcp == ["initialize", "tools/list"]
    return hello


def until_tts_stop(ws: Any, version: int) -> tuple[list[dict[str, Any]], list[bytes]]:
    messages, audio = [], []
    while True:
        message = ws.receive()
        if message.get("bytes") is not None:
            audio.append(frames.unpack(version, message["bytes"]).payload)
            continue
        body = json.loads(message["text"])
        messages.append(body)
        if body["type"] == "tts" and body["state"] == "stop":
            return messages, audio


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_manual_turn_is_heard_answered_spoken_and_stored(
    app_client: TestClient, fake_chat: FakeChat, version: int
) -> None:
    fake_chat.enqueue("It is noon. Time for lunch!")
    with app_client.websocket_connect("/xiaozhi/v1/", headers=headers(version)) as ws:
        hello = greet(ws)
        assert hello["transport"] == "websocket" and hello["audio_params"]["sample_rate"] == 24000
        session = hello["session_id"]
        ws.send_text(
            json.dumps(
                {"session_id": session, "type": "listen", "state": "start", "mode": "manual"}
            )
        )
        for packet in tone_frames(1.2):
            ws.send_bytes(frames.pack(version, packet))
        ws.send_text(json.dumps({"session_id": session, "type": "listen", "state": "stop"}))
        messages, audio = until_tts_stop(ws, version)
    kinds = [(m["type"], m.get("state")) for m in messages]
    assert kinds[:3] == [("stt", None), ("llm", None), ("tts", "start")]
    assert messages[0]["text"] == "What time is it now?"
    said = [m["text"] for m in messages if m.get("state") == "sentence_start"]
    assert " ".join(said) == "It is noon. Time for lunch!"
    decoder = OpusDecoder(24000)
    pcm = np.concatenate([decoder.decode(packet) for packet in audio])
    assert len(pcm) / 24000 > 0.5 and np.abs(pcm).max() > 2000
    log = app_client.get("/memory/messages/lobug").json()
    stored = [(m["role"], m["content"]) for m in log if m["device_id"] == MAC.lower()]
    assert ("assistant", "It is noon. Time for lunch!") in stored


def test_abort_stops_the_answer_and_stores_what_was_said(
    app_client: TestClient, fake_chat: FakeChat
) -> None:
    long = " ".join(f"Sentence number {n} of a long story goes on here." for n in range(12))
    fake_chat.enqueue(long)
    with app_client.websocket_connect("/xiaozhi/v1/", headers=headers()) as ws:
        session = greet(ws)["session_id"]
        ws.send_text(
            json.dumps(
                {
                    "session_id": session,
                    "type": "listen",
                    "state": "detect",
                    "text": "Tell me a story",
                }
            )
        )
        first = ws.receive_json()
        while first.get("state") != "sentence_start":
            first = ws.receive_json()
        ws.send_text(json.dumps({"session_id": session, "type": "abort"}))
        aborted = time.monotonic()
        messages, _ = until_tts_stop(ws, 1)
        assert time.monotonic() - aborted < 5
    said = [first["text"]] + [m["text"] for m in messages if m.get("state") == "sentence_start"]
    assert len(said) < 12
    log = app_client.get("/memory/messages/lobug").json()
    answer = next(m for m in log if m["role"] == "assistant" and m["device_id"] == MAC.lower())
    assert answer["content"] == " ".join(said)
    assert answer["metadata"] == {"guard": "cut", "problem": "interrupted"}


def test_abort_stops_the_model_at_once_not_after_the_sentence_it_writes(
    app_client: TestClient, fake_chat: FakeChat
) -> None:
    # then a piece every 0.2 s: the next sentence (cut at 240 characters) would take 7 s
    fake_chat.enqueue("Hello there. " + "and on " * 200)
    fake_chat.piece_delay_s = 0.2
    with app_client.websocket_connect("/xiaozhi/v1/", headers=headers()) as ws:
        session = greet(ws)["session_id"]
        ws.send_text(
            json.dumps({"session_id": session, "type": "listen", "state": "detect", "text": "Hi"})
        )
        while ws.receive_json().get("state") != "sentence_start":
            pass
        ws.send_text(json.dumps({"session_id": session, "type": "abort"}))
        until_tts_stop(ws, 1)

        def stored() -> list[dict[str, Any]]:
            log = app_client.get("/memory/messages/lobug").json()
            return [m for m in log if m["role"] == "assistant"]

        assert eventually(lambda: bool(stored()), timeout_s=3)  # not once that is written
    assert stored()[0]["content"] == "Hello there."


def test_with_tokens_a_connection_needs_one(
    tmp_path: Any, fake_chat: FakeChat, fake_embedder: FakeEmbedder, tts: FakeTTS
) -> None:
    settings = Settings(db_path=tmp_path / "m.db", dream_at="", device_tokens=(DEVICE_TOKEN,))
    backends = Backends(fake_chat, fake_embedder, FakeSTT(), tts)
    with TestClient(create_app(settings, backends)) as client:
        for refused in (headers(), headers(Authorization="Bearer wrong")):
            with (
                pytest.raises((WebSocketDenialResponse, WebSocketDisconnect)),
                client.websocket_connect("/xiaozhi/v1/", headers=refused),
            ):
                pass
        with client.websocket_connect(
            "/xiaozhi/v1/", headers=headers(Authorization=f"Bearer {DEVICE_TOKEN}")
        ) as ws:
            assert greet(ws)["type"] == "hello"
        assert client.post("/xiaozhi/ota/", json={}, headers=headers()).status_code == 401
        ota = client.post(
            "/xiaozhi/ota/", json={}, headers=headers(Authorization=f"Bearer {DEVICE_TOKEN}")
        )
        assert ota.status_code == 200 and ota.json()["websocket"]["token"] == DEVICE_TOKEN


@pytest.mark.parametrize(
    ("sent", "code"),
    [
        (["not json"], 1003),
        ([json.dumps({"type": "listen", "state": "start"})], 1002),  # no hello first
        ([json.dumps(HELLO), json.dumps(HELLO)], 1002),
        ([json.dumps(HELLO), b"\x00" * 5000], 1009),
        (
            [
                json.dumps(HELLO),
                json.dumps({"type": "listen", "state": "start", "mode": "manual"}),
                b"\xff\xfe junk",
            ],
            1003,
        ),
        ([json.dumps(HELLO), *([b"\xf8\xff\xfe"] * 250)], 1008),  # a flood of frames
    ],
)
def test_bad_input_closes_with_a_code(app_client: TestClient, sent: list[Any], code: int) -> None:
    with app_client.websocket_connect("/xiaozhi/v1/", headers=headers()) as ws:
        for item in sent:
            if isinstance(item, bytes):
                ws.send_bytes(item)
            else:
                ws.send_text(item)
        message = ws.receive()
        while message["type"] != "websocket.close":
            message = ws.receive()
    assert message["code"] == code, message
    assert app_client.get("/health").status_code == 200


class HungUp:
    """A WebSocket whose device has gone: every send raises, as Starlette's does."""

    async def send_text(self, text: str) -> None:
        raise WebSocketDisconnect(code=1006)

    async def send_bytes(self, data: bytes) -> None:
        raise WebSocketDisconnect(code=1006)


def test_sending_to_a_device_that_hung_up_is_nothing_not_an_error() -> None:
    link = StarletteLink(HungUp())  # type: ignore[arg-type]
    asyncio.run(link.send_text('{"type": "tts", "state": "stop"}'))
    asyncio.run(link.send_bytes(b"\x00"))  # an answer's last frames after the device left
