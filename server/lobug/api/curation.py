"""The rest of the curation API (issue 10), beside the facts (`api/facts.py`): the base
memory and its versions, summaries, forgetting messages and stretches of conversation, agents
with their counts and their deletion, and the audit log.

Reads of the base memory, summaries and agents are open to device tokens; every change and
the audit log need an admin token. Changes are recorded in the audit log as `manual`.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field, model_validator

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, PathAgent, ReadsSummaries
from lobug.api.errors import ApiError, body_error, documented
from lobug.api.facts import PageLimit, PageOffset
from lobug.api.shapes import AgentName, StrictBody
from lobug.memory.agents import require_agent
from lobug.memory.limits import MAX_BASE_MEMORY_CHARS, MAX_ID
from lobug.names import DEVICE_ID
from lobug.read_model.common import shown
from lobug.read_model.memory import (
    AgentCountsOut,
    AuditEntryOut,
    BaseMemoryOut,
    ForgottenOut,
    MadeOut,
    audit_out,
    base_memory_out,
    counts_out,
    forgotten_out,
)
from lobug.store.models import AuditEntry, BaseMemoryVersion, Forgotten, Summary
from lobug.web.deps import MemoryDep

MessageId = Annotated[int, Path(ge=1, le=MAX_ID)]

router = APIRouter()  # reads: open to device tokens
admin = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


# ---------------------------------------------------------------------- bodies and answers


class BaseMemoryIn(StrictBody):
    content: str = Field(max_length=MAX_BASE_MEMORY_CHARS)


class ForgetIn(StrictBody):
    """A stretch of an agent's conversation: from one device or all, between `since` and
    `until` (ISO 8601; either end open; a time without a zone is UTC). At least one of
    `device`, `since` and `until` is required: an empty span would be the whole log."""

    agent: AgentName
    device: str | None = Field(default=None, pattern=f"^{DEVICE_ID.pattern}$")
    since: datetime | None = Field(default=None, strict=False)  # ISO 8601 text
    until: datetime | None = Field(default=None, strict=False)

    @model_validator(mode="after")
    def a_bounded_span(self) -> ForgetIn:
        if self.device is None and self.since is None and self.until is None:
            raise body_error(
                "span_required",
                "Give 'device', 'since' or 'until'; to erase everything of an agent, "
                "DELETE /agents/{name}?confirm={name}",
            )
        if self.since and self.until and timestamp(self.since) > timestamp(self.until):
            raise body_error("invalid_span", "'since' is after 'until'")
        return self


class BaseMemoryVersionOut(MadeOut):
    id: str
    content: str
    written_by: str
    created_at: str


class SummaryOut(MadeOut):
    id: str
    content: str
    source_from_id: str
    source_to_id: str
    created_at: str
    incorporated: bool
    # The episode's span: when its first and last message were said.
    started_at: str | None = None
    ended_at: str | None = None


class DeletedAgentOut(BaseModel):
    agent: str
    deleted: dict[str, int]


class AuditPageOut(BaseModel):
    entries: list[AuditEntryOut]
    total: int
    limit: int
    offset: int


def timestamp(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def version_out(version: BaseMemoryVersion) -> BaseMemoryVersionOut:
    return shown(BaseMemoryVersionOut, version)


def summary_out(summary: Summary) -> SummaryOut:
    return shown(SummaryOut, summary)


# ---------------------------------------------------------------------- base memory, summaries


@router.get(
    "/base-memory/{agent_name}",
    dependencies=[ReadsSummaries],
    responses=documented("agent_not_found", "summaries_private"),
)
async def get_base_memory(agent: PathAgent, svc: MemoryDep) -> BaseMemoryOut:
    return await asyncio.to_thread(base_memory_out, svc.store, agent.name)


@admin.put("/base-memory/{agent_name}", responses=documented("agent_not_found", "invalid_request"))
async def write_base_memory(agent: PathAgent, body: BaseMemoryIn, svc: MemoryDep) -> BaseMemoryOut:
    """Replace the base memory by hand: a new version, written by `manual`."""

    def write() -> BaseMemoryOut:
        svc.curation.write_base_memory(agent.name, body.content, actor=svc.actor)
        return base_memory_out(svc.store, agent.name)

    return await asyncio.to_thread(write)


@router.get(
    "/base-memory/{agent_name}/history",
    dependencies=[ReadsSummaries],
    responses=documented("agent_not_found", "summaries_private"),
)
async def base_memory_history(agent: PathAgent, svc: MemoryDep) -> list[BaseMemoryVersionOut]:
    """Every version, newest first, by the long-term cascade (`cascade`) or by hand."""
    history = await asyncio.to_thread(svc.store.base_memory_history, agent.name)
    return [version_out(v) for v in history]


@router.get(
    "/summaries/{agent_name}",
    dependencies=[ReadsSummaries],
    responses=documented("agent_not_found", "summaries_private"),
)
async def list_summaries(agent: PathAgent, svc: MemoryDep) -> list[SummaryOut]:
    """The agent's summaries of its conversation log, oldest first."""
    return [summary_out(s) for s in await asyncio.to_thread(svc.store.summaries, agent.name)]


