"""The speaker embedding computed while the person speaks (`lobug.speakers.live`)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from lobug.speakers.embedder import WeSpeakerEmbedder
from lobug.speakers.identify import VoiceProfile, similarity
from lobug.speakers.live import LiveEmbedding, SpeakerListener
from lobug.speakers.profiles import enrol
from tests.speakers.voices import SpectrumEmbedder, tone, voice

SILENCE = np.zeros(16_000, dtype=np.float32)


def arriving(samples: np.ndarray, step: int = 1_600) -> list[np.ndarray]:
    """The recording so far, every 100 ms, as a device uploads it."""
    return [samples[:end] for end in range(step, len(samples) + step, step)]


def test_each_window_is_embedded_once_as_it_arrives_and_only_the_rest_at_the_end() -> None:
    embedder = SpectrumEmbedder()
    live = LiveEmbedding(embedder, window_frames=100)
    samples = tone(220, 2.7)
    for so_far in arriving(samples)[:-1]:
        live.advance(so_far)
    assert embedder.frames_embedded == [100, 100]
    embedding = live.finish(samples)
    assert embedder.frames_embedded == [100, 100, 68]
    assert embedding is not None
    assert similarity(embedding, embedder.embed(samples)) > 0.99


def test_silent_windows_are_left_out_and_silence_alone_gives_nothing() -> None:
    embedder = SpectrumEmbedder()
    live = LiveEmbedding(embedder, window_frames=100)
    samples = np.concatenate([SILENCE, tone(220, 1.0), SILENCE])
    for so_far in arriving(samples):
        live.advance(so_far)
    assert live.finish(samples) is not None
    assert len(embedder.frames_embedded) == 1
    assert LiveEmbedding(SpectrumEmbedder()).finish(SILENCE) is None
    assert LiveEmbedding(SpectrumEmbedder()).finish(tone(220, 0.1)) is None


def test_the_listener_says_who_spoke_when_the_recording_ends() -> None:
    embedder = SpectrumEmbedder()
    profiles = [
        enrol("Low", [tone(200, 1.5), tone(205, 1.5)], embedder).profile,
        enrol("High", [tone(2500, 1.5), tone(2600, 1.5)], embedder).profile,
    ]

    async def hear(samples: np.ndarray) -> tuple[str, float, str] | None:
        listener = SpeakerListener(embedder, lambda: profiles)
        for so_far in arriving(samples):
            listener.hear(so_far)
            await asyncio.sleep(0)
        speaker = await listener.finish(samples)
        return None if speaker is None else speaker.as_tuple()

    low = asyncio.run(hear(tone(210, 2.0)))
    assert low is not None and low[0] == "Low" and low[2] == "voice"
    assert asyncio.run(hear(SILENCE)) is None
    nobody: list[VoiceProfile] = []
    profiles = nobody
    assert asyncio.run(hear(tone(210, 2.0))) == ("guest", 0.0, "voice")


@pytest.mark.models
def test_live_embedding_of_a_real_voice_agrees_with_the_whole() -> None:
    embedder = WeSpeakerEmbedder(threads=2)
    samples = voice("maxim-1")
    live = LiveEmbedding(embedder)
    for so_far in arriving(samples):
        live.advance(so_far)
    embedding = live.finish(samples)
    assert embedding is not None
    assert similarity(embedding, embedder.embed(samples)) > 0.8
    assert similarity(embedding, embedder.embed(voice("maxim-2"))) > similarity(
        embedding, embedder.embed(voice("carlo-1"))
    )
