"""The end of a turn heard from the audio: Smart Turn v3.2 (Daily, BSD-2-Clause,
LICENSES/smart-turn-BSD-2-Clause.txt), the 8 MB int8 ONNX file the `pipecat-ai` package ships
(requirements-nodeps.txt). Only the file is used: the package is found with
`importlib.util.find_spec`, which reads where it lies without running it, and never imported.

The model reads the last 8 seconds of the turn (zero-padded at the start when shorter) as
Whisper's 80 log-mel bins, after the waveform is scaled to zero mean and unit variance, and
answers the probability that the person has finished. Whisper's features come from
faster-whisper (already there for speech recognition): on this input they match the ones
Smart Turn was trained on to 1e-5. One call takes about 70 ms of CPU on one thread here."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from lobug.backends.base import BackendUnavailable, TurnEnd, cpu_session

RATE = 16_000
WINDOW_SAMPLES = 8 * RATE  # the model hears the last 8 s
MEL_BINS = 80
FRAMES = WINDOW_SAMPLES // 160  # Whisper's 10 ms hop
PACKAGE = "pipecat"
MODEL_FILE = ("audio", "turn", "smart_turn", "data", "smart-turn-v3.2-cpu.onnx")
MAX_SAMPLE = 32768.0
VARIANCE_FLOOR = 1e-7


def smart_turn_file() -> Path:
    """Where the installed `pipecat-ai` keeps the model (the package is not imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder).joinpath(*MODEL_FILE)
        if path.is_file():
            return path
    raise BackendUnavailable(
        "the Smart Turn model was not found: install pipecat-ai (requirements-nodeps.txt) "
        "or set LOBUG_TURN_END=silence"
    )


class SmartTurn(TurnEnd):
    name = "smart-turn"
    model = "smart-turn-v3.2-cpu"

    def __init__(self, path: Path | None = None, *, threads: int = 1) -> None:
        from faster_whisper.feature_extractor import FeatureExtractor

        self._session: Any = cpu_session(str(path or smart_turn_file()), threads)
        self._features: Any = FeatureExtractor(feature_size=MEL_BINS)

    def completion_probability(self, pcm: npt.NDArray[np.int16]) -> float:
        features = self._features(normalised(last_window(pcm)), padding=0)[:, :FRAMES]
        batch = np.ascontiguousarray(features[np.newaxis], dtype=np.float32)
        (probability,) = self._session.run(None, {"input_features": batch})[0][0]
        return float(probability)


def last_window(pcm: npt.NDArray[np.int16]) -> npt.NDArray[np.float32]:
    """The last 8 s of `pcm` as float audio, zeros before it when it is shorter."""
    window = np.zeros(WINDOW_SAMPLES, dtype=np.float32)
    kept = pcm[-WINDOW_SAMPLES:]
    if len(kept):
        window[-len(kept) :] = kept.astype(np.float32) / MAX_SAMPLE
    return window


def normalised(audio: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """`audio` at zero mean and unit variance (as the model was trained)."""
    scaled = (audio - audio.mean()) / np.sqrt(audio.var() + VARIANCE_FLOOR)
    return scaled.astype(np.float32)
