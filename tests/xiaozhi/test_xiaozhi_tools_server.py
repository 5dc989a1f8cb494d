"""A device's tool called by the model, end to end (issue 30, item 5): a real server process
whose chat is the real OpenAI-compatible backend, pointed at the fake model server (no model
that calls tools runs here: `tests.e2e.fake_server model` asks for the device's `set_volume`
when offered it and asked for a number, then answers in words), real speech models, and the
third-party device emulator (`xiaozhi-sdk`) offering its volume tool over MCP. The person
asks in words the spoken rules do not know, by voice; the emulator's tool is called with the
model's arguments and the answer after the tool's result is said; a tool that fails on the
device is told to the model, which answers so."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lobug.audio import resample
from lobug.backends.speech import PiperTTS
from tests.e2e.fake_server import TOOL_DONE, TOOL_FAILED, model_env, start
from tests.e2e.server import ServerProcess
from tests.e2e.test_voice_server import wait_for_speech
from tests.xiaozhi.test_xiaozhi_server import Device, volume_tool

pytestmark = [pytest.mark.e2e, pytest.mark.models]

MAC = "aa:bb:cc:dd:ee:31"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("xiaozhi-tools")


@pytest.fixture(scope="module")
def model(folder: Path) -> Iterator[ServerProcess]:
    server = start("model", folder / "model.log", {})
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(folder: Path, model: ServerProcess) -> Iterator[ServerProcess]:
    tmp_path = folder
    env = {
        "LOBUG_DB_PATH": str(tmp_path / "memory.db"),
        "LOBUG_DREAM_AT": "off",
        "FAKE_REAL_SPEECH": "1",
        **model_env(model),
    }
    process = start("serve", tmp_path / "server.log", env)
    try:
        wait_for_speech(process)
        yield process
    finally:
        process.stop()


def spoken(text: str) -> bytes:
    """`text` spoken by piper, as 16 kHz int16 PCM with silence after."""
    voice = PiperTTS()
    pcm = np.concatenate(list(voice.synthesize(text))).astype(np.float32) / 32768
    samples = resample(pcm, voice.sample_rate, 16_000)
    silence = np.zeros(16_000 * 3 // 2, dtype=np.float32)
    return (np.concatenate([samples, silence]) * 32767).astype(np.int16).tobytes()


def ask_by_voice(server: ServerProcess, words: str, fails: bool) -> tuple[Device, list[Any]]:
    """`words` said to a device whose volume tool records its calls (and `fails` on them)."""
    called: list[dict[str, Any]] = []

    def set_volume(arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        called.append(arguments)
        return {"volume": arguments["volume"]}, fails

    async def talk() -> Device:
        device = Device(server)
        await device.sdk.set_mcp_tool([{**volume_tool(), "tool_func": set_volume}])
        device.sdk.mode = "auto"
        assert await device.sdk.init_connection(MAC)
        await device.say(spoken(words))
        await device.wait_for("stt", timeout_s=90)
        await device.wait_for("tts", "stop", timeout_s=120)
        await device.sdk.close()
        return device

    return asyncio.run(talk()), called


def said(device: Device) -> str:
    return " ".join(m["text"] for m in device.seen("tts", "sentence_start"))


def test_the_model_sets_the_devices_volume_asked_by_voice(server: ServerProcess) -> None:
    device, called = ask_by_voice(server, "Please make the sound thirty percent.", fails=False)
    heard = device.seen("stt")[0]["text"].lower()
    # The request was heard (whisper has heard piper's "sound" as "psalm": the words around it
    # and the number are what the turn needs).
    assert "make the" in heard and ("30" in heard or "thirty" in heard), heard
    assert called == [{"volume": 30}]
    assert said(device) == TOOL_DONE.format(volume=30)
    audio = np.array(list(device.sdk.output_audio_queue)).reshape(-1)
    assert len(audio) > 16_000 * 0.5 and np.abs(audio).max() > 1000


def test_a_tool_that_fails_on_the_device_is_told_to_the_model(server: ServerProcess) -> None:
    device, called = ask_by_voice(server, "Could you make the sound fifty percent?", fails=True)
    assert [call["volume"] for call in called] == [50], device.seen("stt")
    assert said(device) == TOOL_FAILED
