"""The speech backends: the encoder window fitted to the clip (pure), and the bundled whisper
hearing piper's speech the same with it as with whisper's full 30-second window."""

from __future__ import annotations

import numpy as np
import pytest

from lobug.audio import STT_RATE, resample
from lobug.backends.speech import (
    WINDOW_MARGIN_FRAMES,
    PiperTTS,
    WhisperSTT,
    fitted_window,
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
