"""The memory REST API (docs/memory-api.md, "Memory API"): agents, messages with
semantic search and learning, memory blocks (with limits, read-only flags and history);
the context under a budget is `api/context.py`.

Mounted at `/memory` on the device server and at the root by `lobug memory-server`. Ids are the
database's integer ids rendered as strings; times are ISO 8601 in UTC.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from fastapi import APIRouter, BackgroundTasks, Query, Response
from pydantic import BaseModel, Field

from lobug.api.background import hand_over_exchange
from lobug.api.deps import (
    ADMIN_RESPONSES,
    AdminOnly,
    CallerEvidence,
    PathAgent,
    PathViewer,
)
from lobug.api.errors import ApiError, documented
from lobug.api.shapes import AgentName, Metadata, StrictBody
from lobug.memory.agents import require_agent
from lobug.memory.evidence import heard, reader
from lobug.memory.intake import Intake, take_message
from lobug.memory.limits import (
    BLOCK_LABEL_PATTERN,
    MAX_CONTENT_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_NAME_CHARS,
)
from lobug.memory.search import MessageSearch, SearchMode
from lobug.read_model.common import AgentOut, MessageOut, agent_out, message_out, shown
from lobug.read_model.memory import BlockOut, block_out
from lobug.services import MemoryServices
from lobug.store.engines import redacted
from lobug.store.models import API_SOURCE, BlockChange, MemoryBlock, ScoredMessage
from lobug.web.deps import MemoryDep

MAX_LIST_LIMIT = 1000

log = logging.getLogger(__name__)

public = APIRouter()  # paths open without a token: see auth.OPEN_PATHS
router = APIRouter()

Role = Literal["user", "assistant", "system"]
Label = Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=BLOCK_LABEL_PATTERN)


# ---------------------------------------------------------------------- request bodies


class AgentIn(StrictBody):
    name: AgentName
    metadata: Metadata = None


class MessageIn(StrictBody):
    agent_name: AgentName
    role: Role
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    metadata: Metadata = None
    learn: bool = True


class SearchIn(StrictBody):
    agent_name: AgentName
    query: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    limit: int | None = Field(default=None, ge=1)
    mode: SearchMode = "hybrid"


class BlockIn(StrictBody):
    agent_name: AgentName
    label: str = Label
    value: str = Field(max_length=MAX_CONTENT_CHARS)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    limit: int | None = Field(default=None, ge=1, le=MAX_CONTENT_CHARS)
    read_only: bool = False
    changed_by: str = Field(default=API_SOURCE, min_length=1, max_length=MAX_NAME_CHARS)


class BlockUpdateIn(StrictBody):
    value: str = Field(max_length=MAX_CONTENT_CHARS)
    changed_by: str = Field(default=API_SOURCE, min_length=1, max_length=MAX_NAME_CHARS)


# ---------------------------------------------------------------------- responses


class BlockChangeOut(BaseModel):
    id: str
    block_id: str
    old_value: str | None
    new_value: str
    changed_by: str
    changed_at: str


def scored_out(hits: list[ScoredMessage]) -> list[MessageOut]:
    return [message_out(hit.message, round(hit.similarity, 6)) for hit in hits]


def change_out(change: BlockChange) -> BlockChangeOut:
    return shown(BlockChangeOut, change)


# ---------------------------------------------------------------------- helpers


def search_limit(svc: MemoryServices, limit: int | None) -> int:
    if limit is None:
        return svc.settings.default_search_limit
    if limit > svc.settings.max_search_limit:
        raise ApiError(
            422, "limit_too_large", f"'limit' must be at most {svc.settings.max_search_limit}"
        )
    return limit


# ---------------------------------------------------------------------- routes


@public.get("/health")
async def health(svc: MemoryDep) -> dict[str, Any]:
    return {
        "status": "ok",
        "agent": svc.settings.agent,
        "chat_model": svc.memory.chat.model,
        "embedding_backend": svc.embedder.name,
        "embedding_model": svc.embedder.model,
        "embedding_dimension": svc.embedder.dimension,
        "database": redacted(svc.settings.store_url),
        "database_path": str(svc.settings.db_path),
    }


@router.post("/agents")
async def create_agent(body: AgentIn, svc: MemoryDep) -> AgentOut:
    agent = await asyncio.to_thread(svc.store.ensure_agent, body.name, body.metadata)
    return agent_out(agent)


@router.get("/agents/{agent_name}")
async def get_agent(agent: PathAgent) -> AgentOut:
    return agent_out(agent)


@router.post("/messages")
async def add_message(
    body: MessageIn, svc: MemoryDep, response: Response, background: BackgroundTasks
) -> MessageOut:
    """Stored with its embedding (if the embedder fails the message is still stored, found by
    its words only: `X-Lobug-Embedded: 0`) and queued for learning (`memory.intake`): an
    assistant message answering the user message before it is learned from once the
    response is sent; a message alone after the quiet period. `learn: false` here, or
    `{"learn": false}` in the agent's metadata, keeps it out of learning."""

    def store() -> Intake:
        agent = require_agent(svc.store, body.agent_name)
        return take_message(
            svc.store,
            svc.embedder,
            agent,
            API_SOURCE,
            body.role,
            body.content,
            metadata=body.metadata,
            learn=body.learn,
        )

    taken = await asyncio.to_thread(store)
    response.headers["X-Lobug-Embedded"] = "1" if taken.embedded else "0"
    response.headers["X-Lobug-Learning"] = "queued" if taken.queued else "off"
    hand_over_exchange(background, svc.memory_work, lambda: taken.exchange)
    return message_out(taken.message)


