"""The facts of the curation API (issue 10): list and search an agent's facts, read one with
its versions and source messages; admins add, correct, pin, score, forget and purge them.

Mounted beside the memory API (`/memory` on the device server, the root of `lobug
memory-server`). Every change is recorded in the audit log with the actor `manual` (`cli`
for the command line on the local file: `MemoryServices.actor`).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, BeforeValidator, Field, StringConstraints

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, CallerEvidence, PathAgent
from lobug.api.errors import ApiError, documented
from lobug.api.shapes import StrictBody
from lobug.memory.curation import FactPage
from lobug.memory.evidence import reader
from lobug.memory.limits import MAX_FACT_CHARS, MAX_ID
from lobug.memory.search import SearchMode
from lobug.read_model.facts import (
    AddedFactOut,
    FactDetailOut,
    FactOut,
    added_out,
    fact_detail,
    fact_fields,
    visible_detail,
)
from lobug.store.models import LEGACY_FACT_TYPES, FactFlags, FactQuery
from lobug.web.deps import MemoryDep

MAX_PAGE = 1000
MAX_OFFSET = 1_000_000


def _renamed_type(value: object) -> object:
    """A type name from before the six (`personal`, `knowledge`) read as migration 8 maps it,
    so clients written against the old names keep working."""
    return LEGACY_FACT_TYPES.get(value, value) if isinstance(value, str) else value


# `store.models.FACT_TYPES` (a test keeps them equal); the old names are still accepted.
FactTypeName = Literal["identity", "trait", "preference", "event", "commitment", "constraint"]
FactType = Annotated[FactTypeName, BeforeValidator(_renamed_type)]
FactText = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_FACT_CHARS)
]
FactId = Annotated[int, Path(ge=1, le=MAX_ID)]
PageLimit = Annotated[int, Query(ge=1, le=MAX_PAGE)]
PageOffset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]

# What a change to a fact may answer besides the 403.
CHANGE_ERRORS = documented(
    "agent_not_found", "fact_not_found", "fact_not_current", "invalid_request"
)

router = APIRouter()  # reads: open to device tokens
admin = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


# ---------------------------------------------------------------------- bodies and answers


class FactIn(StrictBody):
    content: FactText
    type: FactType = "trait"


class CorrectionIn(StrictBody):
    content: FactText


class FlagsIn(StrictBody):
    """Give `pinned`, `user_score` or both; `"user_score": null` clears the score."""

    pinned: bool | None = None
    user_score: int | None = Field(default=None, ge=0, le=10)


class FactPageOut(BaseModel):
    facts: list[FactOut]
    total: int
    limit: int
    offset: int


# ---------------------------------------------------------------------- reads


@router.get("/facts/{agent_name}", responses=documented("agent_not_found", "invalid_request"))
async def list_facts(
    agent: PathAgent,
    svc: MemoryDep,
    evidence: CallerEvidence,
    limit: PageLimit = 100,
    offset: PageOffset = 0,
    fact_type: Annotated[FactType | None, Query(alias="type")] = None,
    pinned: bool | None = None,
    q: Annotated[str | None, Query(max_length=MAX_FACT_CHARS)] = None,
    mode: SearchMode = "hybrid",
    include_history: bool = False,
) -> FactPageOut:
    """The agent's facts, newest first: current ones, or every version with
    `include_history`. With `q`, the current facts hybrid search (or `mode`: vector,
    keyword) finds for it, best first, each with its `score`. Only the facts the caller's
    token may see (`memory.evidence`)."""

    def read() -> FactPage:
        query = FactQuery(
            fact_type=fact_type,
            pinned=pinned,
            include_history=include_history,
            limit=limit,
            offset=offset,
            viewer=reader(svc.memory.household, agent.name, evidence),
        )
        return svc.curation.list_facts(agent.name, query, q, mode)

    page = await asyncio.to_thread(read)
    scores: list[float | None] = [*page.scores] if page.scores else [None] * len(page.facts)
    return FactPageOut(
        facts=[fact_fields(f, s) for f, s in zip(page.facts, scores, strict=True)],
        total=page.total,
        limit=limit,
        offset=offset,
    )


@router.get(
    "/facts/{agent_name}/{fact_id}",
    responses=documented("agent_not_found", "fact_not_found", "invalid_request"),
)
async def get_fact(
    agent: PathAgent, fact_id: FactId, svc: MemoryDep, evidence: CallerEvidence
) -> FactDetailOut:
    """One fact (any version) with its whole version chain and its source messages, as the
    caller's token may see them (a fact it may not see: 404 `fact_not_found`)."""

    def read() -> FactDetailOut:
        viewer = reader(svc.memory.household, agent.name, evidence)
        return visible_detail(svc.store, agent.name, fact_id, viewer)

    return await asyncio.to_thread(read)


# ---------------------------------------------------------------------- changes (admin)


@admin.post(
    "/facts/{agent_name}",
    status_code=201,
    responses=documented("agent_not_found", "invalid_request"),
)
async def add_fact(agent: PathAgent, body: FactIn, svc: MemoryDep) -> AddedFactOut:
    """A fact written by a person (origin `manual`), embedded; a near duplicate of a current
    fact becomes its new version, and `superseded` names the old ones."""
    added = await asyncio.to_thread(
        svc.curation.add_fact, agent.name, body.content, body.type, actor=svc.actor
    )
    return added_out(added)


@admin.put(
    "/facts/{agent_name}/{fact_id}",
    responses=CHANGE_ERRORS,
)
async def correct_fact(
    agent: PathAgent, fact_id: FactId, body: CorrectionIn, svc: MemoryDep
) -> FactDetailOut:
    """A correction: the new version of the current fact `fact_id` (its pin and score carry
    over), answered with the whole version chain."""

    def correct() -> FactDetailOut:
        fact = svc.curation.correct_fact(agent.name, fact_id, body.content, actor=svc.actor)
        return fact_detail(svc.store, agent.name, fact)

    return await asyncio.to_thread(correct)


@admin.patch(
    "/facts/{agent_name}/{fact_id}",
    responses=CHANGE_ERRORS,
)
async def flag_fact(agent: PathAgent, fact_id: FactId, body: FlagsIn, svc: MemoryDep) -> FactOut:
    """Pin or unpin the current fact, score it (0-10) or clear its score (`null`)."""
    flags = flags_of(body)
    fact = await asyncio.to_thread(
        svc.curation.set_flags, agent.name, fact_id, flags, actor=svc.actor
    )
    return fact_fields(fact)


def flags_of(body: FlagsIn) -> FactFlags:
    """What the body changes: an absent field stays; a null score clears it."""
    score_given = "user_score" in body.model_fields_set
    if body.pinned is None and not score_given:
        raise ApiError(422, "invalid_request", "Give 'pinned', 'user_score' or both")
    return FactFlags(
        pinned=body.pinned,
        user_score=body.user_score,
        clear_score=score_given and body.user_score is None,
    )


@admin.delete(
    "/facts/{agent_name}/{fact_id}",
    responses=documented("agent_not_found", "fact_not_found", "invalid_request"),
)
async def forget_fact(
    agent: PathAgent, fact_id: FactId, svc: MemoryDep, purge: bool = False
) -> FactOut:
    """Forget the fact and all its versions: it leaves every prompt and search at once. With
    `purge=true` their text is erased from the database too; the answer is the tombstone."""
    fact = await asyncio.to_thread(
        svc.curation.forget_fact, agent.name, fact_id, purge=purge, actor=svc.actor
    )
    return fact_fields(fact)


router.include_router(admin)
