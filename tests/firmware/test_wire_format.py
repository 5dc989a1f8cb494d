"""The simulator sends what the firmware sends (checked against firmware/test/golden/, which
the firmware's host tests check too), and it reads the real server's replies correctly: here
the real app with fake models, in process; tests/firmware/test_device_sim.py runs it against a
real server process."""

from __future__ import annotations

import asyncio
import io
import json
import re
import struct
import wave
from collections.abc import AsyncGenerator, Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient
from starlette.datastructures import Headers, UploadFile
from starlette.formparsers import MultiPartParser

from lobug.app import create_app
from lobug.audio import STREAMING_DATA_SIZE, parse_wav, wav_header
from lobug.backends import Backends
from lobug.config import Settings
from lobug.voice.listening import LiveRecording
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.firmware.sim import GOLDEN_BOUNDARY, device_sim, golden


def tone_pcm(seconds: float, rate: int, channels: int = 1) -> bytes:
    t = np.arange(int(rate * seconds)) / rate
    mono = (np.sin(2 * np.pi * 300 * t) * 8000).astype("<i2")
    return np.repeat(mono, channels).tobytes()


def recording(seconds: float = 1.0) -> bytes:
    return device_sim.recording_from_pcm(tone_pcm(seconds, 16000), 16000, 1, 5.0)


# ---------------------------------------------------------------------------- bytes on the wire


def test_multipart_body_matches_the_firmware_byte_for_byte() -> None:
    wav = recording(0.1)
    body, content_type = device_sim.build_multipart(wav, GOLDEN_BOUNDARY)
    assert body == golden("multipart_head.bin") + wav + golden("multipart_tail.bin")
    assert content_type + "\n" == golden("content_type.txt").decode()


def dechunk(body: bytes) -> tuple[list[bytes], bool]:
    """The chunks of a chunked body, and whether it ended with the zero-size chunk."""
    chunks = []
    at = 0
    while at < len(body):
        line_end = body.index(b"\r\n", at)
        size = int(body[at:line_end], 16)
        if size == 0:
            return chunks, body[line_end:] == b"\r\n\r\n"
        chunks.append(body[line_end + 2 : line_end + 2 + size])
        assert body[line_end + 2 + size : line_end + 4 + size] == b"\r\n"
        at = line_end + 4 + size
    return chunks, False


def test_a_recording_sent_while_it_is_made_is_what_the_server_hears_as_it_arrives() -> None:
    """The firmware's chunked upload (golden bytes its host tests produce): a WAV header of
    unknown length, one chunk per frame, read piece by piece by the server's live reader."""
    chunks, ended = dechunk(golden("live_upload_16k_80ms.bin"))
    assert ended
    assert chunks[0] == wav_header(16000, STREAMING_DATA_SIZE)
    assert [len(c) for c in chunks[1:]] == [1280, 1280]
    live = LiveRecording(max_seconds=5)
    for n, chunk in enumerate(chunks):
        assert live.add(chunk, elapsed_s=0.04 * n) == []  # no pause yet: nothing to hear
    assert len(live.finish()) == 1
    assert live.seconds == 0.08
    expected = (np.arange(1280) * 3 - 2400) / 32768
    assert np.allclose(parse_wav(b"".join(chunks)).samples, expected)


def test_multipart_body_is_what_the_servers_parser_reads() -> None:
    wav = recording(0.2)
    body, content_type = device_sim.build_multipart(wav, device_sim.make_boundary())

    async def parse() -> tuple[str | None, str | None, bytes]:
        async def stream() -> AsyncGenerator[bytes, None]:
            yield body

        form = await MultiPartParser(Headers({"content-type": content_type}), stream()).parse()
        upload = form["audio"]
        assert isinstance(upload, UploadFile)
        data = await upload.read()
        await form.close()
        return upload.filename, upload.content_type, data

    assert asyncio.run(parse()) == ("recording.wav", "audio/wav", wav)


def test_boundary_has_the_firmwares_fixed_shape() -> None:
    boundaries = {device_sim.make_boundary() for _ in range(20)}
    assert len(boundaries) == 20
    assert all(re.fullmatch(r"lobug-[0-9a-f]{16}", b) for b in boundaries)
    assert len(GOLDEN_BOUNDARY) == len(boundaries.pop())


def test_recording_header_matches_the_firmware() -> None:
    assert device_sim.wav_header(16000, 3200) == golden("wav_header_16k_100ms.bin")


