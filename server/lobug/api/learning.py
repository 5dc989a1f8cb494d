"""The learning queue (`memory/work_queue.py`): `GET /learning` counts the exchanges waiting
for their memory work and those parked after failing, and lists the oldest parked ones;
`POST /learning/retry` (admin-only) hands the parked exchanges (or those of `ids`) to the
memory work again and answers how many, at once (or once they are done, with `wait`): `GET
/learning` then shows those still parked (one failing again stays parked with its new error).

Mounted with the memory API (`/memory` on the device server, the root on `lobug
memory-server`)."""

from __future__ import annotations

import asyncio
from concurrent import futures
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import Field

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, CallerEvidence
from lobug.api.shapes import StrictBody
from lobug.memory.evidence import reader
from lobug.memory.limits import MAX_ID
from lobug.memory.work_queue import RETRY_BATCH
from lobug.read_model.learning import LearningOut, RetriedOut, learning_out
from lobug.store.models import Message
from lobug.web.deps import MemoryDep

MAX_LISTED = RETRY_BATCH  # a retry of `--agent` lists them all

router = APIRouter()  # reads: open to device tokens
admin = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


class RetryIn(StrictBody):
    """Without `ids`, every parked exchange (the oldest `RETRY_BATCH`)."""

    ids: list[Annotated[int, Field(ge=1, le=MAX_ID)]] | None = Field(
        default=None, max_length=RETRY_BATCH, description="reply message ids of parked exchanges"
    )


@router.get("/learning")
async def learning(
    svc: MemoryDep,
    evidence: CallerEvidence,
    limit: Annotated[int, Query(ge=0, le=MAX_LISTED)] = 50,
) -> LearningOut:
    """How many exchanges wait for their memory work, how many are parked, and the oldest
    `limit` parked ones whose words the caller's token may read (`memory.evidence`)."""

    def shown(said: Message) -> bool:
        return reader(svc.memory.household, said.agent, evidence).hears(said.person_id)

    return await asyncio.to_thread(learning_out, svc.store, limit, shown)


@admin.post("/learning/retry")
async def retry_learning(
    svc: MemoryDep, body: RetryIn | None = None, wait: bool = False
) -> RetriedOut:
    """Hand the parked exchanges (all, or those of `ids`) to the memory work again; with
    `wait`, answer once they are done (the command line on the local file, whose server
    ends with the command)."""
    ids = body.ids if body is not None else None
    handed = await asyncio.to_thread(svc.memory_work.retry_parked, ids)
    if wait:
        await asyncio.to_thread(futures.wait, handed)
    parked = await asyncio.to_thread(svc.store.count_parked_exchanges)
    return RetriedOut(retrying=len(handed), waited=wait, parked=parked)


router.include_router(admin)
