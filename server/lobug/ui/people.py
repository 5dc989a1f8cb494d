"""The household's people (`memory/people.py`): who they are and the devices they use; an
admin's session also sees each person's own facts, with their scope (a device token's
session, which only reads, never sees a person's private facts). An admin learns a person's
voice from 2-10 uploaded recordings, or forgets it, through the REST API's own call
(`memory/voices.py`: `enrol_voice`, `forget_voice`)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.datastructures import UploadFile

from lobug.memory import voices
from lobug.memory.limits import MAX_ID
from lobug.speakers.profiles import MAX_UTTERANCES
from lobug.store.household import Person
from lobug.store.models import MANUAL, Fact
from lobug.ui.access import EditorDep, ViewerDep
from lobug.ui.render import AgentChoice, AgentField, act, choose_agent, page
from lobug.web.deps import MemoryDep

PersonId = Annotated[int, Path(ge=1, le=MAX_ID)]

router = APIRouter(include_in_schema=False)


@router.get("/ui/people")
async def people(
    request: Request,
    viewer: ViewerDep,
    svc: MemoryDep,
    agent: str | None = None,
    person: int | None = None,
) -> HTMLResponse:
    def gather() -> tuple[AgentChoice, list[Person], Person | None, list[Fact]]:
        choice = choose_agent(svc, agent)
        if not choice.name:
            return choice, [], None, []
        found = svc.store.people(choice.name)
        chosen = next((p for p in found if p.id == person), None)
        facts = svc.store.person_facts(choice.name, chosen.id) if chosen and viewer.can_edit else []
        return choice, found, chosen, facts

    choice, found, chosen, facts = await asyncio.to_thread(gather)
    return page(request, "people.html", viewer, choice, people=found, person=chosen, facts=facts)


@router.post("/ui/people/{person_id}/voice")
async def enrol_voice(
    request: Request, viewer: EditorDep, svc: MemoryDep, person_id: PersonId, agent: AgentField
) -> RedirectResponse:
    form = await request.form()  # read once already, for its CSRF token
    parts = [part for part in form.getlist("audio") if isinstance(part, UploadFile)]
    wavs = [await part.read() for part in parts[: MAX_UTTERANCES + 1] if part.filename]

    def enrol() -> str:
        person, enrolment = voices.enrol_voice(
            svc.recognition,
            svc.store,
            agent,
            person_id,
            wavs,
            max_bytes=svc.settings.max_audio_bytes,
            actor=MANUAL,
        )
        return f"Learnt {person.name}'s voice from {enrolment.profile.utterances} recordings."

    return await act(request, viewer, svc, agent, enrol, "/ui/people", person=person_id)


@router.post("/ui/people/{person_id}/voice/delete")
async def forget_voice(
    request: Request, viewer: EditorDep, svc: MemoryDep, person_id: PersonId, agent: AgentField
) -> RedirectResponse:
    def forget() -> str:
        person = voices.forget_voice(svc.recognition, svc.store, agent, person_id, actor=MANUAL)
        return f"Forgot {person.name}'s voice."

    return await act(request, viewer, svc, agent, forget, "/ui/people", person=person_id)
