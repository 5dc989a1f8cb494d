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

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, PathAgent, ReadsSummaries
from lobug.api.errors import documented
from lobug.memory.limits import MAX_ID
from lobug.read_model.dreams import DreamOut, dream_out, result_out
from lobug.web.deps import MemoryDep

DreamId = Annotated[int, Path(ge=1, le=MAX_ID)]

router = APIRouter()  # reads: for tokens that may read what every person's words made
admin = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


@admin.post("/dream/{agent_name}", responses=documented("agent_not_found", "invalid_request"))
async def dream_now(
    agent: PathAgent, svc: MemoryDep, dry_run: Annotated[bool, Query()] = False
) -> DreamOut:
    """Consolidate the agent's memory now: merge near-duplicate facts, settle contradictions
    (the newer fact wins), retire low-value facts beyond LOBUG_MAX_FACTS and rewrite the base
    memory. `dry_run` answers what it would do and changes nothing."""
    result = await asyncio.to_thread(svc.dreamer.dream, agent.name, dry_run=dry_run)
    return result_out(result, dry_run=dry_run)


@router.get(
    "/dreams/{agent_name}",
    dependencies=[ReadsSummaries],  # a diary quotes the facts it merged
    responses=documented("agent_not_found", "invalid_request", "summaries_private"),
)
async def list_dreams(
    agent: PathAgent, svc: MemoryDep, limit: Annotated[int, Query(ge=1, le=100)] = 20
) -> list[DreamOut]:
    """The agent's dreams with their diaries, newest first."""
    return [dream_out(d) for d in await asyncio.to_thread(svc.store.dreams, agent.name, limit)]


@router.get(
    "/dreams/{agent_name}/{dream_id}",
    dependencies=[ReadsSummaries],
    responses=documented("agent_not_found", "dream_not_found", "summaries_private"),
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
    undone = await asyncio.to_thread(svc.dreamer.undo, agent.name, dream_id, actor=svc.actor)
    return dream_out(undone)


router.include_router(admin)
