"""Agents and messages as the surfaces show them, and times as ISO 8601 UTC."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from lobug.clock import utc_iso
from lobug.store.models import Agent, Message

iso = utc_iso


class AgentOut(BaseModel):
    id: str
    name: str
    created_at: str
    metadata: dict[str, Any] | None


class MessageOut(BaseModel):
    id: str
    agent_id: str
    device_id: str = Field(description="the device that said it; `api` or `v1` for programs")
    role: str
    content: str
    created_at: str
    metadata: dict[str, Any] | None
    similarity: float | None = None


def iso_or_none(timestamp: float | None) -> str | None:
    return None if timestamp is None else iso(timestamp)


def agent_out(agent: Agent) -> AgentOut:
    return AgentOut(
        id=str(agent.id), name=agent.name, created_at=iso(agent.created_at), metadata=agent.metadata
    )


def message_out(message: Message, similarity: float | None = None) -> MessageOut:
    return MessageOut(
        id=str(message.id),
        agent_id=str(message.agent_id),
        device_id=message.device_id,
        role=message.role,
        content=message.content,
        created_at=iso(message.created_at),
        metadata=message.metadata,
        similarity=similarity,
    )
