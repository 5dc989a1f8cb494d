"""The voice endpoints: `/chat/audio` (the contract) and `/chat/audio/stream` (opt-in).

The stream endpoint answers `audio/wav` with chunked transfer: a 44-byte header whose sizes say
"unknown length", then 16-bit mono PCM as each sentence of the answer is synthesized. What the
device needs besides the sound travels in headers known before the first byte:
`X-Lobug-Action`, `X-Lobug-Transcription` (percent-encoded UTF-8), `X-Lobug-Sample-Rate` and
`X-Lobug-Turn`; the reply text is fetched afterwards from `GET /chat/turns/{turn}`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, BackgroundTasks, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import ClientDisconnect

from lobug.api.background import hand_over_exchange
from lobug.api.deps import DeviceId
from lobug.api.device import server_timing
from lobug.api.disconnect import watch_disconnect
from lobug.api.errors import ApiError
from lobug.api.streaming import ClosingStreamingResponse, blocking_stream
from lobug.audio import Audio, AudioError, parse_wav
from lobug.backends.base import Abandoned, Transcript
from lobug.listening import LiveRecording, Stretch, transcribe_stretch
from lobug.services import Services
from lobug.voice import StreamedVoice, Voice, VoiceReply
from lobug.web.deps import ServicesDep

router = APIRouter()

WAV_TYPES = ("audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave")
MULTIPART_OVERHEAD = 16 * 1024


class AudioUpload(BaseModel):
    """The recording: a WAV file as multipart field `audio`, or the whole body as audio/wav."""

    audio: bytes


def upload_body() -> dict[str, Any]:
    """The request body in OpenAPI: the upload's schema under both media types it comes in."""
    form = AudioUpload.model_json_schema()
    content = {
        "multipart/form-data": {"schema": form},
        "audio/wav": {"schema": form["properties"]["audio"]},
    }
    return {"requestBody": {"required": True, "content": content}}


@dataclass(frozen=True)
class Recording:
    audio: Audio
    decode_ms: float


async def recording(request: Request, svc: ServicesDep) -> Recording:
    """The uploaded WAV (multipart field `audio`, or a raw audio/wav body), decoded. The body
    size is bounded by the app's body limit for the audio paths."""
    settings = svc.settings
    multipart = media_type(request) == "multipart/form-data"
    body = await request.body()
    started = time.perf_counter()
    data = await _audio_field(request, body) if multipart else body
    check_audio_size(len(data), settings.max_audio_bytes)
    audio = await asyncio.to_thread(_decode, data, settings.max_audio_seconds)
    return Recording(audio, (time.perf_counter() - started) * 1000)


Upload = Annotated[Recording, Depends(recording)]


def media_type(request: Request) -> str:
    """The upload's media type; 415 for one that cannot hold a recording."""
    content_type = request.headers.get("content-type", "").lower()
    found = content_type.split(";")[0].strip()
    if found != "multipart/form-data" and found not in WAV_TYPES:
        raise ApiError(
            415,
            "unsupported_media_type",
            "Upload the recording as multipart/form-data field 'audio' or as an audio/wav body",
        )
    return found


def check_audio_size(size: int, limit: int) -> None:
    if size > limit:
        raise ApiError(413, "audio_too_large", f"The recording is larger than {limit} bytes")


@router.post("/chat/audio", openapi_extra=upload_body())
async def chat_audio(
    svc: ServicesDep,
    device: DeviceId,
    upload: Upload,
    request: Request,
    background: BackgroundTasks,
) -> JSONResponse:
    timings = {"decode": upload.decode_ms}
    async with watch_disconnect(request) as abandoned:
        reply: VoiceReply = await asyncio.to_thread(
            svc.voice.reply, device, upload.audio, timings, abandoned
        )
    hand_over_exchange(background, svc.memory_work, lambda: reply.exchange)
    background.add_task(svc.voice.prime, device)  # the next turn's prompt, read ahead
    return JSONResponse(
        reply.as_contract(), headers={"Server-Timing": server_timing(svc, device, timings)}
    )


