"""Lo-Bug as Home Assistant meets it: a real server process (fake chat and embedder, the real
bundled whisper and piper) with LOBUG_WYOMING_PORT set, driven by the `wyoming` library's own
client as Home Assistant's integration drives it: `describe`, a conversation across two
satellites whose memory carries over, a memory request, speech heard, speech said streamed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.tts import SynthesizeChunk, SynthesizeStart, SynthesizeStop

from lobug.audio import resample
from lobug.backends.speech import PiperTTS
from lobug.language.text import words_of
from tests.e2e.fake_server import start
from tests.e2e.server import ServerProcess, free_port, wait_for_learning
from tests.e2e.test_voice_server import wait_for_speech
from tests.wyoming.conftest import READ_TIMEOUT_S, read_until

pytestmark = [pytest.mark.e2e, pytest.mark.models]

QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, int]]:
    folder = tmp_path_factory.mktemp("wyoming")
    notes = folder / "answer-from-notes"
    notes.touch()
    port = free_port()
    env = {
        "LOBUG_DB_PATH": str(folder / "memory.db"),
        "FAKE_NOTES_FILE": str(notes),  # the chat answers with the facts its prompt quotes
        "FAKE_REAL_SPEECH": "1",
        "LOBUG_WYOMING_PORT": str(port),
        "LOBUG_WYOMING_ZEROCONF": "0",
    }
    process = start("serve", Path(folder) / "server.log", env)
    try:
        wait_for_speech(process)
        yield process, port
    finally:
        process.stop()


def talk(port: int, conversation: Any) -> Any:
    async def connected() -> Any:
        client = AsyncTcpClient("127.0.0.1", port)
        client.read_timeout = READ_TIMEOUT_S
        async with client:
            return await conversation(client)

    return asyncio.run(connected())


def handled(port: int, text: str, satellite: str) -> str:
    """One turn as Home Assistant asks it: a connection of its own."""
    context = {"conversation_id": "01HX", "satellite_id": satellite, "device_id": "d0"}

    async def turn(client: AsyncTcpClient) -> Event:
        await client.write_event(Transcript(text, context=context).event())
        return (await read_until(client, "handled", "not-handled"))[-1]

    event = talk(port, turn)
    assert event.type == "handled" and event.data["context"] == context, event
    return str(event.data["text"])


def test_describe_lists_the_three_programs(server: tuple[ServerProcess, int]) -> None:
    async def describe(client: AsyncTcpClient) -> Info:
        await client.write_event(Describe().event())
        return Info.from_event((await read_until(client, "info"))[-1])

    info = talk(server[1], describe)
    assert info.asr[0].models[0].name == "whisper-base (bundled)"
    assert info.tts[0].voices[0].name == "en_US-joe-medium"
    assert info.tts[0].supports_synthesize_streaming and info.handle[0].name == "lobug"


def test_memory_carries_over_from_one_satellite_to_another(
    server: tuple[ServerProcess, int],
) -> None:
    process, port = server
    handled(port, "My cat is called Miso", "assist_satellite.kitchen")
    with httpx.Client(base_url=process.url, timeout=30) as client:
        wait_for_learning(client)
    assert "Miso" in handled(port, "What is my cat called?", "assist_satellite.bedroom")
    # a memory request, answered by the memory itself (in the second person), not the model
    known = handled(port, "What do you remember about me?", "assist_satellite.hall")
    assert known == "I know that your cat is called Miso."


@pytest.fixture(scope="module")
def question_pcm() -> bytes:
    """The question, spoken by piper, as 16 kHz int16 PCM with quiet after it."""
    voice = PiperTTS()
    pcm = np.concatenate(list(voice.synthesize(QUESTION))).astype(np.float32) / 32768
    samples = np.concatenate([resample(pcm, voice.sample_rate, 16_000), np.zeros(8000)])
    return (samples * 32767).astype("<i2").tobytes()


def test_speech_is_heard_at_the_pace_of_speech(
    server: tuple[ServerProcess, int], question_pcm: bytes
) -> None:
    step = 16_000 * 2 // 10  # 100 ms chunks, as a satellite sends them

    async def transcribe(client: AsyncTcpClient) -> list[Event]:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(AudioStart(rate=16_000, width=2, channels=1).event())
        for at in range(0, len(question_pcm), step):
            audio = question_pcm[at : at + step]
            await client.write_event(AudioChunk(16_000, 2, 1, audio).event())
            await asyncio.sleep(0.1)
        await client.write_event(AudioStop().event())
        return await read_until(client, "transcript")

    events = talk(server[1], transcribe)
    heard = set(words_of(events[-1].data["text"]))
    missed = [word for word in words_of(QUESTION) if word not in heard]
    # whisper on piper's voice, heard as it arrives, now and then mishears one word
    # ("what is the capital of friends?" in one CI run of 4): at most one is missed
    assert len(missed) <= 1 and "capital" in heard, events[-1].data["text"]
    assert events[0].type == "transcript-start"


def test_streamed_text_is_said_sentence_by_sentence(server: tuple[ServerProcess, int]) -> None:
    async def synthesize(client: AsyncTcpClient) -> tuple[list[Event], list[Event]]:
        await client.write_event(SynthesizeStart().event())
        await client.write_event(SynthesizeChunk("Hello there. How").event())
        first = await read_until(client, "audio-stop")  # said before the text has ended
        await client.write_event(SynthesizeChunk(" are you today?").event())
        await client.write_event(SynthesizeStop().event())
        return first, await read_until(client, "synthesize-stopped")

    first, rest = talk(server[1], synthesize)
    for events in (first, rest):
        audio = b"".join(e.payload or b"" for e in events if e.type == "audio-chunk")
        start = next(e for e in events if e.type == "audio-start")
        assert start.data["rate"] == 22_050 and start.data["width"] == 2
        assert np.abs(np.frombuffer(audio, dtype="<i2")).max() > 1000  # speech, not silence
    assert rest[-1].type == "synthesize-stopped"
