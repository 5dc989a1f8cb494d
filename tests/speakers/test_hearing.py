"""Who spoke, heard while the recording arrives in a voice turn (`listening.hear_arriving`
with a `SpeakerListener`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest

from lobug.audio import STT_RATE, encode_wav
from lobug.speakers.identify import VoiceProfile
from lobug.speakers.live import SpeakerListener
from lobug.speakers.profiles import enrol
from lobug.voice.listening import Heard, hear_arriving
from tests.fakes import FakeSTT
from tests.speakers.voices import SpectrumEmbedder, tone


async def spoken(wav: bytes, step: int = 3_200) -> AsyncIterator[bytes]:
    """The header, then 100 ms pieces at the pace of speech."""
    yield wav[:44]
    for at in range(44, len(wav), step):
        await asyncio.sleep(0.1)
        yield wav[at : at + step]


def recording(hz: float) -> bytes:
    quiet = np.zeros(STT_RATE // 2, dtype=np.float32)
    samples = np.concatenate([quiet, tone(hz, 2.5), quiet])
    return encode_wav((samples * 32767).astype(np.int16), STT_RATE)


def hear(wav: bytes, listener: SpeakerListener | None, timings: dict[str, float]) -> Heard:
    async def heard() -> Heard:
        return await hear_arriving(
            spoken(wav),
            FakeSTT("who am I"),
            lambda _words, _answer: None,
            max_seconds=30,
            max_bytes=10_000_000,
            timings=timings,
            listener=listener,
        )

    return asyncio.run(heard())


def test_the_voice_is_recognised_by_the_time_the_recording_ends() -> None:
    embedder = SpectrumEmbedder()
    profiles = [
        enrol("Low", [tone(200, 1.5), tone(205, 1.5)], embedder).profile,
        enrol("High", [tone(2500, 1.5), tone(2600, 1.5)], embedder).profile,
    ]
    enrolment_frames = len(embedder.frames_embedded)
    timings: dict[str, float] = {}
    heard = hear(recording(2550), SpeakerListener(embedder, lambda: profiles), timings)
    assert heard.transcript.text == "who am I"
    assert heard.speaker is not None and heard.speaker.name == "High"
    assert "speaker" in timings
    # Embedded in windows while it arrived; the silent ones were left out.
    windows = embedder.frames_embedded[enrolment_frames:]
    assert len(windows) >= 2 and max(windows) <= 100


def test_nobody_enrolled_hears_a_guest_and_no_listener_hears_nobody() -> None:
    nobody: list[VoiceProfile] = []
    listener = SpeakerListener(SpectrumEmbedder(), lambda: nobody)
    heard = hear(recording(300), listener, {})
    assert heard.speaker is not None and heard.speaker.as_tuple() == ("guest", 0.0, "voice")
    timings: dict[str, float] = {}
    assert hear(recording(300), None, timings).speaker is None
    assert "speaker" not in timings


class BrokenEmbedder(SpectrumEmbedder):
    def embed_features(self, features: np.ndarray) -> np.ndarray:
        raise RuntimeError("the speaker model is broken")


def test_a_failing_speaker_model_leaves_the_turn_heard_without_a_speaker(
    caplog: pytest.LogCaptureFixture,
) -> None:
    nobody: list[VoiceProfile] = []
    timings: dict[str, float] = {}
    heard = hear(recording(300), SpeakerListener(BrokenEmbedder(), lambda: nobody), timings)
    assert heard.transcript.text == "who am I" and heard.speaker is None
    assert "speaker recognition failed" in caplog.text