@router.post("/chat/audio/stream", openapi_extra=upload_body())
async def chat_audio_stream(
    svc: ServicesDep,
    device: DeviceId,
    request: Request,
    background: BackgroundTasks,
) -> Response:
    """A raw audio/wav body is transcribed while it arrives (see `lobug.listening`), so a
    device that uploads as it records has its words heard by the time it stops."""
    timings: dict[str, float] = {}
    if media_type(request) in WAV_TYPES:
        heard = await hear_while_uploading(request, svc, timings, device)
    else:
        heard = await hear_upload(request, svc, timings)
    async with watch_disconnect(request) as abandoned:
        streamed: StreamedVoice = await asyncio.to_thread(
            svc.voice.answer_streaming, device, heard.transcript, heard.seconds, timings, abandoned
        )
    headers = {
        "X-Lobug-Action": streamed.action,
        "X-Lobug-Transcription": quote(streamed.transcription, safe=""),
        "X-Lobug-Sample-Rate": str(streamed.sample_rate),
        "X-Lobug-Turn": streamed.turn_id,
        "Server-Timing": server_timing(svc, device, timings),
    }
    hand_over_exchange(background, svc.memory_work, streamed.stored.wait)
    background.add_task(svc.voice.prime, device)  # the next turn's prompt, read ahead
    if streamed.streaming is None:
        return Response(b"", media_type="audio/wav", headers=headers)
    # However the audio stops, finish the turn (also when the stream never started).
    pcm = blocking_stream(
        svc.voice.stream_audio(streamed), lambda: svc.voice.finish_stream(streamed)
    )
    return ClosingStreamingResponse(pcm, media_type="audio/wav", headers=headers)


@dataclass(frozen=True)
class Heard:
    transcript: Transcript
    seconds: float  # of the recording


async def hear_upload(request: Request, svc: Services, timings: dict[str, float]) -> Heard:
    """The whole upload first (multipart or not), then its transcription."""
    upload = await recording(request, svc)
    timings["decode"] = upload.decode_ms
    transcript = await asyncio.to_thread(svc.voice.transcribe, upload.audio, timings)
    return Heard(transcript, upload.audio.seconds)


async def hear_while_uploading(
    request: Request, svc: Services, timings: dict[str, float], device: str
) -> Heard:
    """Transcribe each stretch of speech as soon as it has ended, while the body still
    arrives (`lobug.listening`). `stt` in `timings` is what was left after the body ended.
    Meanwhile the model reads the answer's prompt as far as it is known (`ReadAhead`)."""
    stt, _ = svc.voice.speech.require()
    live = LiveRecording(svc.settings.max_audio_seconds)
    pending: list[asyncio.Task[Transcript]] = []
    guesses: list[asyncio.Task[Transcript]] = []  # stretches heard before they ended
    read_ahead = ReadAhead(svc.voice, device, live, pending)

    def transcribe(
        stretch: Stretch, then: Callable[[asyncio.Task[Transcript]], object]
    ) -> asyncio.Task[Transcript]:
        task = asyncio.create_task(asyncio.to_thread(transcribe_stretch, stt, live, stretch))
        task.add_done_callback(then)
        return task

    received = 0
    started = time.perf_counter()
    try:
        async for piece in request.stream():
            read_ahead.start()
            received += len(piece)
            check_audio_size(received, svc.settings.max_audio_bytes)
            elapsed = time.perf_counter() - started
            pending += [transcribe(s, read_ahead.heard) for s in live.add(piece, elapsed)]
            if (partial := live.partial()) is not None:
                guesses.append(transcribe(partial, read_ahead.guessed))
        ended = time.perf_counter()
        read_ahead.stop()
        pending += [transcribe(s, read_ahead.heard) for s in live.finish()]
        transcripts = list(await asyncio.gather(*pending))
    except AudioError as exc:
        raise ApiError(exc.status, exc.error, str(exc)) from None
    except ClientDisconnect:  # a device drops a recording too short to answer this way
        raise Abandoned("the client closed its upload before the end") from None
    finally:
        for task in pending + guesses:
            task.cancel()
    timings["stt"] = (time.perf_counter() - ended) * 1000
    return Heard(live.heard(transcripts), live.seconds)


