"""The device contract (../shared/DEVICE_CONTRACT.md): /health, /chat/text, /context/sensors.

`/chat/audio` joins this router with the voice path."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import re
import time
from typing import Any

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import JSONResponse

from lobug import __version__
from lobug.api.background import hand_over_exchange
from lobug.api.body import read_json_object
from lobug.api.disconnect import watch_disconnect
from lobug.api.errors import ApiError
from lobug.conversation import SensorReading
from lobug.services import Services

DEVICE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
HEALTH_PROBE_TTL_S = 5.0

public = APIRouter()  # paths open without a token: see auth.OPEN_PATHS
router = APIRouter()

TEXT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["text"],
                    "properties": {"text": {"type": "string", "minLength": 1}},
                }
            }
        },
    }
}


def services(request: Request) -> Services:
    found: Services = request.app.state.services
    return found


def device_id(request: Request) -> str:
    value = request.headers.get("x-device-id", "default").strip() or "default"
    if not DEVICE_ID.match(value):
        raise ApiError(
            400, "invalid_device_id", "X-Device-Id must be 1-64 characters of A-Z a-z 0-9 . _ : -"
        )
    return value


@public.get("/health")
async def health(request: Request) -> dict[str, Any]:
    svc = services(request)
    reachable = await svc.llm_reachable(HEALTH_PROBE_TTL_S)
    return {
        "status": "ok",
        "ollama": reachable,
        "timestamp": time.time(),
        "version": __version__,
        "ready": True,
        "llm": {"backend": svc.chat.name, "model": svc.chat.model, "reachable": reachable},
        "embedding": {
            "backend": svc.embedder.name,
            "model": svc.embedder.model,
            "dimension": svc.embedder.dimension,
        },
        "db_path": str(svc.settings.db_path),
        "agent": svc.settings.agent,
        "auth": "token" if svc.settings.device_tokens else "none",
        "memory": await asyncio.to_thread(memory_counts, svc),
        "speech": speech_status(svc),
    }


def speech_status(svc: Services) -> dict[str, Any]:
    speech = svc.speech
    return {
        "ready": speech.ready,
        "loading": speech.loading,
        "error": None if speech.ready else speech.error,
        "stt": speech.stt.model if speech.stt else None,
        "tts": speech.tts.model if speech.tts else None,
        "sample_rate": svc.voice.output_rate if speech.ready else None,
    }


def memory_counts(svc: Services) -> dict[str, int]:
    agent = svc.settings.agent
    return {
        "messages": svc.store.count_messages(agent),
        "facts": svc.store.count_facts(agent),
        "summaries": svc.store.count_summaries(agent),
        "pending_learning": svc.memory_work.pending,
        "learning_queue": svc.store.count_queued_exchanges(),
    }


@router.get("/context/working-memory")
async def working_memory(request: Request) -> dict[str, Any]:
    """What the model sees as this device's conversation (for simulators and debugging)."""
    state = await asyncio.to_thread(services(request).assistant.device, device_id(request))
    return {
        "device_id": state.device_id,
        "agent": state.agent,
        "messages": list(state.history),
        "sensors": dataclasses.asdict(state.sensors) if state.sensors else None,
    }


@router.post("/chat/text", openapi_extra=TEXT_BODY)
async def chat_text(request: Request, background: BackgroundTasks) -> JSONResponse:
    svc = services(request)
    device = device_id(request)
    text = validated_text(await read_json_object(request), svc.settings.max_text_chars)
    async with watch_disconnect(request) as abandoned:
        turn = await asyncio.to_thread(svc.assistant.reply, device, text, abandoned=abandoned)
    hand_over_exchange(background, svc.memory_work, lambda: turn.exchange)
    return JSONResponse(
        {"response": turn.response, "action": turn.action},
        headers={"Server-Timing": timing_header(turn.timings_ms)},
    )


def validated_text(body: dict[str, Any], max_chars: int) -> str:
    text = body.get("text")
    if "text" not in body:
        raise ApiError(422, "missing_text", "The body needs a 'text' field")
    if not isinstance(text, str):
        raise ApiError(422, "invalid_text", "'text' must be a string")
    text = text.strip()
    if not text:
        raise ApiError(422, "empty_text", "'text' is empty")
    if len(text) > max_chars:
        raise ApiError(413, "text_too_long", f"'text' is longer than {max_chars} characters")
    return text


def timing_header(timings: dict[str, float]) -> str:
    return ", ".join(f"{name};dur={duration:.1f}" for name, duration in timings.items())


@router.post("/context/sensors")
async def context_sensors(request: Request) -> dict[str, str]:
    svc = services(request)
    device = device_id(request)
    reading = parse_sensors(await read_json_object(request))
    svc.assistant.update_sensors(device, reading)
    return {"status": "ok"}


def parse_sensors(body: dict[str, Any]) -> SensorReading:
    orientation = body.get("orientation")
    if orientation is not None and (not isinstance(orientation, str) or len(orientation) > 32):
        raise ApiError(422, "invalid_sensors", "'orientation' must be a string of <= 32 chars")
    return SensorReading(
        orientation=orientation,
        is_moving=_flag(body, "is_moving"),
        is_shaking=_flag(body, "is_shaking"),
        tap_detected=_flag(body, "tap_detected"),
        accel=(_number(body, "accel_x"), _number(body, "accel_y"), _number(body, "accel_z")),
        gyro=(_number(body, "gyro_x"), _number(body, "gyro_y"), _number(body, "gyro_z")),
        received_at=time.time(),
    )


def _flag(body: dict[str, Any], name: str) -> bool | None:
    value = body.get(name)
    if value is None or isinstance(value, bool):
        return value
    raise ApiError(422, "invalid_sensors", f"'{name}' must be true or false")


def _number(body: dict[str, Any], name: str) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    try:
        number = float(value) if not isinstance(value, bool | str) else math.nan
    except (TypeError, OverflowError):
        number = math.nan
    if not math.isfinite(number):
        raise ApiError(422, "invalid_sensors", f"'{name}' must be a finite number")
    return number
