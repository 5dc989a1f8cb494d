"""The rest of an agent's memory as the surfaces show it: agents with their counts, memory
blocks, the base memory, what a forgetting took, and the audit log's entries."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from lobug.read_model.common import AgentOut, agent_out, iso, iso_or_none, shown
from lobug.store.models import AgentCounts, AuditEntry, Forgotten, MemoryBlock
from lobug.store.protocol import SummaryStore


class AgentCountsOut(AgentOut):
    messages: int
    facts: int = Field(description="current facts")
    summaries: int


class BlockOut(BaseModel):
    id: str
    agent_id: str
    label: str
    value: str
    description: str | None
    limit: int | None
    read_only: bool
    created_at: str
    updated_at: str


class MadeOut(BaseModel):
    """How a derived text was made: fields beside the text, never notes inside it."""

    made_by: str | None = Field(
        default=None,
        description="`model`: written by the chat model; `extractive`: built without it from "
        "the sources' own words (the model's text failed its checks); `person`: written by "
        "hand; null: not recorded (older or imported)",
    )
    dropped_sentences: int = Field(
        default=0,
        description="sentences of the model's text that the facts and messages it was made "
        "from did not support, left out",
    )


class BaseMemoryOut(MadeOut):
    content: str
    updated_at: str | None
    written_by: str | None = Field(description="who wrote the current version")
    stale: bool = Field(description="something it was distilled from was forgotten since")


class ForgottenOut(BaseModel):
    messages: int
    facts: int
    summaries: int
    message_ids: list[str]
    fact_ids: list[str]
    summary_ids: list[str]


class AuditEntryOut(BaseModel):
    id: str
    at: str
    actor: str
    action: str
    target: str
    target_ids: list[str]
    before: str | None
    after: str | None
    detail: dict[str, Any] | None


def counts_out(counted: AgentCounts) -> AgentCountsOut:
    return shown(AgentCountsOut, counted, **agent_out(counted.agent).model_dump())


def block_out(block: MemoryBlock) -> BlockOut:
    return shown(BlockOut, block, limit=block.char_limit)


def base_memory_out(store: SummaryStore, agent: str) -> BaseMemoryOut:
    """Blocking: the base memory, who wrote it and when, and whether it is stale."""
    history = store.base_memory_history(agent)
    newest = history[0] if history else None
    return BaseMemoryOut(
        content=store.base_memory(agent),
        updated_at=iso_or_none(newest.created_at if newest else None),
        written_by=newest.written_by if newest else None,
        stale=store.base_memory_is_stale(agent),
        made_by=newest.made_by if newest else None,
        dropped_sentences=newest.dropped_sentences if newest else 0,
    )


def forgotten_out(forgotten: Forgotten) -> ForgottenOut:
    return ForgottenOut(
        **forgotten.counts(),
        message_ids=[str(i) for i in forgotten.messages],
        fact_ids=[str(i) for i in forgotten.facts],
        summary_ids=[str(i) for i in forgotten.summaries],
    )


def audit_out(entry: AuditEntry) -> AuditEntryOut:
    return shown(AuditEntryOut, entry, at=iso(entry.at))
