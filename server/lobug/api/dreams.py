"""Dreams (`memory/dream.py`): `POST /dream/{agent}` consolidates an agent's memory now (or
previews it with `dry_run`), `GET /dreams/{agent}` lists the dreams with their diaries,
`POST /dreams/{agent}/{id}/undo` undoes one. Running and undoing are admin-only.

Mounted with the memory API (`/memory` on the device server, the root on `lobug
memory-server`).
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, MemoryDep, PathAgent
from lobug.api.errors import documented
from lobug.api.facts import MAX_ID
from lobug.api.shapes import iso, iso_or_none
from lobug.memory.dream import DreamPlan, DreamResult
from lobug.store.models import MANUAL, Dream, DreamChange

DreamId = Annotated[int, Path(ge=1, le=MAX_ID)]

router = APIRouter()  # reads: open to device tokens
admin = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


class DreamChangeOut(BaseModel):
    """A fact the dream retired: `merge` into, or `settle` by, the kept fact; or `retire`."""

    action: str
    fact_id: str
    kept_id: str | None
    reason: str


class DreamOut(BaseModel):
    """A stored dream, or (`id` null) the plan of a dry run or a skipped one."""

    id: str | None
    agent: str
    dry_run: bool = False
    skipped: bool = False
    started_at: str | None = None
    finished_at: str | None = None
    undone_at: str | None = None
    changes: list[DreamChangeOut]
    base_memory_rewritten: bool
    diary: str


def change_out(change: DreamChange) -> DreamChangeOut:
    return DreamChangeOut(
        action=change.action,
        fact_id=str(change.fact_id),
        kept_id=str(change.kept_id) if change.kept_id is not None else None,
        reason=change.reason,
    )


def dream_out(dream: Dream) -> DreamOut:
    return DreamOut(
        id=str(dream.id),
        agent=dream.agent,
        started_at=iso(dream.started_at),
        finished_at=iso(dream.finished_at),
        undone_at=iso_or_none(dream.undone_at),
        changes=[change_out(c) for c in dream.changes],
        base_memory_rewritten=dream.base_memory_before is not None,
        diary=dream.diary,
    )


def plan_out(plan: DreamPlan, *, dry_run: bool, skipped: bool) -> DreamOut:
    return DreamOut(
        id=None,
        agent=plan.agent,
        dry_run=dry_run,
        skipped=skipped,
        changes=[change_out(c) for c in plan.changes],
        base_memory_rewritten=plan.rewrite_base_memory,
        diary=plan.diary,
    )


def result_out(result: DreamResult, *, dry_run: bool) -> DreamOut:
    if result.dream is not None:
        return dream_out(result.dream)
    return plan_out(result.plan, dry_run=dry_run, skipped=result.skipped)


@admin.post("/dream/{agent_name}", responses=documented("agent_not_found", "invalid_request"))
async def dream_now(
    agent: PathAgent, svc: MemoryDep, dry_run: Annotated[bool, Query()] = False
) -> DreamOut:
    """Consolidate the agent's memory now: merge near-duplicate facts, settle contradictions
    (the newer fact wins), retire low-value facts beyond LOBUG_MAX_FACTS and rewrite the base
    memory. `dry_run` answers what it would do and changes nothing."""
    result = await asyncio.to_thread(svc.dreamer.dream, agent.name, dry_run=dry_run)
    return result_out(result, dry_run=dry_run)


@router.get("/dreams/{agent_name}", responses=documented("agent_not_found", "invalid_request"))
async def list_dreams(
    agent: PathAgent, svc: MemoryDep, limit: Annotated[int, Query(ge=1, le=100)] = 20
) -> list[DreamOut]:
    """The agent's dreams with their diaries, newest first."""
    return [dream_out(d) for d in await asyncio.to_thread(svc.store.dreams, agent.name, limit)]


@router.get(
    "/dreams/{agent_name}/{dream_id}", responses=documented("agent_not_found", "dream_not_found")
)
async def get_dream(agent: PathAgent, dream_id: DreamId, svc: MemoryDep) -> DreamOut:
    return dream_out(await asyncio.to_thread(svc.store.dream, agent.name, dream_id))


@admin.post(
    "/dreams/{agent_name}/{dream_id}/undo",
    responses=documented("agent_not_found", "dream_not_found", "dream_undone"),
)
async def undo_dream(agent: PathAgent, dream_id: DreamId, svc: MemoryDep) -> DreamOut:
    """Make the facts the dream retired current again (those not forgotten since) and write
    back the base memory it replaced."""
    undone = await asyncio.to_thread(svc.dreamer.undo, agent.name, dream_id, actor=MANUAL)
    return dream_out(undone)


router.include_router(admin)
