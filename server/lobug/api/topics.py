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

from lobug.api.deps import ADMIN_RESPONSES, AdminOnly, PathAgent, ReadsSummaries
from lobug.api.errors import documented
from lobug.memory.limits import MAX_ID
from lobug.read_model.topics import GlobalMemoryOut, TopicOut, global_out, topic_out
from lobug.web.deps import MemoryDep

TopicId = Annotated[int, Path(ge=1, le=MAX_ID)]

router = APIRouter()  # reads: for tokens that may read what every person's words made
admin = APIRouter(dependencies=[AdminOnly], responses=ADMIN_RESPONSES)


@router.get(
    "/agents/{agent_name}/topics",
    dependencies=[ReadsSummaries],
    responses=documented("agent_not_found", "summaries_private"),
)
async def list_topics(agent: PathAgent, svc: MemoryDep) -> list[TopicOut]:
    """The agent's topics as the last rebuild left them, largest first."""
    return [topic_out(t) for t in await asyncio.to_thread(svc.store.topics, agent.name)]


@router.get(
    "/agents/{agent_name}/topics/{topic_id}",
    dependencies=[ReadsSummaries],
    responses=documented("agent_not_found", "topic_not_found", "summaries_private"),
)
async def get_topic(agent: PathAgent, topic_id: TopicId, svc: MemoryDep) -> TopicOut:
    return topic_out(await asyncio.to_thread(svc.store.topic, agent.name, topic_id))


@router.get(
    "/agents/{agent_name}/global",
    dependencies=[ReadsSummaries],
    responses=documented("agent_not_found", "summaries_private"),
)
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
