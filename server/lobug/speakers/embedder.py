"""Speaker embeddings: one small interface, and the WeSpeaker ResNet34 backend on ONNX Runtime
(CPU, loaded lazily, no torch)."""

from __future__ import annotations

import threading
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from lobug.speakers import fbank
from lobug.speakers.model_file import model_bytes

Embedding = npt.NDArray[np.float32]
# The model's name as stored beside each voice profile: a profile is compared only with
# embeddings of the model that made it.
MODEL = "pyannote-community-1-wespeaker-resnet34"
MIN_FRAMES = 20  # 0.2 s of features: less is refused, not embedded


class SpeakerEmbedder(Protocol):
    """Turns 16 kHz speech into a unit vector; the same person's speech lies close by cosine."""

    dimension: int

    def embed(self, pcm16k: npt.NDArray[np.floating]) -> Embedding: ...

    def embed_features(self, features: npt.NDArray[np.float32]) -> Embedding: ...


def normalised(vector: npt.NDArray[np.floating]) -> Embedding:
    norm = float(np.linalg.norm(vector))
    if norm == 0.0 or not np.isfinite(norm):
        raise ValueError("an embedding of zero length cannot be normalised")
    return (np.asarray(vector, dtype=np.float32) / norm).astype(np.float32)


class WeSpeakerEmbedder:
    """pyannote's community-1 WeSpeaker ResNet34 (`model_file`): 80-bin log mel features,
    mean-normalised over the utterance, -> a 256-dimensional embedding. The session is made on
    first use, once, under a lock; calls may come from several threads."""

    dimension = 256

    def __init__(self, threads: int = 2) -> None:
        self.threads = threads
        self._session: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if self._session is None:
                self._session = self._new_session()

    def embed(self, pcm16k: npt.NDArray[np.floating]) -> Embedding:
        return self.embed_features(fbank.log_mel(pcm16k))

    def embed_features(self, features: npt.NDArray[np.float32]) -> Embedding:
        if len(features) < MIN_FRAMES:
            raise ValueError(f"too little audio for a speaker embedding ({len(features)} frames)")
        self.load()
        centred = (features - features.mean(axis=0, keepdims=True))[None].astype(np.float32)
        weights = np.ones(centred.shape[:2], dtype=np.float32)
        (output,) = self._session.run(None, {"fbank": centred, "weights": weights})
        return normalised(output[0])

    def _new_session(self) -> Any:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        return onnxruntime.InferenceSession(
            model_bytes(), options, providers=["CPUExecutionProvider"]
        )
