"""A household's people (issue 31): list, add and delete people, name a device's default
person, list a person's own facts, forget everything about a person, and move a fact between
its owner's private memory and the household's. Admin only: a device token reads nothing
here. Changes are audited as `manual`; the rules are the domain's (`memory/people.py`,
`memory/curation.py`), the visibility rule the store's."""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import Field

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, PathAgent
from lobug.api.errors import documented
from lobug.api.facts import FactId
from lobug.api.shapes import PersonName, StrictBody
from lobug.memory.limits import MAX_ID
from lobug.names import DEVICE_ID
from lobug.read_model.facts import FactOut, fact_fields
from lobug.read_model.people import (
    ForgottenPersonOut,
    PersonOut,
    forgotten_person_out,
    person_out,
)
from lobug.web.deps import MemoryDep

PersonId = Annotated[int, Path(ge=1, le=MAX_ID)]
DeviceId = Annotated[str, Path(pattern=f"^{DEVICE_ID.pattern}$")]

router = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


MOVE = "take a device that is another person's (else 409 device_taken)"


class PersonIn(StrictBody):
    name: PersonName
    devices: list[Annotated[str, Field(pattern=f"^{DEVICE_ID.pattern}$")]] = Field(
        default_factory=list, max_length=64, description="devices they usually use"
    )
    move: bool = Field(default=False, description=MOVE)


class AddedPersonOut(PersonOut):
    warning: str | None = Field(
        default=None, description="what the admin should know (the household's first person)"
    )


class DevicePersonIn(StrictBody):
    person_id: int | None = Field(ge=1, le=MAX_ID, description="None: no default person")
    move: bool = Field(default=False, description=MOVE)


class ScopeIn(StrictBody):
    scope: Literal["private", "household"]
    shareable: bool = Field(default=False, description="a household fact a guest may hear")


@router.get("/people/{agent_name}", responses=documented("agent_not_found"))
async def list_people(agent: PathAgent, svc: MemoryDep) -> list[PersonOut]:
    people = await asyncio.to_thread(svc.store.people, agent.name)
    return [person_out(p) for p in people]


@router.post(
    "/people/{agent_name}",
    status_code=201,
    responses=documented(
        "agent_not_found", "person_exists", "device_taken", "invalid_person", "invalid_request"
    ),
)
async def add_person(agent: PathAgent, body: PersonIn, svc: MemoryDep) -> AddedPersonOut:
    """A new person of the household; `devices` makes them those devices' default person (a
    device of another's only with `move`). The first person keeps what was known before as
    the household's (`warning` says so)."""

    def add() -> AddedPersonOut:
        welcomed = svc.curation.welcome(
            agent.name, body.name, body.devices, move=body.move, actor=svc.actor
        )
        shown = person_out(welcomed.person).model_dump()
        return AddedPersonOut(**shown, warning=welcomed.warning)

    return await asyncio.to_thread(add)


@router.delete(
    "/people/{agent_name}/{person_id}",
    responses=documented("agent_not_found", "person_not_found", "invalid_request"),
)
async def delete_person(
    agent: PathAgent, person_id: PersonId, svc: MemoryDep
) -> ForgottenPersonOut:
    """Remove the person and purge everything about them (their private facts and what they
    said: no bytes of it stay in the database files); household facts they stated stay."""
    counts = await asyncio.to_thread(
        svc.curation.delete_person, agent.name, person_id, actor=svc.actor
    )
    return forgotten_person_out(person_id, counts, deleted=True)


@router.post(
    "/people/{agent_name}/{person_id}/forget",
    responses=documented("agent_not_found", "person_not_found", "invalid_request"),
)
async def forget_person(
    agent: PathAgent, person_id: PersonId, svc: MemoryDep
) -> ForgottenPersonOut:
    """Purge everything about the person, who stays in the household."""
    counts = await asyncio.to_thread(
        svc.curation.forget_person, agent.name, person_id, actor=svc.actor
    )
    return forgotten_person_out(person_id, counts, deleted=False)


@router.get(
    "/people/{agent_name}/{person_id}/facts",
    responses=documented("agent_not_found", "person_not_found", "invalid_request"),
)
async def person_facts(agent: PathAgent, person_id: PersonId, svc: MemoryDep) -> list[FactOut]:
    """The person's own current facts (private, and household ones they stated)."""
    facts = await asyncio.to_thread(svc.store.person_facts, agent.name, person_id)
    return [fact_fields(f) for f in facts]


@router.put(
    "/people/{agent_name}/devices/{device_id}",
    responses=documented("agent_not_found", "person_not_found", "device_taken", "invalid_request"),
)
async def set_device_person(
    agent: PathAgent, device_id: DeviceId, body: DevicePersonIn, svc: MemoryDep
) -> list[PersonOut]:
    """Name the person who usually uses the device (None: nobody; another's device only with
    `move`); the household after it."""

    def set_default() -> list[PersonOut]:
        svc.curation.bind_device(
            agent.name, device_id, body.person_id, move=body.move, actor=svc.actor
        )
        return [person_out(p) for p in svc.store.people(agent.name)]

    return await asyncio.to_thread(set_default)


@router.put(
    "/facts/{agent_name}/{fact_id}/scope",
    responses=documented(
        "agent_not_found",
        "fact_not_found",
        "fact_not_current",
        "fact_has_no_owner",
        "invalid_request",
    ),
)
async def move_fact(agent: PathAgent, fact_id: FactId, body: ScopeIn, svc: MemoryDep) -> FactOut:
    """Move a current fact between its owner's private memory and the household's (every
    version goes with it); `shareable` lets a guest hear a household fact."""
    fact = await asyncio.to_thread(
        svc.curation.move_fact,
        agent.name,
        fact_id,
        body.scope,
        shareable=body.shareable,
        actor=svc.actor,
    )
    return fact_fields(fact)
