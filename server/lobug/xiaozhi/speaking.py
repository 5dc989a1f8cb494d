"""One answer said over a xiaozhi connection: its sentences as `tts sentence_start`, each
then its sound as Opus frames paced like playback (at most `LEAD_S` ahead), until the end or an
abort; each sentence logged as it is said (`Logged`: a kill -9 keeps what was), then what was
said is stored (`Finish`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np

from lobug.audio import resample
from lobug.xiaozhi import messages
from lobug.xiaozhi.limits import FRAME_MS
from lobug.xiaozhi.opus import OpusEncoder
from lobug.xiaozhi.timing import TurnClock

if TYPE_CHECKING:
    from lobug.xiaozhi.session import Session

log = logging.getLogger(__name__)

LEAD_S = 0.3  # how far the sound sent may run ahead of the device's playback
ENCODE_FRAMES = 4  # a sentence's sound is encoded this many frames at a time


Spoken = Callable[[], Iterator[str | np.ndarray]]  # sentences, each then its int16 PCM
Finish = Callable[[list[str], bool], None]  # what was said, and whether it was cut off
Logged = Callable[[list[str]], None]  # what was said so far, logged (blocking)


class Reply:
    """One answer being said: a worker thread walks its sentences and their sound (`spoken`),
    the event loop sends them paced like playback; `finish` stores what was said."""

    def __init__(
        self,
        session: Session,
        spoken: Spoken,
        finish: Finish,
        stop: threading.Event | None = None,
        clock: TurnClock | None = None,
        logged: Logged | None = None,
    ) -> None:
        self.session = session
        self._logged = logged  # each sentence as it is said, so a crash keeps what was
        self.clock = clock or TurnClock()  # the first sentence, sound and frame marked
        self._spoken, self._finish = spoken, finish
        self.stop = stop or threading.Event()  # set at an abort: the model asks it per token
        self.aborted = asyncio.Event()
        self.said: list[str] = []
        self.last_frame_at = 0.0
        self._pieces: asyncio.Queue[object] = asyncio.Queue()
        self._done = object()
        self._produced = threading.Event()  # the worker has stopped

    def produce(self, loop: asyncio.AbstractEventLoop) -> None:
        """In a worker thread: the pieces into the queue until done or stopped."""
        try:
            for piece in self._spoken():
                if self.stop.is_set():
                    break
                loop.call_soon_threadsafe(self._pieces.put_nowait, piece)
        except Exception:
            log.exception("the answer of %s failed", self.session.device)
        finally:
            self._produced.set()
            loop.call_soon_threadsafe(self._pieces.put_nowait, self._done)

    def close(self) -> None:
        """Blocking: once the worker has stopped, store what was said."""
        self._produced.wait()
        self._finish(self.said, self.aborted.is_set())

    async def send(self, rate: int, tts_rate: int) -> None:
        """Send each sentence's text and sound until the end or an abort."""
        session, encoder = self.session, OpusEncoder(rate)
        playback = time.perf_counter()
        while (piece := await self._next()) is not self._done:
            if isinstance(piece, str):
                self.clock.mark("sentence")
                self.said.append(piece)
                await session.send(messages.tts(session.id, "sentence_start", piece))
                if self._logged is not None:
                    await asyncio.to_thread(self._logged, list(self.said))
                continue
            self.clock.mark("pcm")
            pcm = _at_rate(np.asarray(piece), tts_rate, rate)
            # The first frames leave before the rest is encoded; the loop is never held long.
            step = rate * FRAME_MS * ENCODE_FRAMES // 1000
            for start in range(0, len(pcm), step):
                if self.aborted.is_set():
                    break
                playback = await self._send_packets(
                    encoder.encode(pcm[start : start + step]), playback
                )
        if not self.aborted.is_set():
            await self._send_packets(encoder.flush(), playback)
        self.stop.set()  # all said, or aborted: an abort from now on cuts nothing
        await session.send(messages.tts(session.id, "stop"))

    async def _next(self) -> object:
        """The next piece, or `_done` at once when the answer is aborted."""
        getting = asyncio.ensure_future(self._pieces.get())
        stopping = asyncio.ensure_future(self.aborted.wait())
        await asyncio.wait({getting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if getting.done() and not self.aborted.is_set():
            return getting.result()
        getting.cancel()
        return self._done

    async def _send_packets(self, packets: list[bytes], playback: float) -> float:
        """Send at the pace of playback, at most `LEAD_S` ahead; stops at an abort."""
        frame_s = FRAME_MS / 1000
        for packet in packets:
            playback = max(playback, time.perf_counter()) + frame_s
            ahead = playback - time.perf_counter() - LEAD_S
            if ahead > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.aborted.wait(), ahead)
            if self.aborted.is_set():
                return playback
            await self.session.send_audio(packet)
            self.last_frame_at = time.perf_counter()
            self.clock.mark("frame", self.last_frame_at)
        return playback

    def abort(self) -> None:
        if not self.stop.is_set():
            self.aborted.set()
            self.stop.set()


def _at_rate(pcm: np.ndarray, source: int, target: int) -> np.ndarray:
    if source == target:
        return pcm.astype(np.int16)
    floats = resample(pcm.astype(np.float32) / 32768.0, source, target)
    return (np.clip(floats, -1, 1) * 32767).astype(np.int16)
