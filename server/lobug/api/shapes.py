"""JSON shapes shared by the memory and curation routes: agents and messages as the API shows
them, ids as strings and times as ISO 8601 UTC."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from lobug.names import AGENT_NAME_RULE, AGENT_NAME_SCHEMA, is_agent_name
from lobug.store.models import Agent, Message


class StrictBody(BaseModel):
    """A request body read strictly: `true` is no number and `1` no boolean."""

    model_config = ConfigDict(strict=True)


def valid_agent_name(name: str) -> str:
    if not is_agent_name(name):
        raise PydanticCustomError("invalid_agent", AGENT_NAME_RULE)
    return name


def finite_json(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """Metadata is kept as JSON: NaN and Infinity have no JSON form (they would come back as
    null), so they are refused."""
    stack: list[Any] = [metadata]
    while stack:
        value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise PydanticCustomError("invalid_request", "metadata holds NaN or Infinity")
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return metadata


Metadata = Annotated[dict[str, Any] | None, AfterValidator(finite_json)]

AgentName = Annotated[
    str,
    AfterValidator(valid_agent_name),
    WithJsonSchema(AGENT_NAME_SCHEMA),
]


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


def iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")


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
