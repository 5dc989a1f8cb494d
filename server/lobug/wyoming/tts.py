"""The `tts` program: piper at the voice's own rate. `synthesize` is said as one audio stream;
a `synthesize-start`/`-chunk`/`-stop` stream is said sentence by sentence as its text arrives
(each sentence one `audio-start`/`-chunk`/`-stop`), then `synthesize-stopped`. The
`synthesize` a client sends inside a stream (for older servers) is let pass."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event
from wyoming.tts import SynthesizeStopped

from lobug.backends.base import SpeechNotReady, TextToSpeech
from lobug.services import Services
from lobug.turn.spoken import sentence_ends
from lobug.wyoming.limits import STREAM_TIMEOUT_S, Refused
from lobug.wyoming.worker import walked

Send = Callable[[Event], Awaitable[None]]
CHUNK_SAMPLES = 1024  # audio sent in chunks of this many samples (46 ms at 22 kHz)


def speaker(svc: Services) -> TextToSpeech:
    """The voice, or Refused while the speech models are not there."""
    try:
        return svc.speech.require()[1]
    except SpeechNotReady as exc:
        raise Refused(str(exc), "not_ready") from None


class Speaking:
    """One connection's text to speech: a whole text, or a stream of text chunks."""

    def __init__(self, svc: Services, send: Send, left: Callable[[], bool]) -> None:
        self.svc, self.send, self.left = svc, send, left
        self.max_chars = svc.settings.max_text_chars
        self.streaming = False
        self._text = ""  # the stream's text not yet said
        self._chars = 0  # the stream's text so far
        self._deadline = 0.0

    async def synthesize(self, event: Event) -> None:
        if self.streaming:
            return  # the whole text of the stream, sent for older servers: said already
        text = _text(event)
        self._check_size(len(text))
        await self._say(text)

    def start(self) -> None:
        self.streaming, self._text, self._chars = True, "", 0
        self._deadline = time.monotonic() + STREAM_TIMEOUT_S

    async def chunk(self, event: Event) -> None:
        if not self.streaming:
            raise Refused("synthesize-chunk outside a synthesize-start/-stop stream")
        if time.monotonic() > self._deadline:
            raise Refused(f"a text stream went on past {STREAM_TIMEOUT_S:g} s", "timeout")
        piece = _text(event)
        self._chars += len(piece)
        self._check_size(self._chars)
        self._text += piece
        ends = sentence_ends(self._text, finished=False)
        if ends:
            ready, self._text = self._text[: ends[-1]], self._text[ends[-1] :]
            await self._say_each(ready)

    async def stop(self) -> None:
        if not self.streaming:
            raise Refused("synthesize-stop without synthesize-start")
        self.streaming = False
        if self._text.strip():
            await self._say_each(self._text)
        self._text = ""
        await self.send(SynthesizeStopped().event())

    async def _say(self, text: str) -> None:
        """`text` as one audio stream, each sentence's sound sent once it is made."""
        rate = speaker(self.svc).sample_rate
        await self.send(AudioStart(rate=rate, width=2, channels=1).event())
        for sentence in sentences_of(text):
            await self._speak(sentence)
        await self.send(AudioStop().event())

    async def _say_each(self, text: str) -> None:
        """Each sentence of `text` as an audio stream of its own (a streamed text)."""
        for sentence in sentences_of(text):
            await self._say(sentence)

    async def _speak(self, sentence: str) -> None:
        tts = speaker(self.svc)
        rate = tts.sample_rate
        speech = walked(lambda: tts.synthesize(sentence), self.left)
        async with contextlib.aclosing(speech) as pieces:
            async for pcm in pieces:
                for chunk in _chunks(pcm):
                    await self.send(AudioChunk(rate=rate, width=2, channels=1, audio=chunk).event())

    def _check_size(self, chars: int) -> None:
        if chars > self.max_chars:
            raise Refused(f"the text is over {self.max_chars} characters", "too_large")


def _text(event: Event) -> str:
    text = event.data.get("text")
    if not isinstance(text, str):
        raise Refused(f"{event.type} without text")
    return text


def sentences_of(text: str) -> list[str]:
    """The sentences of `text` (piper makes a whole text's sound before giving any of it)."""
    cuts = [0, *sentence_ends(text, finished=True), len(text)]
    found = (text[start:end].strip() for start, end in itertools.pairwise(cuts))
    return [sentence for sentence in found if sentence]


def _chunks(pcm: np.ndarray) -> list[bytes]:
    data = np.asarray(pcm, dtype="<i2").tobytes()
    size = CHUNK_SAMPLES * 2
    return [data[start : start + size] for start in range(0, len(data), size)]
