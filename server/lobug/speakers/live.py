"""The speaker embedding computed while the person speaks. The recording so far is handed over
as it grows; each whole window of it (`WINDOW_S`) is embedded once, and when the utterance ends
only the rest is left to embed. The utterance's embedding is the mean of the windows' weighted
by their length, so nothing is computed twice. Windows mostly silent (a device's leading or
closing silence) are left out.

`LiveEmbedding` does the work (blocking, one caller at a time); `SpeakerListener` runs it off
the event loop for a recording arriving in a voice turn and says who spoke at the end."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from lobug.speakers import fbank
from lobug.speakers.embedder import MIN_FRAMES, Embedding, SpeakerEmbedder, normalised
from lobug.speakers.identify import THRESHOLD, Speaker, VoiceProfile, VoiceSample, identify
from lobug.speakers.profiles import utterance_problem

WINDOW_S = 1.0  # scripts/bench_speakers.py compares windows with whole utterances
MIN_TAIL_FRAMES = 50  # a rest shorter than 0.5 s adds little and is left out, after a window
MIN_SPEECH_RMS = 0.003  # of a 10 ms block: quieter is silence
MIN_SPEECH_SHARE = 0.5  # a window mostly silent is left out

Samples = npt.NDArray[np.floating]
WINDOW_FRAMES = int(WINDOW_S * 100)


class LiveEmbedding:
    def __init__(self, embedder: SpeakerEmbedder, window_frames: int = WINDOW_FRAMES) -> None:
        self.embedder = embedder
        self.window_frames = window_frames
        self._done = 0  # frames embedded (or skipped as silence)
        self._embeddings: list[Embedding] = []
        self._weights: list[int] = []

    def advance(self, samples: Samples) -> None:
        """Embed the whole windows of the recording so far (`samples`, from its start) that
        were not embedded yet."""
        while fbank.frames_ready(len(samples)) - self._done >= self.window_frames:
            self._embed_frames(samples, self.window_frames)

    def finish(self, samples: Samples) -> Embedding | None:
        """The utterance has ended: its embedding, None when too little speech was heard."""
        self.advance(samples)
        rest = fbank.frames_ready(len(samples)) - self._done
        if rest >= (MIN_TAIL_FRAMES if self._embeddings else MIN_FRAMES):
            self._embed_frames(samples, rest)
        if not self._embeddings:
            return None
        weights = np.asarray(self._weights, dtype=np.float32)[:, None]
        return normalised((np.stack(self._embeddings) * weights).sum(axis=0))

    def _embed_frames(self, samples: Samples, count: int) -> None:
        start = self._done
        self._done += count
        stretch = samples[start * fbank.SHIFT : (start + count - 1) * fbank.SHIFT + fbank.FRAME]
        if speech_share(stretch) < MIN_SPEECH_SHARE:
            return
        features = fbank.log_mel(samples, start)[:count]
        self._embeddings.append(self.embedder.embed_features(features))
        self._weights.append(count)


def speech_share(samples: Samples) -> float:
    """The share of the 10 ms blocks of `samples` loud enough to be speech."""
    blocks = len(samples) // fbank.SHIFT
    if blocks == 0:
        return 0.0
    shaped = np.asarray(samples[: blocks * fbank.SHIFT], dtype=np.float32).reshape(blocks, -1)
    return float(np.mean(np.sqrt(np.mean(np.square(shaped), axis=1)) >= MIN_SPEECH_RMS))


class SpeakerListener:
    """Hears a recording as it arrives (`hear` with the samples so far, from the event loop)
    and says who spoke when it ends (`finish`). At most one embedding runs at a time, in a
    thread; a `hear` while one runs is caught up by the next."""

    def __init__(
        self,
        embedder: SpeakerEmbedder,
        profiles: Callable[[], list[VoiceProfile]],
        threshold: float = THRESHOLD,
    ) -> None:
        self._live = LiveEmbedding(embedder)
        self._profiles = profiles
        self._threshold = threshold
        self._running: asyncio.Task[None] | None = None

    def hear(self, samples: Samples) -> None:
        running = self._running
        if running is not None and (not running.done() or running.exception() is not None):
            return  # still at work, or failed: `finish` raises what it raised
        self._running = asyncio.create_task(asyncio.to_thread(self._live.advance, samples))

    async def finish(self, samples: Samples) -> Speaker | None:
        """Who spoke (a guest when nobody enrolled is near), None without enough speech."""
        if self._running is not None:
            await self._running
        return await asyncio.to_thread(self.identify_whole, samples)

    def identify_whole(self, samples: Samples) -> Speaker | None:
        """Who spoke a recording heard whole (blocking: call it from a worker thread), with
        the utterance's sample for enrolment by voice."""
        embedding = self._live.finish(samples)
        if embedding is None:
            return None
        speaker = identify(embedding, self._profiles(), self._threshold)
        return replace(speaker, sample=VoiceSample(embedding, utterance_problem(samples)))

    def cancel(self) -> None:
        if self._running is not None:
            self._running.cancel()
