"""Topics (`memory/topics.py`): each with its summary, open questions, next actions and the
facts it holds, the most active of them marked as in the global memory; editors rebuild them
on demand, as `POST /memory/agents/{agent}/topics/rebuild` does."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from lobug.memory.evidence import SummariesPrivate, require_summaries
from lobug.memory.global_memory import ACTIVE_DAYS, most_active
from lobug.services import MemoryServices
from lobug.store.models import Fact, Topic
from lobug.ui.access import EditorDep, ViewerDep, reads_of
from lobug.ui.render import AgentChoice, AgentField, act, choose_agent, message_page, page
from lobug.web.deps import MemoryDep

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True)
class TopicView:
    topic: Topic
    facts: list[Fact]  # current ones only: a fact forgotten since drops its topics anyway
    episodes: int
    activity: int | None  # members in the last ACTIVE_DAYS days, for a topic in global memory


def topic_views(svc: MemoryServices, agent: str) -> list[TopicView]:
    """Blocking: the agent's topics, largest first, with their facts read in one query."""
    topics = svc.store.topics(agent)
    active = {a.topic_id: a.activity for a in most_active(svc.store, agent, svc.memory.clock())}
    facts = svc.store.facts_by_ids([i for t in topics for i in t.member_ids("fact")])
    return [
        TopicView(
            t,
            [facts[i] for i in t.member_ids("fact") if i in facts],
            len(t.member_ids("episode")),
            active.get(t.id),
        )
        for t in topics
    ]


@router.get("/ui/topics")
async def topics(
    request: Request, viewer: ViewerDep, svc: MemoryDep, agent: str | None = None
) -> HTMLResponse:
    def gather() -> tuple[AgentChoice, list[TopicView]]:
        choice = choose_agent(svc, agent)
        if choice.name is None:
            return choice, []
        require_summaries(reads_of(svc, viewer, choice.name))
        return choice, topic_views(svc, choice.name)

    try:
        choice, views = await asyncio.to_thread(gather)
    except SummariesPrivate as exc:
        return message_page(request, "Not shown", str(exc), status=403)
    return page(request, "topics.html", viewer, choice, topics=views, active_days=ACTIVE_DAYS)


@router.post("/ui/topics/rebuild")
async def rebuild_topics(
    request: Request,
    viewer: EditorDep,
    svc: MemoryDep,
    agent: AgentField,
) -> RedirectResponse:
    def rebuild() -> str:
        built = svc.topic_builder.rebuild(agent)
        return f"Topics rebuilt: {len(built)}."

    return await act(request, viewer, svc, agent, rebuild, "/ui/topics")
