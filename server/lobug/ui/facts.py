"""Facts: a filtered table, one fact with its version chain and source messages, and what an
admin does to them (add, correct, pin, score, forget, purge) through `Curation`, as the REST
routes in `api/facts.py` do; every change is audited as `manual`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Form, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from lobug.memory.evidence import heard, visible_fact, visible_versions
from lobug.memory.limits import MAX_FACT_CHARS, MAX_ID
from lobug.services import MemoryServices
from lobug.store.errors import FactNotFound
from lobug.store.household import Viewer
from lobug.store.models import (
    DEFAULT_FACT_TYPE,
    FACT_TYPES,
    MANUAL,
    Fact,
    FactFlags,
    FactQuery,
    Message,
)
from lobug.ui.access import EditorDep, ViewerDep, reads_of
from lobug.ui.render import AgentChoice, AgentField, act, choose_agent, message_page, page
from lobug.web.deps import MemoryDep

router = APIRouter(include_in_schema=False)
PAGE_SIZE = 50
MAX_PAGES = 100_000

FactText = Annotated[str, Form(min_length=1, max_length=MAX_FACT_CHARS)]
FactId = Annotated[int, Path(ge=1, le=MAX_ID)]


@dataclass(frozen=True)
class FactDetail:
    fact: Fact
    versions: list[Fact]
    sources: list[Message]

    @property
    def current(self) -> Fact | None:
        return next((v for v in self.versions if v.is_current), None)


def state_of(fact: Fact) -> str:
    if fact.purged_at is not None:
        return "purged"
    if fact.forgotten_at is not None:
        return "forgotten"
    return "current" if fact.is_current else "superseded"


@router.get("/ui/facts")
async def facts(
    request: Request,
    viewer: ViewerDep,
    svc: MemoryDep,
    agent: str | None = None,
    chosen_type: Annotated[str, Query(alias="type")] = "",
    q: Annotated[str, Query(max_length=MAX_FACT_CHARS)] = "",
    history: bool = False,
    page_no: Annotated[int, Query(alias="page", ge=0, le=MAX_PAGES)] = 0,
) -> HTMLResponse:
    fact_type = chosen_type if chosen_type in FACT_TYPES else None

    def gather() -> tuple[AgentChoice, list[Fact], int]:
        choice = choose_agent(svc, agent)
        if choice.name is None:
            return choice, [], 0
        query = FactQuery(
            fact_type=fact_type,
            include_history=history,
            limit=PAGE_SIZE,
            offset=page_no * PAGE_SIZE,
            viewer=reads_of(svc, viewer, choice.name),
        )
        found = svc.curation.list_facts(choice.name, query, q.strip() or None)
        return choice, found.facts, found.total

    choice, shown, total = await asyncio.to_thread(gather)
    return page(
        request,
        "facts.html",
        viewer,
        choice,
        facts=shown,
        total=total,
        page_no=page_no,
        page_size=PAGE_SIZE,
        filters={"type": fact_type, "q": q, "history": history or None},
        fact_types=FACT_TYPES,
        default_type=DEFAULT_FACT_TYPE,
        state_of=state_of,
    )


def fact_detail(svc: MemoryServices, agent: str, fact_id: int, viewer: Viewer) -> FactDetail:
    """Blocking: the fact, its chain and its source messages still in the log, as `viewer`
    may see them (FactNotFound for a fact they may not)."""
    fact = visible_fact(svc.store, agent, fact_id, viewer)
    versions = visible_versions(svc.store, agent, fact_id, viewer)
    sources = heard(svc.store.messages_by_id(agent, fact.source_message_ids), viewer)
    return FactDetail(fact, versions, sources)


@router.get("/ui/facts/{fact_id}")
async def fact(
    request: Request, viewer: ViewerDep, svc: MemoryDep, fact_id: FactId, agent: str | None = None
) -> HTMLResponse:
    def gather() -> tuple[AgentChoice, FactDetail]:
        choice = choose_agent(svc, agent)
        if choice.name is None:
            raise FactNotFound("Nothing is remembered yet")
        return choice, fact_detail(svc, choice.name, fact_id, reads_of(svc, viewer, choice.name))

    try:
        choice, detail = await asyncio.to_thread(gather)
    except FactNotFound as exc:
        return message_page(request, "No such fact", str(exc), status=404)
    return page(
        request,
        "fact.html",
        viewer,
        choice,
        detail=detail,
        fact_types=FACT_TYPES,
        state_of=state_of,
    )


@router.post("/ui/facts")
async def add_fact(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    agent: AgentField,
    content: FactText,
    fact_type: Annotated[str, Form(alias="type")] = DEFAULT_FACT_TYPE,
) -> RedirectResponse:
    def add() -> str:
        added = svc.curation.add_fact(agent, content, fact_type, actor=MANUAL)
        replaced = f"; it replaces fact {', '.join(map(str, added.superseded))}"
        return f"Added fact {added.fact.id}{replaced if added.superseded else ''}."

    return await act(request, viewer, svc, agent, add, "/ui/facts")


@router.post("/ui/facts/{fact_id}/correct")
async def correct_fact(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    fact_id: FactId,
    agent: AgentField,
    content: FactText,
) -> RedirectResponse:
    def correct() -> str:
        fact = svc.curation.correct_fact(agent, fact_id, content, actor=MANUAL)
        return f"Corrected: fact {fact.id} is the new version."

    return await act(request, viewer, svc, agent, correct, f"/ui/facts/{fact_id}")


@router.post("/ui/facts/{fact_id}/pin")
async def pin_fact(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    fact_id: FactId,
    agent: AgentField,
    pinned: Annotated[bool, Form()],
) -> RedirectResponse:
    def pin() -> str:
        svc.curation.set_flags(agent, fact_id, FactFlags(pinned=pinned), actor=MANUAL)
        return "Pinned: always in the prompt." if pinned else "Unpinned."

    return await act(request, viewer, svc, agent, pin, f"/ui/facts/{fact_id}")


def score_flags(score: str) -> FactFlags:
    """An empty score clears it; otherwise a whole number from 0 to 10."""
    if not score.strip():
        return FactFlags(clear_score=True)
    if not score.strip().isdigit() or int(score) > 10:
        raise ValueError("A score is a whole number from 0 to 10 (empty clears it).")
    return FactFlags(user_score=int(score))


@router.post("/ui/facts/{fact_id}/score")
async def score_fact(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    fact_id: FactId,
    agent: AgentField,
    score: Annotated[str, Form(max_length=10)] = "",
) -> RedirectResponse:
    def rate() -> str:
        fact = svc.curation.set_flags(agent, fact_id, score_flags(score), actor=MANUAL)
        return "Score cleared." if fact.user_score is None else f"Scored {fact.user_score}."

    return await act(request, viewer, svc, agent, rate, f"/ui/facts/{fact_id}")


@router.post("/ui/facts/{fact_id}/forget")
async def forget_fact(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    fact_id: FactId,
    agent: AgentField,
    purge: Annotated[bool, Form()] = False,
) -> RedirectResponse:
    def forget() -> str:
        svc.curation.forget_fact(agent, fact_id, purge=purge, actor=MANUAL)
        erased = " and its text erased" if purge else ""
        return f"Fact {fact_id} forgotten with every version{erased}."

    return await act(request, viewer, svc, agent, forget, f"/ui/facts/{fact_id}")