# ---------------------------------------------------------------------- forgetting (admin)


@admin.delete(
    "/messages/{agent_name}/{message_id}",
    responses=documented("agent_not_found", "message_not_found", "invalid_request"),
)
async def forget_message(agent: PathAgent, message_id: MessageId, svc: MemoryDep) -> ForgottenOut:
    """Forget one message, and what was learned only from it (always a purge)."""
    forgotten = await asyncio.to_thread(
        svc.curation.forget_message, agent.name, message_id, actor=svc.actor
    )
    return forgotten_out(forgotten)


@admin.post(
    "/forget",
    responses=documented("agent_not_found", "span_required", "invalid_span", "invalid_request"),
)
async def forget_span(body: ForgetIn, svc: MemoryDep) -> ForgottenOut:
    """Forget a stretch of conversation: its messages leave the log, the indexes, the work
    queue and every device's working memory; facts learned only from them are purged,
    summaries covering them dropped, and the base memory marked stale."""

    def forget() -> Forgotten:
        require_agent(svc.store, body.agent)
        return svc.curation.forget_span(
            body.agent,
            device=body.device,
            since=timestamp(body.since) if body.since else None,
            until=timestamp(body.until) if body.until else None,
            actor=svc.actor,
        )

    return forgotten_out(await asyncio.to_thread(forget))


# ---------------------------------------------------------------------- agents, audit


@router.get("/agents")
async def list_agents(svc: MemoryDep) -> list[AgentCountsOut]:
    """Every agent, by name, with its messages, current facts and summaries counted."""
    return [counts_out(c) for c in await asyncio.to_thread(svc.store.agents_with_counts)]


@admin.delete(
    "/agents/{agent_name}",
    responses=documented("agent_not_found", "confirmation_required", "invalid_request"),
)
async def delete_agent(
    agent: PathAgent, svc: MemoryDep, confirm: Annotated[str | None, Query()] = None
) -> DeletedAgentOut:
    """Erase the agent and everything of it; `confirm` must repeat its name."""
    if confirm != agent.name:
        raise ApiError(
            422,
            "confirmation_required",
            f"Deleting erases everything of {agent.name!r}: add ?confirm={agent.name}",
        )
    counts = await asyncio.to_thread(svc.curation.delete_agent, agent.name, actor=svc.actor)
    return DeletedAgentOut(agent=agent.name, deleted=counts)


@admin.get("/audit/{agent_name}", responses=documented("agent_not_found", "invalid_request"))
async def audit_log(
    agent: PathAgent, svc: MemoryDep, limit: PageLimit = 100, offset: PageOffset = 0
) -> AuditPageOut:
    """The agent's audit log, newest first: who changed what, when."""

    def read() -> tuple[list[AuditEntry], int]:
        entries = svc.store.audit_entries(agent.name, limit, offset)
        return entries, svc.store.count_audit_entries(agent.name)

    entries, total = await asyncio.to_thread(read)
    return AuditPageOut(
        entries=[audit_out(e) for e in entries], total=total, limit=limit, offset=offset
    )


router.include_router(admin)