@router.get("/messages/{agent_name}")
async def list_messages(
    agent: PathAgent,
    svc: MemoryDep,
    viewer: PathViewer,
    limit: int = Query(default=100, ge=1, le=MAX_LIST_LIMIT),
) -> list[MessageOut]:
    """The agent's last `limit` messages, newest first: those the caller's token may read
    (`memory.evidence`: a person's own, or every one for the admin)."""
    newest = heard(await asyncio.to_thread(svc.store.agent_messages, agent.name, limit), viewer)
    people = await asyncio.to_thread(svc.store.people, agent.name)
    names = {person.id: person.name for person in people}
    return [message_out(m, names=names) for m in newest]


@router.post("/messages/search")
async def search_messages(
    body: SearchIn, svc: MemoryDep, response: Response, evidence: CallerEvidence
) -> list[MessageOut]:
    """Hybrid search (or `mode`: vector / keyword) of the messages the caller's token may
    read. The `X-Lobug-Search-Mode` header says what ran: `keyword` when the embedder
    failed."""
    limit = search_limit(svc, body.limit)

    def run() -> MessageSearch:
        require_agent(svc.store, body.agent_name)
        viewer = reader(svc.memory.household, body.agent_name, evidence)
        return svc.curation.search_messages(
            body.agent_name, body.query, limit, body.mode, viewer=viewer
        )

    found = await asyncio.to_thread(run)
    response.headers["X-Lobug-Search-Mode"] = found.mode
    return scored_out(found.hits)


@router.post("/memory-blocks", dependencies=[AdminOnly], responses=ADMIN_RESPONSES)
async def create_block(body: BlockIn, svc: MemoryDep) -> BlockOut:
    def create() -> MemoryBlock:
        require_agent(svc.store, body.agent_name)
        return svc.curation.create_block(
            body.agent_name,
            body.label,
            body.value,
            description=body.description,
            char_limit=body.limit,
            read_only=body.read_only,
            actor=body.changed_by,
        )

    return block_out(await asyncio.to_thread(create))


@router.get("/memory-blocks/{agent_name}")
async def list_blocks(agent: PathAgent, svc: MemoryDep) -> list[BlockOut]:
    return [block_out(b) for b in await asyncio.to_thread(svc.store.blocks, agent.name)]


@router.get("/memory-blocks/{agent_name}/{label}")
async def get_block(agent: PathAgent, label: str, svc: MemoryDep) -> BlockOut:
    found = await asyncio.to_thread(svc.store.block, agent.name, label)
    if found is None:
        raise ApiError(
            404, "block_not_found", f"Agent {agent.name!r} has no memory block {label!r}"
        )
    return block_out(found)


@router.put(
    "/memory-blocks/{agent_name}/{label}", dependencies=[AdminOnly], responses=ADMIN_RESPONSES
)
async def update_block(
    agent: PathAgent, label: str, body: BlockUpdateIn, svc: MemoryDep
) -> BlockOut:
    block = await asyncio.to_thread(
        svc.curation.update_block, agent.name, label, body.value, actor=body.changed_by
    )
    return block_out(block)


@router.delete(
    "/memory-blocks/{agent_name}/{label}",
    status_code=204,
    dependencies=[AdminOnly],
    responses={**ADMIN_RESPONSES, **documented("agent_not_found", "block_not_found")},
)
async def delete_block(
    agent: PathAgent, label: str, svc: MemoryDep, purge: bool = False
) -> Response:
    """Remove a block and its history, read-only ones too (admin). With `purge=true` its
    texts are erased from the audit log too, as a purged fact's."""
    await asyncio.to_thread(
        svc.curation.delete_block, agent.name, label, actor=svc.actor, purge=purge
    )
    return Response(status_code=204)


@router.get("/memory-blocks/{agent_name}/{label}/history")
async def block_history(agent: PathAgent, label: str, svc: MemoryDep) -> list[BlockChangeOut]:
    changes = await asyncio.to_thread(svc.store.block_history, agent.name, label)
    return [change_out(c) for c in changes]
