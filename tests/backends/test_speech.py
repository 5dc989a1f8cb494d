"""The speech backends: the encoder window fitted to the clip and the decoding's bounds (pure),
and the bundled whisper hearing piper's speech the same with it as with whisper's full
30-second window."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from lobug.audio import STT_RATE, resample
from lobug.backends.speech import (
    WINDOW_MARGIN_FRAMES,
    PiperTTS,
    WhisperSTT,
    fitted_window,
    most_tokens_heard,
    segments_before_the_tail,
)


def padded(content_frames: int, total: int = 3000) -> np.ndarray:
    features = np.zeros((80, total), dtype=np.float32)
    features[:, :content_frames] = 0.25
    return features


def test_the_window_keeps_the_clip_and_a_margin_rounded_up_to_whole_seconds() -> None:
    window = fitted_window(padded(176))
    assert window.shape == (80, 500)  # 176 + 300 frames, rounded up to 500
    assert window[:, :176].min() == 0.25 and not window[:, 176:].any()
    assert window.flags["C_CONTIGUOUS"]


def test_a_batch_of_features_is_cut_on_its_last_axis() -> None:
    assert fitted_window(padded(1000)[None]).shape == (1, 80, 1300)


def test_a_long_clip_keeps_the_whole_window() -> None:
    for content in (3000 - WINDOW_MARGIN_FRAMES + 1, 3000):
        features = padded(content)
        assert fitted_window(features) is features


def test_an_all_padding_window_keeps_the_margin() -> None:
    assert fitted_window(padded(0)).shape == (80, 400)


@dataclass
class Segment:
    end: float


def test_the_rest_of_a_clip_after_a_segment_ending_near_its_end_is_not_decoded() -> None:
    def decoded() -> Iterator[Segment]:
        yield Segment(1.4)  # 1.6 s left: decode on
        yield Segment(2.76)
        raise AssertionError("the last 0.24 s was decoded")

    assert [s.end for s in segments_before_the_tail(decoded(), 3.0)] == [1.4, 2.76]
    assert [s.end for s in segments_before_the_tail(iter([Segment(2.0)]), 3.0)] == [2.0]


def test_whisper_may_write_more_than_anyone_says_but_no_more() -> None:
    assert most_tokens_heard(2.0) == 26  # 8 a second, and 10
    assert most_tokens_heard(60.0) == most_tokens_heard(30.0) == 250  # per 30 s window


@pytest.mark.models
def test_speech_is_heard_as_with_the_full_window() -> None:
    tts = PiperTTS()
    text = "Remind me to call my mother on Sunday afternoon."
    pcm = np.concatenate(list(tts.synthesize(text))).astype(np.float32) / 32768
    samples = np.concatenate(
        [resample(pcm, tts.sample_rate, STT_RATE), np.zeros(STT_RATE * 8 // 10, np.float32)]
    )
    fitted = WhisperSTT().transcribe(samples)
    assert WhisperSTT(fit_window=False).transcribe(samples).text == fitted.text
    assert "mother" in fitted.text.lower() and "sunday" in fitted.text.lower()
