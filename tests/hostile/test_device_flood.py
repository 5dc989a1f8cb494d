"""Hostile round 4, item 5: one device cannot wedge the server. Seven xiaozhi `listen detect`
messages back to back, or one detect and six HTTP turns with the same device id, filled the
event loop's thread pool with turns waiting for the device, while the turn holding it needed a
pool thread to finish: `/health` and every other device timed out for minutes. Now a device's
turns wait on the event loop, at most two behind the one in progress, the rest refused (HTTP
429 `device_busy`; a xiaozhi `alert`), and the rest of the server stays fast.

A real server process with fake models (a chat that takes `CHAT_DELAY_S` for each answer, so a
device's turns overlap) and fake speech."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets

from tests.e2e.fake_server import start
from tests.e2e.server import ServerProcess

pytestmark = pytest.mark.e2e

CHAT_DELAY_S = 1.5
FLOODED = "aa:bb:cc:00:00:07"
OTHER = "other-device"
HELLO = {
    "type": "hello",
    "version": 1,
    "transport": "websocket",
    "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("flood")
    env = {
        "LOBUG_DB_PATH": str(folder / "memory.db"),
        "LOBUG_DREAM_AT": "off",
        "FAKE_SPEECH": "1",
        "FAKE_CHAT_DELAY_S": str(CHAT_DELAY_S),
    }
    process = start("serve", folder / "server.log", env)
    try:
        yield process
    finally:
        process.stop()


class Device:
    """A xiaozhi connection with what it received collected."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.received: list[dict[str, Any]] = []

    async def collect(self) -> None:
        async for data in self.socket:
            if isinstance(data, str):
                self.received.append(json.loads(data))

    def seen(self, kind: str, state: str | None = None) -> int:
        return sum(
            1 for m in self.received if m["type"] == kind and state in (None, m.get("state"))
        )


async def until(condition: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def timed_get(client: httpx.AsyncClient, path: str) -> float:
    started = time.perf_counter()
    assert (await client.get(path, timeout=10)).status_code == 200
    return time.perf_counter() - started


async def other_device_turn(client: httpx.AsyncClient) -> float:
    started = time.perf_counter()
    answer = await client.post(
        "/chat/text", json={"text": "hello"}, headers={"X-Device-Id": OTHER}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    return time.perf_counter() - started


async def flood(server: ServerProcess, detects: int, http_turns: int) -> dict[str, Any]:
    """`detects` detects back to back from one xiaozhi session, then `http_turns` HTTP turns
    with its id; meanwhile /health and another device's turn, timed."""
    url = server.url.replace("http", "ws") + "/xiaozhi/v1/"
    headers = {"Device-Id": FLOODED, "Client-Id": "c1", "Protocol-Version": "1"}
    async with (
        websockets.connect(url, additional_headers=headers) as socket,
        httpx.AsyncClient(base_url=server.url) as client,
    ):
        await socket.send(json.dumps(HELLO))
        device = Device(socket)
        collecting = asyncio.create_task(device.collect())
        assert await until(lambda: device.seen("hello") == 1, 10)
        for n in range(detects):
            await socket.send(json.dumps({"type": "listen", "state": "detect", "text": f"hi {n}"}))
        assert await until(lambda: device.seen("stt") == detects, 10)
        same_device = [
            client.post("/chat/text", json={"text": f"turn {n}"}, headers={"X-Device-Id": FLOODED})
            for n in range(http_turns)
        ]
        turns = asyncio.gather(*same_device)
        await asyncio.sleep(0.2)  # the flood is in: now the rest of the server
        health = [await timed_get(client, "/health") for _ in range(3)]
        other = await other_device_turn(client)
        answers = await turns
        answered = lambda: device.seen("tts", "stop") + device.seen("alert") >= detects  # noqa: E731
        assert await until(answered, 60), device.received
        collecting.cancel()
    return {"health_s": health, "other_s": other, "device": device, "http": answers}


def test_seven_detects_are_bounded_and_the_server_stays_fast(server: ServerProcess) -> None:
    seen = asyncio.run(flood(server, detects=7, http_turns=0))
    device = seen["device"]
    assert max(seen["health_s"]) < 1.0
    assert seen["other_s"] < CHAT_DELAY_S + 5  # its own turn, not the flood's
    assert device.seen("tts", "stop") == 3  # the turn in progress and two waiting
    alerts = [m for m in device.received if m["type"] == "alert"]
    assert len(alerts) == 4 and all(a["status"] == "busy" and a["message"] for a in alerts)


def test_a_detect_and_six_http_turns_are_refused_with_a_reason(server: ServerProcess) -> None:
    seen = asyncio.run(flood(server, detects=1, http_turns=6))
    assert max(seen["health_s"]) < 1.0
    assert seen["other_s"] < CHAT_DELAY_S + 5
    statuses = sorted(answer.status_code for answer in seen["http"])
    assert statuses == [200, 200, 429, 429, 429, 429]
    refused = [a.json() for a in seen["http"] if a.status_code == 429]
    assert all(r["error"] == "device_busy" and r["detail"] for r in refused)
    assert seen["device"].seen("tts", "stop") == 1
