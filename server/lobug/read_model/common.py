"""Agents and messages as the surfaces show them, and times as ISO 8601 UTC."""

from __future__ import annotations

from collections.abc import Mapping
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
    speaker: str | None = Field(
        default=None,
        description="who said it: a person's name, `guest` or `assistant` (the assistant's "
        "rows name the person answered in `person_id`); None: not recorded (an import)",
    )
    person_id: str | None = None
    speaker_source: str | None = Field(
        default=None, description="voice, claim, device_default, guest or assistant"
    )
    speaker_confidence: float | None = None


def iso_or_none(timestamp: float | None) -> str | None:
    return None if timestamp is None else iso(timestamp)


def agent_out(agent: Agent) -> AgentOut:
    return AgentOut(
        id=str(agent.id), name=agent.name, created_at=iso(agent.created_at), metadata=agent.metadata
    )


def message_out(
    message: Message, similarity: float | None = None, names: Mapping[int, str] | None = None
) -> MessageOut:
    """`names`: the household's people by id, to name who said it."""
    return MessageOut(
        speaker=speaker_of(message, names or {}),
        person_id=None if message.person_id is None else str(message.person_id),
        speaker_source=message.speaker_source,
        speaker_confidence=message.speaker_confidence,
        id=str(message.id),
        agent_id=str(message.agent_id),
        device_id=message.device_id,
        role=message.role,
        content=message.content,
        created_at=iso(message.created_at),
        metadata=message.metadata,
        similarity=similarity,
    )


def speaker_of(message: Message, names: Mapping[int, str]) -> str | None:
    """Who said `message`: `assistant`, a person's name (`person:<id>` once they are gone
    from `names`), `guest`, or None when it was not recorded."""
    if message.role == "assistant":
        return "assistant"
    if message.person_id is not None:
        return names.get(message.person_id, f"person:{message.person_id}")
    return None if message.speaker_source is None else "guest"
