"""Agents and messages as the surfaces show them, and times as ISO 8601 UTC."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from lobug.clock import utc_iso
from lobug.store.models import Agent, Message

iso = utc_iso
Shown = TypeVar("Shown", bound=BaseModel)


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


def shown(model: type[Shown], thing: Any, **given: Any) -> Shown:
    """`model` filled from `thing`'s attributes of its fields' names (an id, `*_id` or
    `*_ids` as text, a time `*_at` as ISO 8601 UTC, None as None), the fields `given` as given;
    a field `thing` lacks keeps its default."""
    values = dict(given)
    for name in model.model_fields:
        if name in given or not hasattr(thing, name):
            continue
        value = getattr(thing, name)
        if value is not None and (name == "id" or name.endswith("_id")):
            value = str(value)
        elif value is not None and name.endswith("_ids"):
            value = [str(i) for i in value]
        elif value is not None and name.endswith("_at"):
            value = iso(value)
        values[name] = value
    return model(**values)


def agent_out(agent: Agent) -> AgentOut:
    return shown(AgentOut, agent)


def message_out(
    message: Message, similarity: float | None = None, names: Mapping[int, str] | None = None
) -> MessageOut:
    """`names`: the household's people by id, to name who said it."""
    speaker = speaker_of(message, names or {})
    return shown(MessageOut, message, speaker=speaker, similarity=similarity)


def speaker_of(message: Message, names: Mapping[int, str]) -> str | None:
    """Who said `message`: `assistant`, a person's name (`person:<id>` once they are gone
    from `names`), `guest`, or None when it was not recorded."""
    if message.role == "assistant":
        return "assistant"
    if message.person_id is not None:
        return names.get(message.person_id, f"person:{message.person_id}")
    return None if message.speaker_source is None else "guest"