class ReadAhead:
    """While a recording is uploaded, the model reads the answer's prompt as far as it is
    known (`Voice.prime`): at its first bytes, the standing prompt and the history; each time
    a stretch of speech has been heard, also the notes for the words so far and those words.
    When the person said no more (the device records its closing silence meanwhile), the
    turn finds its whole prompt read. A long stretch is also heard once before it ends
    (`LiveRecording.partial`), so the notes for its first words and those words are read
    while the person still speaks. Primes are not awaited: they never raise, and the turn
    queues behind them for the model. None starts once the body has ended."""

    def __init__(
        self, voice: Voice, device: str, live: LiveRecording, heard: list[asyncio.Task[Transcript]]
    ) -> None:
        self._voice, self._device, self._live, self._heard = voice, device, live, heard
        self._started = self._stopped = False
        self._words = ""

    def start(self) -> None:
        if not self._started:
            self._started = True
            self._prime("")

    def stop(self) -> None:
        self._stopped = True

    def heard(self, _done: asyncio.Task[Transcript]) -> None:
        """A stretch's transcription ended: prime with the words of those heard so far."""
        self._prime_with(self._finished())

    def guessed(self, partial: asyncio.Task[Transcript]) -> None:
        """The stretch in progress was heard early: prime with the words so far and its."""
        if not partial.cancelled() and partial.exception() is None:
            self._prime_with([*self._finished(), partial.result()])

    def _finished(self) -> list[Transcript]:
        """The transcripts of the stretches heard so far, in order (up to the first one
        still running or failed)."""
        transcripts = []
        for task in self._heard:
            if not task.done() or task.cancelled() or task.exception() is not None:
                break
            transcripts.append(task.result())
        return transcripts

    def _prime_with(self, transcripts: list[Transcript]) -> None:
        words = self._live.heard(transcripts).text
        if words and words != self._words:
            self._words = words
            self._prime(words)

    def _prime(self, words: str) -> None:
        if not self._stopped:
            asyncio.get_running_loop().run_in_executor(None, self._voice.prime, self._device, words)


@router.get("/chat/turns/{turn_id}")
async def chat_turn(turn_id: str, svc: ServicesDep) -> dict[str, object]:
    """Transcription, action and reply text of a recent streamed turn."""
    summary = svc.voice.turn_summary(turn_id)
    if summary is None:
        raise ApiError(404, "unknown_turn", "No recent turn has this id")
    return summary


def _decode(data: bytes, max_seconds: float) -> Audio:
    import numpy as np

    if not data:  # an empty recording is silence, not an error
        return Audio(np.zeros(0, dtype=np.float32), 16_000)
    try:
        return parse_wav(data, max_seconds=max_seconds)
    except AudioError as exc:
        raise ApiError(exc.status, exc.error, str(exc)) from None


async def _audio_field(request: Request, body: bytes) -> bytes:
    async def replay() -> AsyncGenerator[bytes, None]:
        yield body

    try:
        form = await MultiPartParser(
            request.headers, replay(), max_files=4, max_fields=16, max_part_size=64 * 1024
        ).parse()
    except MultiPartException as exc:
        raise ApiError(
            400, "invalid_multipart", f"The multipart body is malformed: {exc}"
        ) from None
    try:
        uploads = form.getlist("audio")
        if not uploads:
            raise ApiError(422, "missing_audio", "The multipart body needs a file field 'audio'")
        if len(uploads) > 1:
            raise ApiError(422, "invalid_request", "Send one 'audio' part, not several")
        upload = uploads[0]
        if isinstance(upload, UploadFile):
            return await upload.read()
    finally:
        await form.close()
    return upload.encode("latin-1", errors="replace")
