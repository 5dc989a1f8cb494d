"""The device contract (docs/devices.md, "Device API"): /health, /chat/text, /context/sensors.

`/chat/audio` joins this router with the voice path."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import (
    AllowInfNan,
    BaseModel,
    Field,
    StrictBool,
    StrictFloat,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from lobug import __version__
from lobug.api.background import hand_over_exchange
from lobug.api.deps import CallerEvidence, DeviceId
from lobug.api.disconnect import watch_disconnect
from lobug.api.errors import ApiError, body_error, valid_or
from lobug.memory.evidence import reader
from lobug.services import HEALTH_PROBE_TTL_S, Services
from lobug.store.engines import redacted
from lobug.turn.conversation import SensorReading
from lobug.web.deps import ServicesDep

public = APIRouter()  # paths open without a token: see auth.OPEN_PATHS
router = APIRouter()

Flag = StrictBool | None
Number = Annotated[StrictFloat, AllowInfNan(False)] | None
AXES = ("accel_x", "accel_y", "accel_z", "gyro_x", "gyro_y", "gyro_z")


class ChatTextIn(BaseModel):
    text: str = Field(min_length=1, description="What the user said")

    @model_validator(mode="before")
    @classmethod
    def _has_text(cls, data: Any) -> Any:
        if isinstance(data, dict) and "text" not in data:
            raise body_error("missing_text", "The body needs a 'text' field")
        return data

    @field_validator("text", mode="before")
    @classmethod
    def _stripped(cls, value: Any) -> str:
        if not isinstance(value, str):
            raise body_error("invalid_text", "'text' must be a string")
        if not value.strip():
            raise body_error("empty_text", "'text' is empty")
        return value.strip()


class SensorsIn(BaseModel):
    """The device's latest motion reading; every field optional."""

    orientation: str | None = Field(default=None, max_length=32)
    is_moving: Flag = None
    is_shaking: Flag = None
    tap_detected: Flag = None
    accel_x: Number = None
    accel_y: Number = None
    accel_z: Number = None
    gyro_x: Number = None
    gyro_y: Number = None
    gyro_z: Number = None

    @field_validator("orientation", mode="wrap")
    @classmethod
    def _orientation(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        return valid_or(
            value, handler, "invalid_sensors", "'orientation' must be a string of <= 32 chars"
        )

    @field_validator("is_moving", "is_shaking", "tap_detected", mode="wrap")
    @classmethod
    def _flag(cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        return valid_or(
            value, handler, "invalid_sensors", f"'{info.field_name}' must be true or false"
        )

    @field_validator(*AXES, mode="wrap")
    @classmethod
    def _number(
        cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        return valid_or(
            value, handler, "invalid_sensors", f"'{info.field_name}' must be a finite number"
        )

    def reading(self) -> SensorReading:
        return SensorReading(
            orientation=self.orientation,
            is_moving=self.is_moving,
            is_shaking=self.is_shaking,
            tap_detected=self.tap_detected,
            accel=(self.accel_x, self.accel_y, self.accel_z),
            gyro=(self.gyro_x, self.gyro_y, self.gyro_z),
            received_at=time.time(),
        )


def said_text(body: ChatTextIn, svc: ServicesDep) -> str:
    """The text of a /chat/text body, within `max_text_chars`."""
    max_chars = svc.settings.max_text_chars
    if len(body.text) > max_chars:
        raise ApiError(413, "text_too_long", f"'text' is longer than {max_chars} characters")
    return body.text


SaidText = Annotated[str, Depends(said_text)]


@public.get("/health")
async def health(svc: ServicesDep) -> dict[str, Any]:
    """The device contract's fields (`ollama`: whether the chat backend answers, whatever
    it is), and what a person or a program checks: `ready` once the models are loaded and
    at work (`Services.ready`), the memory's counts with the learning queue and the exchanges
    parked there (`memory.learning_parked`)."""
    reachable = await svc.llm_reachable(HEALTH_PROBE_TTL_S)
    return {
        "status": "ok",
        "ollama": reachable,
        "timestamp": time.time(),
        "version": __version__,
        "ready": svc.ready(reachable),
        "llm": {"backend": svc.chat.name, "model": svc.chat.model, "reachable": reachable},
        "embedding": {
            "backend": svc.embedder.name,
            "model": svc.embedder.model,
            "dimension": svc.embedder.dimension,
        },
        "db_path": str(svc.settings.db_path),
        "database": redacted(svc.settings.store_url),
        "agent": svc.settings.agent,
        "auth": "token" if svc.settings.tokens_required else "none",
        "memory": await asyncio.to_thread(memory_counts, svc),
        "speech": svc.speech_status(),
    }


def memory_counts(svc: Services) -> dict[str, int]:
    agent = svc.settings.agent
    return {
        "messages": svc.store.count_messages(agent),
        "facts": svc.store.count_facts(agent),
        "summaries": svc.store.count_summaries(agent),
        "pending_learning": svc.memory_work.pending,
        "learning_queue": svc.store.count_queued_exchanges(),
        "learning_parked": svc.store.count_parked_exchanges(),
    }


@router.get("/context/working-memory")
async def working_memory(
    svc: ServicesDep, device: DeviceId, evidence: CallerEvidence
) -> dict[str, Any]:
    """What the model sees as this device's conversation (for simulators and debugging): the
    messages the caller's token may read (`memory.evidence`)."""
    state = await asyncio.to_thread(svc.assistant.session(device).state)
    viewer = await asyncio.to_thread(reader, svc.memory.household, state.agent, evidence)
    return {
        "device_id": state.device_id,
        "agent": state.agent,
        "messages": state.shown(viewer=viewer),
        "sensors": dataclasses.asdict(state.sensors) if state.sensors else None,
    }


@router.post("/chat/text")
async def chat_text(
    svc: ServicesDep,
    device: DeviceId,
    text: SaidText,
    request: Request,
    background: BackgroundTasks,
) -> JSONResponse:
    async with svc.assistant.session(device).queued(), watch_disconnect(request) as abandoned:
        turn = await asyncio.to_thread(
            svc.assistant.reply, device, text, abandoned=abandoned, heard_later=True
        )
    hand_over_exchange(background, svc.memory_work, lambda: turn.exchange)
    background.add_task(turn.delivered)  # after the response was sent: its reminders said
    background.add_task(svc.assistant.prime, device)  # the next turn's prompt, read ahead
    return JSONResponse(
        {"response": turn.response, "action": turn.action},
        headers={"Server-Timing": server_timing(svc, device, turn.timings_ms)},
    )


def server_timing(svc: Services, device: str, timings: dict[str, float]) -> str:
    """The `Server-Timing` header of a turn; its figures are kept for the dashboard too."""
    svc.timings.record(device, timings)
    return ", ".join(f"{name};dur={duration:.1f}" for name, duration in timings.items())


@router.post("/context/sensors")
async def context_sensors(svc: ServicesDep, device: DeviceId, body: SensorsIn) -> dict[str, str]:
    # warming the device's state reads the log: off the event loop
    await asyncio.to_thread(svc.assistant.session(device).update_sensors, body.reading())
    return {"status": "ok"}
