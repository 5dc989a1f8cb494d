"""The household's people (`memory/people.py`): who they are and the devices they use; an
admin's session also sees each person's own facts, with their scope (a device token's
session, which only reads, never sees a person's private facts)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from lobug.store.household import Person
from lobug.store.models import Fact
from lobug.ui.access import ViewerDep
from lobug.ui.render import AgentChoice, choose_agent, page
from lobug.web.deps import MemoryDep

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
