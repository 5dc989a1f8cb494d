"""The three programs through the real app and the `wyoming` library's client (fake models):
`describe`, `handle` (a Lo-Bug turn on the satellite's device), `asr` and `tts`, plain and
streamed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.handle import Handled
from wyoming.info import Describe, Info
from wyoming.ping import Ping
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from lobug.app import create_app
from lobug.audio import parse_wav
from lobug.backends import Backends, build_stt
from lobug.config import Settings
from lobug.wyoming.handle import device_of
from lobug.wyoming.tts import sentences_of
from tests.e2e.server import free_port
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.polling import eventually
from tests.wyoming.conftest import HEARD, Served, read_until, wyoming_settings

DATA = Path(__file__).parent.parent / "data" / "speech"

SATELLITE = "assist_satellite.kitchen_voice"


def tone(seconds: float, rate: int = 16_000) -> bytes:
    count = int(rate * seconds)
    wave = np.sin(2 * np.pi * 300 * np.arange(count) / rate) * 8000
    return wave.astype("<i2").tobytes()


def test_describe_offers_asr_tts_and_handle(served: Served) -> None:
    async def talk(client: AsyncTcpClient) -> Info:
        await client.write_event(Describe().event())
        return Info.from_event((await read_until(client, "info"))[-1])

    info = served.run(talk)
    assert [p.name for p in info.asr] == ["lobug-asr"] and info.asr[0].supports_transcript_streaming
    assert info.asr[0].models[0].languages == ["en"]
    assert info.tts[0].supports_synthesize_streaming
    assert info.tts[0].voices[0].name == "fake-voice"
    assert info.handle[0].name == "lobug" and info.handle[0].supports_handled_streaming
    assert info.handle[0].models[0].languages == ["en"]


def test_ping_is_answered(served: Served) -> None:
    async def talk(client: AsyncTcpClient) -> Event:
        await client.write_event(Ping(text="hi").event())
        return (await read_until(client, "pong"))[-1]

    assert served.run(talk).data == {"text": "hi"}


def test_a_turn_is_the_satellites_and_streams_its_sentences(served: Served) -> None:
    served.chat.enqueue("It is noon. Time for lunch!")
    context = {"conversation_id": "c-1", "satellite_id": SATELLITE, "device_id": "abc123"}

    async def talk(client: AsyncTcpClient) -> list[Event]:
        await client.write_event(Transcript("What time is it?", context=context).event())
        return await read_until(client, "handled", "not-handled")

    events = served.run(talk)
    assert [e.type for e in events] == [
        *("handled-start", "handled-chunk", "handled-chunk", "handled-stop", "handled")
    ]
    assert [e.data["text"] for e in events[1:3]] == ["It is noon. ", "Time for lunch! "]
    handled = Handled.from_event(events[-1])
    assert handled.text == "It is noon. Time for lunch!"
    assert handled.context == context  # conversation_id as Home Assistant sent it
    log = served.http.get("/memory/messages/lobug").json()
    said = {(m["device_id"], m["role"], m["content"]) for m in log}
    assert (SATELLITE, "user", "What time is it?") in said
    assert (SATELLITE, "assistant", "It is noon. Time for lunch!") in said


def test_the_device_id_names_the_device_without_a_satellite(served: Served) -> None:
    async def talk(client: AsyncTcpClient) -> list[Event]:
        event = Transcript("Hello", context={"device_id": "0a1b2c3d"}).event()
        await client.write_event(event)
        return await read_until(client, "handled", "not-handled")

    assert served.run(talk)[-1].type == "handled"
    log = served.http.get("/memory/messages/lobug").json()
    assert {m["device_id"] for m in log} == {"0a1b2c3d"}


def test_two_turns_on_one_connection_and_nothing_said_is_not_handled(served: Served) -> None:
    async def talk(client: AsyncTcpClient) -> list[str]:
        kinds = []
        for text in ("Hello", "   ", "Hello again"):
            await client.write_event(Transcript(text, context={"satellite_id": "s1"}).event())
            kinds.append((await read_until(client, "handled", "not-handled"))[-1].type)
        return kinds

    assert served.run(talk) == ["handled", "not-handled", "handled"]


def test_asr_hears_the_recording_with_chunks_while_it_arrives(served: Served) -> None:
    audio = tone(1.5) + bytes(16_000)  # speech, then half a second of quiet

    async def talk(client: AsyncTcpClient) -> list[Event]:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(AudioStart(rate=16_000, width=2, channels=1).event())
        for start in range(0, len(audio), 2048):
            chunk = AudioChunk(rate=16_000, width=2, channels=1, audio=audio[start : start + 2048])
            await client.write_event(chunk.event())
        await client.write_event(AudioStop().event())
        return await read_until(client, "transcript")

    events = served.run(talk)
    kinds = [e.type for e in events]
    assert kinds[0] == "transcript-start" and kinds[-2:] == ["transcript-stop", "transcript"]
    chunks = "".join(e.data["text"] for e in events if e.type == "transcript-chunk")
    assert chunks.strip() == events[-1].data["text"] == HEARD


def test_asr_resamples_stereo_at_another_rate(served: Served) -> None:
    mono = np.frombuffer(tone(1.0, 44_100), dtype="<i2")
    stereo = np.repeat(mono, 2).astype("<i2").tobytes()

    async def talk(client: AsyncTcpClient) -> Event:
        await client.write_event(AudioStart(rate=44_100, width=2, channels=2).event())
        await client.write_event(AudioChunk(44_100, 2, 2, stereo[:100_000]).event())
        await client.write_event(AudioChunk(44_100, 2, 2, stereo[100_000:]).event())
        await client.write_event(AudioStop().event())
        return (await read_until(client, "transcript"))[-1]

    assert served.run(talk).data["text"] == HEARD
    assert 15_000 < served.stt.heard_samples[-1] < 17_000  # one second at 16 kHz, mono


def audio_streams(events: list[Event]) -> list[bytes]:
    streams: list[bytes] = []
    for event in events:
        if event.type == "audio-start":
            assert event.data["rate"] == 22_050 and event.data["width"] == 2
            streams.append(b"")
        elif event.type == "audio-chunk":
            streams[-1] += event.payload or b""
    return streams


def test_tts_says_a_text_as_one_audio_stream(served: Served) -> None:
    async def talk(client: AsyncTcpClient) -> list[Event]:
        await client.write_event(Synthesize("Hello there. How are you today?").event())
        return await read_until(client, "audio-stop")

    events = served.run(talk)
    streams = audio_streams(events)
    assert len(streams) == 1 and events[-1].type == "audio-stop"
    assert len(streams[0]) == 2 * int(22_050 * 0.1) * (2 + 4)  # 0.1 s a word, both sentences
    assert served.tts.spoken == ["Hello there.", "How are you today?"]


def test_tts_streamed_says_each_sentence_as_its_text_arrives(served: Served) -> None:
    async def talk(client: AsyncTcpClient) -> tuple[list[Event], list[Event]]:
        await client.write_event(SynthesizeStart().event())
        await client.write_event(SynthesizeChunk("Hello there. How").event())
        first = await read_until(client, "audio-stop")  # before the stream has ended
        await client.write_event(SynthesizeChunk(" are you?").event())
        await client.write_event(Synthesize("Hello there. How are you?").event())  # for old ones
        await client.write_event(SynthesizeStop().event())
        return first, await read_until(client, "synthesize-stopped")

    first, rest = served.run(talk)
    assert len(audio_streams(first)) == 1
    assert len(audio_streams(rest)) == 1 and rest[-1].type == "synthesize-stopped"
    assert served.tts.spoken == ["Hello there.", "How are you?"]


@pytest.mark.models
def test_asr_hears_a_real_recording_with_the_bundled_whisper(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    """ "Wie heißt mein Hund?" (tests/data/speech), heard in German by the real whisper."""
    german = replace(settings, language="de")
    recording = parse_wav((DATA / "de-wie-heisst-mein-hund.wav").read_bytes())
    pcm = (recording.samples * 32767).astype("<i2").tobytes()
    backends = Backends(fake_chat, fake_embedder, build_stt(german), FakeTTS())
    port = free_port()
    with TestClient(create_app(wyoming_settings(german, port), backends)) as http:
        served = Served(http, port, fake_chat, FakeSTT(), FakeTTS())

        async def talk(client: AsyncTcpClient) -> Event:
            rate = recording.sample_rate
            await client.write_event(AudioStart(rate=rate, width=2, channels=1).event())
            step = rate // 10 * 2
            for start in range(0, len(pcm), step):
                await client.write_event(AudioChunk(rate, 2, 1, pcm[start : start + step]).event())
            await client.write_event(AudioStop().event())
            return (await read_until(client, "transcript"))[-1]

        heard = served.run(talk)
    assert heard.data["language"] == "de"
    assert "heißt mein hund" in heard.data["text"].lower(), heard.data


@pytest.mark.parametrize("context", [None, {"satellite_id": SATELLITE}])
def test_only_a_named_satellites_prompt_is_read_while_it_speaks(
    served: Served, context: dict[str, str] | None
) -> None:
    audio = tone(1.5) + bytes(16_000)
    served.chat.caches_prompt_prefix = True  # a model that is primed

    async def talk(client: AsyncTcpClient) -> str:
        await client.write_event(Transcribe(context=context).event())
        await client.write_event(AudioStart(rate=16_000, width=2, channels=1).event())
        await client.write_event(AudioChunk(16_000, 2, 1, audio).event())
        await client.write_event(AudioStop().event())
        return str((await read_until(client, "transcript"))[-1].data["text"])

    assert served.run(talk) == HEARD
    if context is None:
        assert not served.chat.prefilled
    else:
        assert eventually(lambda: bool(served.chat.prefilled))


def test_a_text_is_spoken_a_sentence_at_a_time() -> None:
    """piper makes a whole text's sound before it gives any: each sentence is its own call."""
    assert sentences_of("Hello there. How are you?  Fine") == [
        *("Hello there.", "How are you?", "Fine")
    ]
    assert sentences_of("  ") == []


def test_a_long_satellite_entity_id_names_a_device_of_its_own() -> None:
    long_one = "assist_satellite." + "home_assistant_voice_kitchen_" * 3
    device = device_of({"satellite_id": long_one})
    assert len(device) == 64 and device.startswith("assist_satellite.home_assistant")
    assert device_of({"satellite_id": long_one + "x"}) != device
    assert device_of({"satellite_id": long_one.upper()}) == device
    assert device_of({"device_id": "0A1B"}) == "0a1b" and device_of(None) == "home-assistant"
