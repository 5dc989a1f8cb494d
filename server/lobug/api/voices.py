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
from starlette.formparsers import MultiPartException, MultiPartParser

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, PathAgent
from lobug.api.errors import ApiError, documented
from lobug.audio import STT_RATE, check_audio_size, parse_wav, resample
from lobug.memory.limits import MAX_ID
from lobug.memory.voices import HouseholdVoices
from lobug.speakers.profiles import MAX_SECONDS, MAX_UTTERANCES, EnrolmentRefused, Samples
from lobug.speakers.recognition import VoiceRecognition
from lobug.store.household_protocol import PeopleStore
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
    recognition = _recognition(svc.voice.recognition, svc.store, agent.name)
    person = await asyncio.to_thread(svc.store.person, agent.name, person_id)
    recordings = await _recordings(request, svc.settings.max_audio_bytes)
    try:
        await asyncio.to_thread(recognition.enrol, person.name, recordings)
    except EnrolmentRefused as exc:
        raise ApiError(422, "voice_refused", "; ".join(exc.reasons)) from None
    return VoiceOut(
        person_id=person.id, person=person.name, enrolled=True, utterances=len(recordings)
    )


@router.delete(
    "/memory/people/{agent_name}/{person_id}/voice",
    responses=documented("agent_not_found", "person_not_found", "recognition_off"),
)
async def forget_voice(agent: PathAgent, person_id: PersonId, svc: ServicesDep) -> VoiceOut:
    """Forget the person's voice profile (their embedding is deleted)."""
    recognition = _recognition(svc.voice.recognition, svc.store, agent.name)
    person = await asyncio.to_thread(svc.store.person, agent.name, person_id)
    await asyncio.to_thread(recognition.forget, person.name)
    return VoiceOut(person_id=person.id, person=person.name, enrolled=False, utterances=0)


def _recognition(
    running: VoiceRecognition | None, store: PeopleStore, agent: str
) -> VoiceRecognition:
    """The server's recognizer, keeping this household's profiles (audited as the admin's)."""
    if running is None:
        raise ApiError(
            409, "recognition_off", "Recognition by voice is off (LOBUG_SPEAKER_RECOGNITION=1)"
        )
    voices = HouseholdVoices(store, agent, actor=MANUAL)
    return VoiceRecognition(running.embedder, voices, running.threshold)


async def _recordings(request: Request, max_bytes: int) -> list[Samples]:
    """The `audio` parts as 16 kHz samples (each WAV checked as the voice routes check one)."""
    try:
        form = await MultiPartParser(
            request.headers,
            request.stream(),
            max_files=MAX_UTTERANCES + 1,
            max_fields=MAX_UTTERANCES + 1,
            max_part_size=64 * 1024,
        ).parse()
    except MultiPartException as exc:
        raise ApiError(
            400, "invalid_multipart", f"The multipart body is malformed: {exc}"
        ) from None
    try:
        parts = [part for part in form.getlist("audio") if isinstance(part, UploadFile)]
        if not parts:
            raise ApiError(422, "missing_audio", "The multipart body needs 'audio' file parts")
        recordings = []
        for part in parts:
            data = await part.read()
            check_audio_size(len(data), max_bytes)
            audio = parse_wav(data, max_seconds=MAX_SECONDS)
            recordings.append(resample(audio.samples, audio.sample_rate, STT_RATE))
        return recordings
    finally:
        await form.close()
