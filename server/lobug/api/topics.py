"""Topics and the global memory (`memory/topics.py`, `memory/global_memory.py`):
`GET /agents/{agent}/topics` lists an agent's topics, `GET /agents/{agent}/topics/{id}` reads
one, `GET /agents/{agent}/global` answers its pinned facts and most active topics, and
`POST /agents/{agent}/topics/rebuild` (admin-only) groups its facts and episodes again now
(the dream does it too).

Mounted with the memory API (`/memory` on the device server, the root on `lobug
memory-server`).
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, MemoryDep, PathAgent
from lobug.api.errors import documented
from lobug.api.facts import MAX_ID, FactOut, fact_fields
from lobug.api.shapes import iso
from lobug.memory.global_memory import ACTIVE_DAYS, global_memory
from lobug.store.models import Topic
from lobug.store.protocol import Store

TopicId = Annotated[int, Path(ge=1, le=MAX_ID)]

router = APIRouter()  # reads: open to device tokens
admin = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


class TopicOut(BaseModel):
    """A topic: a cluster of the agent's facts and episodes, named and described by the chat
    model (`written_by` `model`) or, where its text failed the checks, without it
    (`extractive`). Ids are new at every rebuild."""

    id: str
    position: int = Field(description="its rank in the build, largest topic first")
    name: str
    summary: str
    open_questions: list[str]
    next_actions: list[str]
    fact_ids: list[str]
    episode_ids: list[str]
    written_by: str
    built_at: str
    last_active_at: str | None = Field(description="when its newest member was learned or ended")


class ActiveTopicOut(TopicOut):
    activity: int = Field(
        description=f"its members learned or ended in the last {ACTIVE_DAYS} days"
    )


class GlobalMemoryOut(BaseModel):
    """The agent's pinned facts and its most active topics, most active first."""

    agent: str
    pinned: list[FactOut]
    active_topics: list[ActiveTopicOut]


def topic_out(topic: Topic) -> TopicOut:
    newest = max((m.at for m in topic.members), default=None)
    return TopicOut(
        id=str(topic.id),
        position=topic.position,
        name=topic.name,
        summary=topic.summary,
        open_questions=list(topic.open_questions),
        next_actions=list(topic.next_actions),
        fact_ids=[str(i) for i in topic.member_ids("fact")],
        episode_ids=[str(i) for i in topic.member_ids("episode")],
        written_by=topic.written_by,
        built_at=iso(topic.built_at),
        last_active_at=None if newest is None else iso(newest),
    )


def global_out(store: Store, agent: str, now: float) -> GlobalMemoryOut:
    """Blocking: the agent's global memory at `now`."""
    found = global_memory(store, agent, now)
    return GlobalMemoryOut(
        agent=agent,
        pinned=[fact_fields(f) for f in found.pinned],
        active_topics=[
            ActiveTopicOut(**topic_out(a.topic).model_dump(), activity=a.activity)
            for a in found.active_topics
        ],
    )


@router.get("/agents/{agent_name}/topics", responses=documented("agent_not_found"))
async def list_topics(agent: PathAgent, svc: MemoryDep) -> list[TopicOut]:
    """The agent's topics as the last rebuild left them, largest first."""
    return [topic_out(t) for t in await asyncio.to_thread(svc.store.topics, agent.name)]


@router.get(
    "/agents/{agent_name}/topics/{topic_id}",
    responses=documented("agent_not_found", "topic_not_found"),
)
async def get_topic(agent: PathAgent, topic_id: TopicId, svc: MemoryDep) -> TopicOut:
    return topic_out(await asyncio.to_thread(svc.store.topic, agent.name, topic_id))


@router.get("/agents/{agent_name}/global", responses=documented("agent_not_found"))
async def get_global_memory(agent: PathAgent, svc: MemoryDep) -> GlobalMemoryOut:
    """The agent's pinned facts and most active topics (see `memory/global_memory.py`)."""
    return await asyncio.to_thread(global_out, svc.store, agent.name, svc.memory.clock())


@admin.post("/agents/{agent_name}/topics/rebuild", responses=documented("agent_not_found"))
async def rebuild_topics(agent: PathAgent, svc: MemoryDep) -> list[TopicOut]:
    """Group the agent's facts and episodes into topics again now and answer them (the chat
    model names each changed topic at background priority)."""
    built = await asyncio.to_thread(svc.topic_builder.rebuild, agent.name)
    return [topic_out(t) for t in built]


router.include_router(admin)
