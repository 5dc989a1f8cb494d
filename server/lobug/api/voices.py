"""A person's voice (issue 31, items 5-6), on the device server where recognition runs:
`PUT /memory/people/{agent}/{person_id}/voice` enrols it from 2 to 10 recordings (multipart
`audio` parts, WAV, 1-30 s each), keeping one embedding and no audio; `DELETE` forgets it.
Admin only. With recognition off (`LOBUG_SPEAKER_RECOGNITION`) both answer 409
`recognition_off`; recordings the enrolment refuses (too short, too quiet, not one voice)
answer 422 `voice_refused` with the reasons."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, Field
from starlette.datastructures import UploadFile

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, PathAgent
from lobug.api.errors import ApiError, documented
from lobug.api.uploads import multipart_form
from lobug.memory import voices
from lobug.memory.limits import MAX_ID
from lobug.memory.voices import RecognitionOff
from lobug.speakers.profiles import MAX_UTTERANCES, EnrolmentRefused
from lobug.store.models import MANUAL
from lobug.web.deps import ServicesDep

PersonId = Annotated[int, Path(ge=1, le=MAX_ID)]
router = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


class VoiceOut(BaseModel):
    person_id: int
    person: str
    enrolled: bool = Field(description="whether a voice profile is stored now")
    utterances: int = Field(description="recordings the profile was made from (0: forgotten)")


@router.put(
    "/memory/people/{agent_name}/{person_id}/voice",
    responses=documented(
        "agent_not_found", "person_not_found", "recognition_off", "voice_refused",
        "invalid_request",
    ),
)  # fmt: skip
async def enrol_voice(
    agent: PathAgent, person_id: PersonId, request: Request, svc: ServicesDep
) -> VoiceOut:
    """Learn the person's voice from 2-10 recordings of them speaking (`audio` parts)."""
    recognition = svc.voice.recognition
    if recognition is None:
        raise _off()
    wavs = await _recordings(request)
    try:
        person, enrolment = await asyncio.to_thread(
            voices.enrol_voice,
            recognition,
            svc.store,
            agent.name,
            person_id,
            wavs,
            max_bytes=svc.settings.max_audio_bytes,
            actor=MANUAL,
        )
    except EnrolmentRefused as exc:
        raise ApiError(422, "voice_refused", "; ".join(exc.reasons)) from None
    return VoiceOut(
        person_id=person.id,
        person=person.name,
        enrolled=True,
        utterances=enrolment.profile.utterances,
    )


@router.delete(
    "/memory/people/{agent_name}/{person_id}/voice",
    responses=documented("agent_not_found", "person_not_found", "recognition_off"),
)
async def forget_voice(agent: PathAgent, person_id: PersonId, svc: ServicesDep) -> VoiceOut:
    """Forget the person's voice profile (their embedding is deleted)."""
    try:
        person = await asyncio.to_thread(
            voices.forget_voice,
            svc.voice.recognition,
            svc.store,
            agent.name,
            person_id,
            actor=MANUAL,
        )
    except RecognitionOff:
        raise _off() from None
    return VoiceOut(person_id=person.id, person=person.name, enrolled=False, utterances=0)


def _off() -> ApiError:
    return ApiError(409, "recognition_off", str(RecognitionOff()))


async def _recordings(request: Request) -> list[bytes]:
    """The `audio` parts' bytes (each decoded and checked by `voices.enrol_voice`)."""
    form = await multipart_form(
        request.headers,
        request.stream(),
        max_files=MAX_UTTERANCES + 1,
        max_fields=MAX_UTTERANCES + 1,
    )
    try:
        parts = [part for part in form.getlist("audio") if isinstance(part, UploadFile)]
        if not parts:
            raise ApiError(422, "missing_audio", "The multipart body needs 'audio' file parts")
        return [await part.read() for part in parts]
    finally:
        await form.close()
