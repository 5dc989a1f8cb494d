"""Hostile round 4, item 6, through real server processes (fake models, fake speech): the words
a xiaozhi answer already said are in the log when the server is killed mid-answer; the OTA
answer hands its token out only with an address from the configuration, an allowed host or the
server's own socket, never a foreign `Host`; a refused WebSocket handshake says why."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from lobug.store.engines import open_database
from tests.e2e.fake_server import start

pytestmark = pytest.mark.e2e

MAC = "aa:bb:cc:00:00:0c"
TOKEN = "dev-token-9fK2mQ7xLp4Z"
STORY = " ".join(f"Sentence {n} of a long story goes on and on right here." for n in range(12))
HELLO = {
    "type": "hello",
    "version": 1,
    "transport": "websocket",
    "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
}


async def said_before(url: str, count: int) -> list[str]:
    """Ask for the story on a xiaozhi connection; the first `count` sentences said."""
    headers = {"Device-Id": MAC, "Client-Id": "c", "Protocol-Version": "1"}
    said: list[str] = []
    async with websockets.connect(url, additional_headers=headers) as socket:
        await socket.send(json.dumps(HELLO))
        await socket.send(json.dumps({"type": "listen", "state": "detect", "text": "A story"}))
        deadline = time.monotonic() + 30
        while len(said) < count and time.monotonic() < deadline:
            data = await asyncio.wait_for(socket.recv(), 30)
            message: Any = json.loads(data) if isinstance(data, str) else {}
            if message.get("state") == "sentence_start":
                said.append(message["text"])
    return said


def test_the_sentences_said_before_a_kill_are_in_the_log(tmp_path: Path) -> None:
    env = {
        "LOBUG_DB_PATH": str(tmp_path / "memory.db"),
        "LOBUG_DREAM_AT": "off",
        "FAKE_SPEECH": "1",
        "FAKE_REPLY": STORY,
    }
    server = start("serve", tmp_path / "server.log", env)
    try:
        said = asyncio.run(said_before(server.url.replace("http", "ws") + "/xiaozhi/v1/", 3))
        time.sleep(0.5)  # the third sentence's sound is being sent: kill it now
        server.process.kill()
        server.process.wait()
    finally:
        server.stop()
    assert len(said) == 3
    store = open_database(f"sqlite:///{tmp_path / 'memory.db'}")
    try:
        replies = [m.content for m in store.agent_messages("lobug", 10) if m.role == "assistant"]
    finally:
        store.close()
    assert replies and replies[0].startswith(" ".join(said))
    assert len(replies[0]) < len(STORY)  # what was said, not what the model wrote


def test_ota_never_hands_the_token_to_a_foreign_host_and_refusals_say_why(
    tmp_path: Path,
) -> None:
    env = {"LOBUG_DB_PATH": str(tmp_path / "memory.db"), "LOBUG_DEVICE_TOKENS": TOKEN}
    server = start("serve", tmp_path / "server.log", env)
    try:
        port = server.url.rsplit(":", 1)[1]
        bearer = {"Authorization": f"Bearer {TOKEN}", "Device-Id": MAC}
        for host in ("attacker.example", "attacker.example:80", f"127.0.0.1@evil:{port}"):
            answer = httpx.post(
                f"{server.url}/xiaozhi/ota/", json={}, headers={**bearer, "Host": host}
            ).json()
            assert answer["websocket"] == {
                "url": f"ws://127.0.0.1:{port}/xiaozhi/v1/",
                "token": TOKEN,
            }

        async def refused(headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
            url = server.url.replace("http", "ws") + "/xiaozhi/v1/"
            with pytest.raises(websockets.InvalidStatus) as refusal:
                async with websockets.connect(url, additional_headers=headers):
                    pass
            response = refusal.value.response
            return response.status_code, json.loads(response.body)

        status, body = asyncio.run(refused({"Device-Id": MAC}))
        assert (status, body["error"]) == (401, "unauthorized") and "Bearer" in body["detail"]
        status, body = asyncio.run(refused({"Authorization": f"Bearer {TOKEN}"}))
        assert (status, body["detail"]) == (400, "Device-Id is required")
    finally:
        server.stop()
