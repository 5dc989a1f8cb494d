"""Kaldi-style filterbank features (`lobug.speakers.fbank`)."""

from __future__ import annotations

import numpy as np

from lobug.speakers import fbank
from tests.speakers.voices import tone, voice


def test_frames_are_whole_25_ms_windows_every_10_ms() -> None:
    assert fbank.frames_ready(399) == 0
    assert fbank.frames_ready(400) == 1
    assert fbank.frames_ready(16_000) == 98
    assert fbank.log_mel(tone(440, 1.0)).shape == (98, fbank.MEL_BINS)
    assert fbank.log_mel(tone(440, 0.01)).shape == (0, fbank.MEL_BINS)


def test_a_tone_lights_the_mel_bin_of_its_pitch() -> None:
    low = fbank.log_mel(tone(300, 0.5)).mean(axis=0)
    high = fbank.log_mel(tone(3000, 0.5)).mean(axis=0)
    assert int(np.argmax(low)) < 20 < int(np.argmax(high))


def test_features_from_a_later_frame_are_those_of_the_whole() -> None:
    samples = voice("carlo-1")
    whole = fbank.log_mel(samples)
    assert np.allclose(fbank.log_mel(samples, 40), whole[40:], atol=1e-4)
    assert np.allclose(
        fbank.log_mel(samples[:8_000]), whole[: fbank.frames_ready(8_000)], atol=1e-4
    )