def test_recordings_are_converted_to_what_the_device_records() -> None:
    stereo_48k = tone_pcm(2.0, 48000, channels=2)
    wav = device_sim.recording_from_pcm(stereo_48k, 48000, 2, 5.0)
    with wave.open(io.BytesIO(wav)) as parsed:
        assert (parsed.getframerate(), parsed.getnchannels(), parsed.getsampwidth()) == (
            16000,
            1,
            2,
        )
        assert parsed.getnframes() == 32000
    long_one = device_sim.recording_from_pcm(tone_pcm(7.0, 16000), 16000, 1, 5.0)
    assert len(long_one) == 44 + 5 * 16000 * 2  # the device stops at 5 s


def test_sensors_body_matches_the_firmware_and_the_contract() -> None:
    body = device_sim.sensors_json(device_sim.SensorReport())
    assert body + "\n" == golden("sensors.json").decode()
    assert set(json.loads(body)) == {
        "orientation",
        "is_moving",
        "is_shaking",
        "tap_detected",
        "accel_x",
        "accel_y",
        "accel_z",
        "gyro_x",
        "gyro_y",
        "gyro_z",
    }
    unknown = device_sim.SensorReport(orientation=None, accel=(float("nan"), 0.0, 1.0))
    assert json.loads(device_sim.sensors_json(unknown)).keys() >= {"accel_y", "is_moving"}
    assert "orientation" not in device_sim.sensors_json(unknown)
    assert "accel_x" not in device_sim.sensors_json(unknown)


def test_device_headers_like_the_firmware() -> None:
    assert device_sim.device_headers("tok", "core2") == {
        "Authorization": "Bearer tok",
        "X-Device-Id": "core2",
    }
    assert device_sim.device_headers("", "") == {}


def test_streamed_wav_is_saved_with_its_real_sizes() -> None:
    pcm = tone_pcm(0.5, 22050)
    streamed = device_sim.wav_header(22050, 0xFFFFFFFF - 36) + pcm + b"\x01"  # odd tail byte
    saved = device_sim.sized_wav(streamed)
    with wave.open(io.BytesIO(saved)) as parsed:
        assert parsed.getframerate() == 22050
        assert parsed.readframes(parsed.getnframes()) == pcm
    assert struct.unpack_from("<I", saved, 4)[0] == 36 + len(pcm)


# ---------------------------------------------------------------------------- against the app


@pytest.fixture
def fake_tts() -> FakeTTS:
    return FakeTTS()


@pytest.fixture
def app_client(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder, fake_tts: FakeTTS
) -> Iterator[TestClient]:
    backends = Backends(fake_chat, fake_embedder, FakeSTT("what is the weather"), fake_tts)
    with TestClient(create_app(settings, backends)) as client:
        yield client


def test_whole_reply_turn(app_client: TestClient, fake_chat: FakeChat) -> None:
    fake_chat.enqueue("It is sunny. Take a hat!")
    result = device_sim.audio_turn(app_client, recording(1.0), "tone")
    assert result.ok, result.error
    assert (result.transcription, result.action) == ("what is the weather", "respond")
    assert result.response == "It is sunny. Take a hat!"
    with wave.open(io.BytesIO(result.audio)) as parsed:
        assert parsed.getframerate() == 22050 and parsed.getnframes() > 0


def test_streamed_reply_turn(app_client: TestClient, fake_chat: FakeChat) -> None:
    fake_chat.enqueue("It is sunny. Take a hat!")
    result = device_sim.streamed_audio_turn(app_client, recording(1.0), "tone")
    assert result.ok, result.error
    assert (result.transcription, result.action) == ("what is the weather", "respond")
    assert result.response == "It is sunny. Take a hat!"  # from /chat/turns/{turn}
    with wave.open(io.BytesIO(result.audio)) as parsed:
        seconds = parsed.getnframes() / parsed.getframerate()
    assert seconds == pytest.approx(0.1 * 6, abs=0.01)  # FakeTTS: 0.1 s per word
    assert {"headers", "first_audio", "total"} <= result.timings_ms.keys()


def test_silence_is_ignored_with_no_audio(app_client: TestClient) -> None:
    silence = device_sim.recording_from_pcm(bytes(32000), 16000, 1, 5.0)
    for turn in (device_sim.audio_turn, device_sim.streamed_audio_turn):
        result = turn(app_client, silence, "silence")
        assert result.ok, result.error
        assert (result.action, result.audio) == ("ignore", b"")


def test_errors_are_reported_with_the_servers_code(app_client: TestClient) -> None:
    result = device_sim.audio_turn(app_client, b"not a wav", "junk")
    assert not result.ok
    assert result.error.startswith("415 not_wav")
    result = device_sim.text_turn(app_client, "   ")
    assert result.error.startswith("422 empty_text")
