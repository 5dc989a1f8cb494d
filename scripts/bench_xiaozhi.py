"""The xiaozhi WebSocket turns of `bench_voice.py`, paced like a device: 60 ms Opus frames in
real time (16 kHz, protocol version 1), the server's own endpointing deciding where a turn
ends. Three kinds:

- `device_turn`: `listen start` in `auto` (or `realtime`) mode, the recording's speech then
  silence until the reply starts. Measured: from the frame that held the last speech to the
  first reply audio frame; then barge-in, `ABORT_AFTER_S` into the reply: in `auto` an
  `abort`, in `realtime` speech (another recording, sent as the device would hear it), to the
  last reply audio frame received (on loopback, when the server sent it).
- `pause_turn`: one sentence said in two halves with a pause of 400-700 ms between them; a
  false turn end is the server's `stt` arriving before the second half has been sent."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from lobug.xiaozhi.opus import OpusEncoder

RATE = 16_000
FRAME = RATE * 60 // 1000
FRAME_S = 0.06
ABORT_AFTER_S = 0.3
QUIET_AFTER_ABORT_S = 1.0  # no frame this long after the abort: the reply has stopped
PAUSE_WAIT_S = 3.0  # after the second half: long enough for any turn end
HELLO = {
    "type": "hello",
    "version": 1,
    "features": {"mcp": True},
    "transport": "websocket",
    "audio_params": {"format": "opus", "sample_rate": RATE, "channels": 1, "frame_duration": 60},
}
HEADERS = {"Device-Id": "bench:xiaozhi", "Protocol-Version": "1"}


@dataclass
class DeviceFigures:
    first_audio: list[float] = field(default_factory=list)  # s, last speech -> first audio
    barge_in: list[float] = field(default_factory=list)  # s, abort -> last audio frame
    speech_barge_in: list[float] = field(default_factory=list)  # s, speech onset -> last frame
    heard: list[str] = field(default_factory=list)
    failed: int = 0
    pause_turns: int = 0
    false_ends: int = 0


def opus_frames(pcm: npt.NDArray[np.int16]) -> list[bytes]:
    encoder = OpusEncoder(RATE)
    return encoder.encode(pcm) + encoder.flush()


def silence_frame() -> bytes:
    return OpusEncoder(RATE).encode(np.zeros(FRAME, dtype=np.int16))[0]


@dataclass
class Clock:
    last_speech: float | None = None
    first_audio: float | None = None
    last_audio: float | None = None
    stt: float | None = None


async def connect(url: str, mode: str) -> tuple[Any, str]:
    import websockets

    ws = await websockets.connect(url, additional_headers=HEADERS, max_size=2**20)
    await ws.send(json.dumps(HELLO))
    session = json.loads(await asyncio.wait_for(ws.recv(), 10))["session_id"]
    await ws.send(
        json.dumps({"session_id": session, "type": "listen", "state": "start", "mode": mode})
    )
    return ws, session


async def device_turn(
    url: str,
    speech: npt.NDArray[np.int16],
    figures: DeviceFigures,
    *,
    realtime_barge: npt.NDArray[np.int16] | None = None,
) -> None:
    """One turn (see the module); with `realtime_barge`, in `realtime` mode, interrupted by
    that speech, else in `auto` mode, by an `abort`."""
    frames = opus_frames(speech)
    last_speech = len(frames) - 1
    quiet = silence_frame()
    ws, session = await connect(url, "realtime" if realtime_barge is not None else "auto")
    try:
        clock = Clock()
        listener = asyncio.create_task(listen(ws, clock, figures))
        started = time.perf_counter()
        for n in range(10_000):
            if clock.first_audio is not None or listener.done() or n * FRAME_S > 40:
                break
            await asyncio.sleep(max(0.0, started + n * FRAME_S - time.perf_counter()))
            await ws.send(frames[n] if n < len(frames) else quiet)
            if n == last_speech:
                clock.last_speech = time.perf_counter()
        if clock.first_audio is None or clock.last_speech is None:
            figures.failed += 1
            listener.cancel()
            return
        figures.first_audio.append(clock.first_audio - clock.last_speech)
        await asyncio.sleep(ABORT_AFTER_S)
        if listener.done():  # the whole reply was shorter: nothing to interrupt
            return
        if realtime_barge is None:
            aborted = time.perf_counter()
            await ws.send(json.dumps({"session_id": session, "type": "abort"}))
            figures.barge_in.append(await last_frame_after(aborted, clock, listener))
        else:
            sending = asyncio.create_task(send_paced(ws, opus_frames(realtime_barge)))
            onset = time.perf_counter()
            figures.speech_barge_in.append(await last_frame_after(onset, clock, listener))
            sending.cancel()
    finally:
        await ws.close()


async def send_paced(ws: Any, frames: list[bytes]) -> None:
    started = time.perf_counter()
    for n, frame in enumerate(frames):
        await asyncio.sleep(max(0.0, started + n * FRAME_S - time.perf_counter()))
        await ws.send(frame)


async def last_frame_after(since: float, clock: Clock, listener: asyncio.Task[None]) -> float:
    """Seconds from `since` to the last reply frame, once none has come for a while."""
    while (
        not listener.done()
        and clock.last_audio is not None
        and time.perf_counter() - max(clock.last_audio, since) < QUIET_AFTER_ABORT_S
    ):
        await asyncio.sleep(0.02)
    listener.cancel()
    assert clock.last_audio is not None
    return max(0.0, clock.last_audio - since)


async def listen(ws: Any, clock: Clock, figures: DeviceFigures) -> None:
    async for message in ws:
        if isinstance(message, bytes):
            now = time.perf_counter()
            clock.first_audio = clock.first_audio or now
            clock.last_audio = now
            continue
        body = json.loads(message)
        if body.get("type") == "stt":
            clock.stt = clock.stt or time.perf_counter()
            figures.heard.append(body.get("text", ""))
        if body.get("type") == "tts" and body.get("state") == "stop":
            return


async def pause_turn(
    url: str,
    first: npt.NDArray[np.int16],
    pause_s: float,
    second: npt.NDArray[np.int16],
    figures: DeviceFigures,
) -> None:
    """A sentence in two halves with a pause between: counts a false end (see the module)."""
    silence = np.zeros(int(RATE * pause_s), dtype=np.int16)
    frames = opus_frames(np.concatenate([first, silence, second]))
    quiet = silence_frame()
    ws, _ = await connect(url, "auto")
    try:
        clock = Clock()
        listener = asyncio.create_task(listen(ws, clock, figures))
        started = time.perf_counter()
        wait_frames = int(PAUSE_WAIT_S / FRAME_S)
        for n in range(len(frames) + wait_frames):
            if clock.stt is not None:
                break
            await asyncio.sleep(max(0.0, started + n * FRAME_S - time.perf_counter()))
            await ws.send(frames[n] if n < len(frames) else quiet)
            if n == len(frames) - 1:
                clock.last_speech = time.perf_counter()
        listener.cancel()
        figures.pause_turns += 1
        if clock.stt is not None and clock.last_speech is None:
            figures.false_ends += 1
    finally:
        await ws.close()
