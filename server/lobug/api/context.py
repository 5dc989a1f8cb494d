"""`POST /context/{agent}`: the agent's memory for a query under a token budget
(`memory.assembly`), section by section with each one's tokens and share, and the ready
`prompt` that `learning()` and the `/v1` proxy inject.

Mounted with the memory API (`/memory` on the device server, the root on `lobug
memory-server`).
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from pydantic import BaseModel, Field

from lobug.api.deps import CallerEvidence, PathAgent
from lobug.api.errors import ApiError
from lobug.api.memory import scored_out
from lobug.api.shapes import AgentName, PersonName, StrictBody
from lobug.memory.assembly import (
    DEFAULT_CONTEXT_TOKENS,
    BudgetedContext,
    ContextRequest,
    assemble,
)
from lobug.memory.evidence import Evidence, asking_viewer
from lobug.memory.limits import MAX_CONTENT_CHARS
from lobug.memory.search import SearchMode
from lobug.read_model.common import MessageOut, shown
from lobug.read_model.memory import BlockOut, MadeOut, block_out
from lobug.services import MemoryServices
from lobug.store.models import MemoryBlock, Summary
from lobug.web.deps import MemoryDep

MAX_CONTEXT_TOKENS = 100_000

router = APIRouter()


class ContextIn(StrictBody):
    query: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    agent_name: AgentName | None = None
    max_tokens: int = Field(default=DEFAULT_CONTEXT_TOKENS, ge=1, le=MAX_CONTEXT_TOKENS)
    person: PersonName | None = Field(
        default=None,
        description="the person of the household who asks: memory as they may see it "
        "(none: the person the token is, else a guest). Only the admin, or a device's own "
        "token of that person's device, may name a person: 403 person_not_allowed otherwise",
    )


class SectionOut(BaseModel):
    name: str
    tokens: int
    share: float


class ContextFactOut(BaseModel):
    id: str
    type: str
    content: str
    similarity: float
    due_at: str | None = None


class SummaryOut(MadeOut):
    """An episode: a summary, when its first and last message were said, and how its text
    was made."""

    id: str
    content: str
    started_at: str | None = None
    ended_at: str | None = None


class ContextOut(BaseModel):
    """In priority order: pinned facts, base memory, blocks, relevant facts, summaries,
    messages and the most active topics (each `name: summary`); `sections` gives each one's
    tokens and share of `max_tokens`."""

    max_tokens: int
    tokens: int
    pinned: list[str]
    base_memory: str
    memory_blocks: list[BlockOut]
    facts: list[ContextFactOut]
    summaries: list[SummaryOut]
    relevant_messages: list[MessageOut]
    skills: list[str] = Field(
        default_factory=list, description="the skills whose whole text is in the prompt"
    )
    active_topics: list[str] = []
    sections: list[SectionOut]
    prompt: str
    search_mode: SearchMode = "hybrid"


def episode_out(summary: Summary) -> SummaryOut:
    return shown(SummaryOut, summary)


def context_out(found: BudgetedContext, blocks: list[MemoryBlock]) -> ContextOut:
    """The budgeted context; each block kept shown whole but for its value as it was cut."""
    context = found.context
    kept = dict(context.blocks)
    return ContextOut(
        max_tokens=found.max_tokens,
        tokens=found.tokens,
        pinned=list(context.pinned),
        base_memory=context.base_memory,
        memory_blocks=[
            block_out(b).model_copy(update={"value": kept[b.label]})
            for b in blocks
            if b.label in kept
        ],
        facts=[
            shown(
                ContextFactOut,
                hit.fact,
                type=hit.fact.fact_type,
                similarity=round(hit.similarity, 6),
            )
            for hit in context.facts
        ],
        summaries=[episode_out(s) for s in context.summaries],
        relevant_messages=scored_out(list(context.messages)),
        skills=[skill.name for skill in context.skills],
        active_topics=list(context.topics),
        sections=[SectionOut(name=s.name, tokens=s.tokens, share=s.share) for s in found.sections],
        prompt=found.prompt,
        search_mode=found.search_mode,
    )


def gather(svc: MemoryServices, agent: str, body: ContextIn, evidence: Evidence) -> ContextOut:
    viewer = asking_viewer(svc.memory.household, agent, evidence, body.person)
    asked = ContextRequest(
        body.max_tokens, svc.settings.max_context_messages, topics=True, viewer=viewer
    )
    found = assemble(svc.memory, agent, body.query, asked)
    return context_out(found, svc.store.blocks(agent))


@router.post("/context/{agent_name}")
async def context(
    agent: PathAgent, body: ContextIn, svc: MemoryDep, evidence: CallerEvidence
) -> ContextOut:
    """The agent's memory for `query` within `max_tokens` (default 1,500), by the token
    estimate every prompt budget uses."""
    if body.agent_name is not None and body.agent_name != agent.name:
        raise ApiError(422, "agent_mismatch", "'agent_name' in the body differs from the path")
    return await asyncio.to_thread(gather, svc, agent.name, body, evidence)
