"""The `asr` program: a `transcribe` (optional), then `audio-start`, `audio-chunk`s and
`audio-stop`, heard while it arrives as a device's recording is (`Voice.hear_arriving`: the
same stretches transcribed as the person pauses, the same limits as an upload). The words
leave as `transcript-chunk`s as each stretch is heard (between `transcript-start` and
`transcript-stop`), then the whole `transcript`, the event Home Assistant waits for."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from wyoming.asr import Transcript, TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.event import Event

from lobug.audio import MAX_RATE, MIN_RATE, STREAMING_DATA_SIZE, AudioError, wav_header
from lobug.backends.base import SpeechNotReady
from lobug.services import Services
from lobug.voice.listening import Heard, hear_arriving
from lobug.wyoming.handle import device_of
from lobug.wyoming.limits import DEFAULT_DEVICE, STREAM_TIMEOUT_S, Refused

Send = Callable[[Event], Awaitable[None]]


@dataclass(frozen=True)
class AudioFormat:
    rate: int
    width: int
    channels: int

    @classmethod
    def of(cls, event: Event) -> AudioFormat:
        """The format an `audio-start` or `audio-chunk` names. Raises Refused."""
        values = [event.data.get(key) for key in ("rate", "width", "channels")]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise Refused(f"{event.type} needs rate, width and channels")
        found = cls(*values)  # type: ignore[arg-type]
        if found.width != 2 or found.channels not in (1, 2):
            raise Refused("audio must be 16-bit (width 2), mono or stereo", "bad_audio")
        if not MIN_RATE <= found.rate <= MAX_RATE:
            raise Refused("the audio rate must be 8-48 kHz", "bad_audio")
        return found


class Hearing:
    """One connection's speech to text, one recording at a time."""

    def __init__(self, svc: Services, send: Send) -> None:
        self.svc, self.send = svc, send
        self.device = DEFAULT_DEVICE
        self._format: AudioFormat | None = None
        self._pcm: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._hearing: asyncio.Task[Heard] | None = None
        self._words = ""  # heard so far
        self._sent = ""  # of which sent as chunks
        self._deadline = 0.0
        self._named = False  # a satellite was named: its prompt is read while it speaks

    @property
    def listening(self) -> bool:
        return self._hearing is not None

    def transcribe(self, event: Event) -> None:
        context = event.data.get("context")
        self.device = device_of(context if isinstance(context, dict) else None)
        self._named = self.device != DEFAULT_DEVICE

    async def start(self, event: Event) -> None:
        if self._hearing is not None:
            raise Refused("audio-start while a recording is still open")
        self._format = AudioFormat.of(event)
        try:
            self.svc.speech.require()
        except SpeechNotReady as exc:
            raise Refused(str(exc), "not_ready") from None
        self._pcm, self._words, self._sent = asyncio.Queue(), "", ""
        self._deadline = time.monotonic() + STREAM_TIMEOUT_S
        self._hearing = asyncio.create_task(self._heard_from(self._pieces(self._format)))
        await self.send(TranscriptStart().event())

    async def chunk(self, event: Event) -> None:
        if self._hearing is None:
            await self.start(event)  # a client may send the chunks' format alone
        if AudioFormat.of(event) != self._format:
            raise Refused("an audio-chunk's format differs from its audio-start's", "bad_audio")
        if time.monotonic() > self._deadline:
            raise Refused(f"an audio stream went on past {STREAM_TIMEOUT_S:g} s", "timeout")
        assert self._hearing is not None
        if self._hearing.done():
            await self._heard_all()  # it failed: its reason closes the connection
        self._pcm.put_nowait(event.payload or b"")
        await self._send_words(self._words)

    async def stop(self) -> None:
        if self._hearing is None:
            await self.send(Transcript(text="").event())  # nothing was recorded
            return
        heard = await self._heard_all()
        text = heard.transcript.text
        await self._send_words(text)
        await self.send(TranscriptStop().event())
        await self.send(Transcript(text=text, language=heard.transcript.language or None).event())

    def close(self) -> None:
        """The client left: a recording still open is dropped."""
        if self._hearing is not None:
            self._hearing.cancel()
            self._hearing = None

    async def _heard_all(self) -> Heard:
        assert self._hearing is not None
        self._pcm.put_nowait(None)
        hearing, self._hearing = self._hearing, None
        try:
            return await hearing
        except AudioError as exc:
            raise Refused(str(exc), "bad_audio") from None

    async def _heard_from(self, pieces: AsyncIterator[bytes]) -> Heard:
        """Heard as a device's recording is: with the satellite's prompt read ahead when one
        was named, else (Home Assistant's speech to text names none) without: no turn of an
        unknown device is prepared on the cores whisper needs."""
        if self._named:
            return await self.svc.voice.hear_arriving(self.device, pieces, {}, self._heard)
        settings = self.svc.settings
        return await hear_arriving(
            pieces,
            self.svc.speech.require()[0],
            _no_read_ahead,
            max_seconds=settings.max_audio_seconds,
            max_bytes=settings.max_audio_bytes,
            timings={},
            words_heard=self._heard,
            read_standing=False,
        )

    async def _pieces(self, fmt: AudioFormat) -> AsyncIterator[bytes]:
        yield wav_header(fmt.rate, STREAMING_DATA_SIZE, fmt.channels)
        while (piece := await self._pcm.get()) is not None:
            yield piece

    def _heard(self, words: str, covered: int) -> None:
        self._words = words

    async def _send_words(self, words: str) -> None:
        """The words heard since the last chunk (when what was sent still begins them)."""
        if words.startswith(self._sent) and words.strip() != self._sent.strip():
            new, self._sent = words[len(self._sent) :], words
            await self.send(TranscriptChunk(text=new).event())


def _no_read_ahead(heard: str, answer: bool) -> None:
    """No device's prompt is read ahead (`listening.Prime`)."""
