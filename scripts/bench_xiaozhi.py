"""The xiaozhi WebSocket turn of `bench_voice.py`, paced like a device: 60 ms Opus frames in
real time (16 kHz, protocol version 1, `listen start` in `auto` mode), the recording's speech
then silence until the reply starts, the server's own endpointing deciding where the turn
ends. Measured: from the frame that held the last speech to the first reply audio frame; and
barge-in: `abort` sent `ABORT_AFTER_S` into the reply, to the last reply audio frame received
(on loopback, when the server sent it)."""

from __future__ import annotations

import asyncio
import json
import time
import wave
from dataclasses import dataclass, field
from io import BytesIO

import numpy as np

from lobug.xiaozhi.opus import OpusEncoder

RATE = 16_000
FRAME = RATE * 60 // 1000
ABORT_AFTER_S = 0.3
QUIET_AFTER_ABORT_S = 1.0  # no frame this long after the abort: the reply has stopped
HELLO = {
    "type": "hello",
    "version": 1,
    "features": {"mcp": True},
    "transport": "websocket",
    "audio_params": {"format": "opus", "sample_rate": RATE, "channels": 1, "frame_duration": 60},
}


@dataclass
class DeviceFigures:
    first_audio: list[float] = field(default_factory=list)  # s, last speech -> first audio
    barge_in: list[float] = field(default_factory=list)  # s, abort -> last audio frame
    heard: list[str] = field(default_factory=list)
    failed: int = 0


def speech_frames(wav: bytes, speech_seconds: float) -> tuple[list[bytes], int]:
    """The recording's speech as Opus frames, and the index of the last frame with speech."""
    with wave.open(BytesIO(wav)) as reader:
        pcm = np.frombuffer(reader.readframes(reader.getnframes()), dtype=np.int16)
    speech = pcm[: int(speech_seconds * RATE)]
    encoder = OpusEncoder(RATE)
    frames = encoder.encode(speech) + encoder.flush()
    return frames, len(frames) - 1


def silence_frame() -> bytes:
    return OpusEncoder(RATE).encode(np.zeros(FRAME, dtype=np.int16))[0]


async def device_turn(url: str, wav: bytes, seconds: float, figures: DeviceFigures) -> None:
    import websockets

    frames, last_speech = speech_frames(wav, seconds)
    quiet = silence_frame()
    headers = {"Device-Id": "bench:xiaozhi", "Protocol-Version": "1"}
    async with websockets.connect(url, additional_headers=headers, max_size=2**20) as ws:
        await ws.send(json.dumps(HELLO))
        session = json.loads(await asyncio.wait_for(ws.recv(), 10))["session_id"]
        await ws.send(
            json.dumps({"session_id": session, "type": "listen", "state": "start", "mode": "auto"})
        )
        clock = Clock()
        listener = asyncio.create_task(listen(ws, clock, figures))
        started = time.perf_counter()
        for n in range(10_000):
            if clock.first_audio is not None or listener.done():
                break
            await asyncio.sleep(max(0.0, started + n * 0.06 - time.perf_counter()))
            await ws.send(frames[n] if n < len(frames) else quiet)
            if n == last_speech:
                clock.last_speech = time.perf_counter()
            if n * 0.06 > seconds + 30:
                break
        await settle(ws, session, clock, listener, figures)


@dataclass
class Clock:
    last_speech: float | None = None
    first_audio: float | None = None
    last_audio: float | None = None


async def listen(ws: object, clock: Clock, figures: DeviceFigures) -> None:
    async for message in ws:  # type: ignore[attr-defined]
        if isinstance(message, bytes):
            now = time.perf_counter()
            clock.first_audio = clock.first_audio or now
            clock.last_audio = now
        else:
            body = json.loads(message)
            if body.get("type") == "stt":
                figures.heard.append(body.get("text", ""))
            if body.get("type") == "tts" and body.get("state") == "stop":
                return


async def settle(
    ws: object, session: str, clock: Clock, listener: asyncio.Task[None], figures: DeviceFigures
) -> None:
    if clock.first_audio is None or clock.last_speech is None:
        figures.failed += 1
        listener.cancel()
        return
    figures.first_audio.append(clock.first_audio - clock.last_speech)
    await asyncio.sleep(ABORT_AFTER_S)
    if listener.done():  # the whole reply was shorter: nothing to interrupt
        return
    aborted = time.perf_counter()
    await ws.send(json.dumps({"session_id": session, "type": "abort"}))  # type: ignore[attr-defined]
    while (
        clock.last_audio is not None
        and time.perf_counter() - max(clock.last_audio, aborted) < QUIET_AFTER_ABORT_S
    ):
        await asyncio.sleep(0.05)
    listener.cancel()
    assert clock.last_audio is not None
    figures.barge_in.append(max(0.0, clock.last_audio - aborted))
