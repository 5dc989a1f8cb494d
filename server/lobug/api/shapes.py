"""What the memory and curation routes read from request bodies: strict bodies, agent names
and metadata. What they answer is `lobug.read_model`'s, shared with the command line."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, WithJsonSchema
from pydantic_core import PydanticCustomError

from lobug.names import AGENT_NAME_RULE, AGENT_NAME_SCHEMA, is_agent_name


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
