"""The voice endpoints: `/chat/audio` (the contract) and `/chat/audio/stream` (opt-in).

The stream endpoint answers `audio/wav` with chunked transfer: a 44-byte header whose sizes say
"unknown length", then 16-bit mono PCM as each sentence of the answer is synthesized. What the
device needs besides the sound travels in headers known before the first byte:
`X-Lobug-Action`, `X-Lobug-Transcription` (percent-encoded UTF-8), `X-Lobug-Sample-Rate` and
`X-Lobug-Turn`; the reply text is fetched afterwards from `GET /chat/turns/{turn}`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, BackgroundTasks, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.datastructures import UploadFile
from starlette.requests import ClientDisconnect

from lobug.api.background import hand_over_exchange
from lobug.api.deps import DeviceId
from lobug.api.device import server_timing
from lobug.api.disconnect import watch_disconnect
from lobug.api.errors import ApiError
from lobug.api.streaming import ClosingStreamingResponse, blocking_stream
from lobug.api.uploads import multipart_form
from lobug.audio import Audio, check_audio_size, parse_wav
from lobug.backends.base import Abandoned
from lobug.services import Services
from lobug.voice.listening import Heard
from lobug.voice.pipeline import StreamedVoice, VoiceReply
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


@router.post("/chat/audio", openapi_extra=upload_body())
async def chat_audio(
    svc: ServicesDep,
    device: DeviceId,
    upload: Upload,
    request: Request,
    background: BackgroundTasks,
) -> JSONResponse:
    timings = {"decode": upload.decode_ms}
    async with svc.assistant.session(device).queued(), watch_disconnect(request) as abandoned:
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
    """A raw audio/wav body is transcribed while it arrives (see `lobug.voice.listening`), so a
    device that uploads as it records has its words heard by the time it stops."""
    timings: dict[str, float] = {}
    if media_type(request) in WAV_TYPES:
        heard = await hear_while_uploading(request, svc, timings, device)
    else:
        heard = await hear_upload(request, svc, timings, device)
    admitted = await svc.assistant.session(device).admit()  # held until the answer is said
    try:
        async with watch_disconnect(request) as abandoned:
            streamed: StreamedVoice = await asyncio.to_thread(
                svc.voice.answer_streaming,
                device,
                heard.transcript,
                heard.seconds,
                timings,
                abandoned,
                heard.speaker,
            )
    except BaseException:
        admitted.leave()
        raise
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
        admitted.leave()
        return Response(b"", media_type="audio/wav", headers=headers)

    def finish() -> None:
        try:
            svc.voice.finish_stream(streamed)
        finally:
            admitted.leave()

    # However the audio stops, finish the turn (also when the stream never started).
    pcm = blocking_stream(svc.voice.stream_audio(streamed), finish)
    return ClosingStreamingResponse(pcm, media_type="audio/wav", headers=headers)


async def hear_upload(
    request: Request, svc: Services, timings: dict[str, float], device: str
) -> Heard:
    """The whole upload first (multipart or not), then its transcription."""
    upload = await recording(request, svc)
    timings["decode"] = upload.decode_ms
    return await asyncio.to_thread(svc.voice.hear, device, upload.audio, timings)


async def hear_while_uploading(
    request: Request, svc: Services, timings: dict[str, float], device: str
) -> Heard:
    """The body heard while it arrives (`Voice.hear_arriving`)."""
    return await svc.voice.hear_arriving(device, body_pieces(request), timings)


async def body_pieces(request: Request) -> AsyncIterator[bytes]:
    """The request body as it arrives; a client that drops it has abandoned the turn."""
    try:
        async for piece in request.stream():
            yield piece
    except ClientDisconnect:  # a device drops a recording too short to answer this way
        raise Abandoned("the client closed its upload before the end") from None


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
    return parse_wav(data, max_seconds=max_seconds)  # an AudioError answers its own 4xx


async def _audio_field(request: Request, body: bytes) -> bytes:
    async def replay() -> AsyncGenerator[bytes, None]:
        yield body

    form = await multipart_form(request.headers, replay(), max_files=4, max_fields=16)
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
