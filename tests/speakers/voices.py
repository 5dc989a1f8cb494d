"""Real voices for the speaker tests, and a fake embedder for the logic around them.

The clips in tests/data/voices are unmodified Asterisk prompts (Debian's
asterisk-core-sounds-*-wav; tests/data/voices/README.md credits them): Carlo Flora (Italian,
CC-BY-3.0), Maxim of ivrvoice.ru (Russian, CC-BY-3.0), June Wallack (French, CC-BY-SA-3.0)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from lobug.audio import STT_RATE, parse_wav, resample
from lobug.speakers import fbank
from lobug.speakers.embedder import MIN_FRAMES, Embedding, normalised

VOICES = Path(__file__).resolve().parents[1] / "data" / "voices"


def voice(name: str) -> npt.NDArray[np.float32]:
    """A clip (`carlo-1`, ...) as 16 kHz float samples."""
    audio = parse_wav((VOICES / f"{name}.wav").read_bytes())
    return resample(audio.samples, audio.sample_rate, STT_RATE)


def tone(hz: float, seconds: float, level: float = 0.2) -> npt.NDArray[np.float32]:
    t = np.arange(int(STT_RATE * seconds)) / STT_RATE
    return (np.sin(2 * np.pi * hz * t) * level).astype(np.float32)


class SpectrumEmbedder:
    """A fake `SpeakerEmbedder`: the utterance's mean log mel spectrum, centred and normalised,
    so tones of one pitch are one "voice". Counts the frames it was given."""

    dimension = fbank.MEL_BINS

    def __init__(self) -> None:
        self.frames_embedded: list[int] = []

    def embed(self, pcm16k: npt.NDArray[np.floating]) -> Embedding:
        return self.embed_features(fbank.log_mel(pcm16k))

    def embed_features(self, features: npt.NDArray[np.float32]) -> Embedding:
        if len(features) < MIN_FRAMES:
            raise ValueError("too little audio")
        self.frames_embedded.append(len(features))
        spectrum = features.mean(axis=0)
        return normalised(spectrum - spectrum.mean())
