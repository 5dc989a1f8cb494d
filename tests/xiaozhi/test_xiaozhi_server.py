"""The xiaozhi surface end to end: a real server process (real whisper, piper and SmolLM2)
driven by a third-party device emulator, `xiaozhi-sdk` (its own libopus and recordings):
OTA, hello, a spoken question answered with audio that decodes, the device's MCP tools,
`abort` mid-answer, and bad input closed cleanly."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest
import websockets

from lobug.audio import resample
from lobug.backends.speech import PiperTTS
from tests.e2e.server import ServerProcess, start_server, wait_for_learning
from tests.e2e.test_voice_server import wait_for_speech

pytestmark = [pytest.mark.e2e, pytest.mark.models]

MAC = "aa:bb:cc:dd:ee:01"
QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("xiaozhi")
    process = start_server(folder / "memory.db", folder / "server.log")
    try:
        wait_for_speech(process)
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def question_pcm() -> bytes:
    """The question, spoken by piper, as 16 kHz int16 PCM with a second of silence after."""
    voice = PiperTTS()
    pcm = np.concatenate(list(voice.synthesize(QUESTION))).astype(np.float32) / 32768
    samples = resample(pcm, voice.sample_rate, 16_000)
    silence = np.zeros(16_000 * 3 // 2, dtype=np.float32)
    return (np.concatenate([samples, silence]) * 32767).astype(np.int16).tobytes()


class Device:
    """The emulator with what it receives collected."""

    def __init__(self, server: ServerProcess) -> None:
        from xiaozhi_sdk import XiaoZhiWebsocket

        self.messages: list[dict[str, Any]] = []
        self.sdk = XiaoZhiWebsocket(
            self.on_message, ota_url=f"{server.url}/xiaozhi/ota", audio_sample_rate=16_000
        )

    async def on_message(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    def seen(self, kind: str, state: str | None = None) -> list[dict[str, Any]]:
        return [
            m for m in self.messages if m.get("type") == kind and state in (None, m.get("state"))
        ]

    async def wait_for(
        self, kind: str, state: str | None = None, timeout_s: float = 60, count: int = 1
    ) -> None:
        deadline = time.monotonic() + timeout_s
        while len(self.seen(kind, state)) < count:
            assert time.monotonic() < deadline, (kind, state, self.messages)
            await asyncio.sleep(0.05)

    async def say(self, pcm: bytes) -> None:
        """The recording in 60 ms frames at the pace of speech, as a device sends it."""
        frame = 16_000 * 60 // 1000 * 2
        for start in range(0, len(pcm), frame):
            chunk = pcm[start : start + frame].ljust(frame, b"\0")
            await self.sdk.send_audio(chunk)
            await asyncio.sleep(0.06)


def test_ota_answers_the_websocket_address_and_no_update(server: ServerProcess) -> None:
    report = {"application": {"version": "1.8.2"}, "board": {"type": "m5stack-core-s3"}}
    response = httpx.post(
        f"{server.url}/xiaozhi/ota/", json=report, headers={"Device-Id": MAC}, timeout=10
    )
    assert response.status_code == 200, response.text
    body = response.json()
    port = server.url.rsplit(":", 1)[1]
    assert body["websocket"] == {"url": f"ws://127.0.0.1:{port}/xiaozhi/v1/", "token": ""}
    assert body["firmware"] == {"version": "1.8.2", "url": ""}
    assert abs(body["server_time"]["timestamp"] / 1000 - time.time()) < 60
    assert "activation" not in body
    assert httpx.get(f"{server.url}/xiaozhi/ota/", timeout=10).status_code == 200


def test_a_spoken_question_is_answered_with_audio(
    server: ServerProcess, question_pcm: bytes
) -> None:
    async def talk() -> Device:
        device = Device(server)
        await device.sdk.set_mcp_tool([volume_tool()])
        device.sdk.mode = "auto"
        assert await device.sdk.init_connection(MAC)
        await device.say(question_pcm)
        await device.wait_for("stt", timeout_s=90)
        await device.wait_for("tts", "stop", timeout_s=120)
        await device.sdk.close()
        return device

    device = asyncio.run(talk())
    heard = device.seen("stt")[0]["text"].lower()
    assert "capital" in heard, heard  # whisper once heard "France" as "friends" here
    said = [m["text"] for m in device.seen("tts", "sentence_start")]
    assert said and all(s.strip() for s in said)
    audio = np.array(list(device.sdk.output_audio_queue)).reshape(-1)
    assert len(audio) > 16_000 * 0.5 and np.abs(audio).max() > 1000  # it decodes to speech


def test_abort_stops_the_answer_the_next_turn_is_heard_and_the_tools_are_listed(
    server: ServerProcess,
) -> None:
    async def talk() -> tuple[Device, float]:
        device = Device(server)
        await device.sdk.set_mcp_tool([volume_tool()])
        device.sdk.mode = "manual"
        assert await device.sdk.init_connection(MAC.replace("01", "02"))
        await device.sdk.send_text("Tell me a long story about a dragon and a knight.")
        await device.wait_for("tts", "sentence_start", timeout_s=120)
        await device.sdk.send_abort()
        aborted = time.monotonic()
        await device.wait_for("tts", "stop", timeout_s=60)
        stopped = time.monotonic() - aborted
        await device.sdk.send_text("Thank you, that is enough for today.")
        await device.wait_for("stt", timeout_s=10, count=2)
        await device.sdk.close()
        return device, stopped

    device, stopped = asyncio.run(talk())
    assert len(device.seen("tts", "stop")) >= 1
    assert stopped < 30, stopped  # not the whole story: sending stopped at the abort
    assert [m["text"] for m in device.seen("stt")][-1].startswith("Thank you")
    assert f"xiaozhi {MAC.replace('01', '02')} offers 1 tools" in server.log()


def volume_tool() -> dict[str, Any]:
    return {
        "name": "self.audio_speaker.set_volume",
        "description": "Set the volume of the speaker",
        "inputSchema": {"type": "object", "properties": {"volume": {"type": "integer"}}},
        "tool_func": lambda arguments: ({"ok": True}, False),
    }


def test_bad_input_closes_the_connection_cleanly(server: ServerProcess) -> None:
    ws_url = server.url.replace("http", "ws") + "/xiaozhi/v1/"

    async def close_code(*sent: str | bytes, headers: dict[str, str] | None = None) -> int:
        async with websockets.connect(
            ws_url, additional_headers=headers or {"Device-Id": MAC}
        ) as ws:
            for item in sent:
                await ws.send(item)
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(ws.recv(), 10)
            assert closed.value.rcvd is not None
            return closed.value.rcvd.code

    hello = json.dumps({"type": "hello", "version": 1, "transport": "websocket"})

    async def run() -> list[int]:
        return [
            await close_code("not json"),
            await close_code(hello, '{"type": "listen", "state": "sideways"}'),
            await close_code(hello, b"\xff" * 5000),
        ]

    assert asyncio.run(run()) == [1003, 1003, 1009]

    async def refused(headers: dict[str, str]) -> tuple[int, str]:
        with pytest.raises(websockets.InvalidStatus) as refusal:
            async with websockets.connect(ws_url, additional_headers=headers):
                pass
        response = refusal.value.response
        return response.status_code, json.loads(response.body)["detail"]

    status, reason = asyncio.run(refused({"Device-Id": MAC, "Protocol-Version": "9"}))
    assert status == 400 and "Protocol-Version" in reason  # with its reason, not a bare 403
    assert asyncio.run(refused({})) == (400, "Device-Id is required")
    assert httpx.get(f"{server.url}/health", timeout=5).status_code == 200


def test_a_fact_said_on_one_device_is_recalled_on_another(server: ServerProcess) -> None:
    async def tell(mac: str, text: str) -> Device:
        device = Device(server)
        device.sdk.mode = "manual"
        assert await device.sdk.init_connection(mac)
        await device.sdk.send_text(text)
        await device.wait_for("tts", "stop", timeout_s=120)
        await device.sdk.close()
        return device

    asyncio.run(tell("aa:bb:cc:dd:ee:03", "My name is Ottilie and I drive a green Skoda."))
    with httpx.Client(base_url=server.url, timeout=10) as client:
        wait_for_learning(client)
    other = asyncio.run(tell("aa:bb:cc:dd:ee:04", "What car do I drive?"))
    said = " ".join(m["text"] for m in other.seen("tts", "sentence_start")).lower()
    assert "skoda" in said, said
