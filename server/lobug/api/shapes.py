"""What the memory and curation routes read from request bodies: strict bodies, agent names
and metadata. What they answer is `lobug.read_model`'s, shared with the command line."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, WithJsonSchema
from pydantic_core import PydanticCustomError

from lobug.memory.limits import metadata_problem
from lobug.names import (
    AGENT_NAME_RULE,
    AGENT_NAME_SCHEMA,
    PERSON_NAME_MAX,
    PERSON_NAME_RULE,
    InvalidPersonName,
    is_agent_name,
    person_name,
)


class StrictBody(BaseModel):
    """A request body read strictly: `true` is no number and `1` no boolean."""

    model_config = ConfigDict(strict=True)


def valid_agent_name(name: str) -> str:
    if not is_agent_name(name):
        raise PydanticCustomError("invalid_agent", AGENT_NAME_RULE)
    return name


def valid_metadata(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """Metadata is kept as JSON, within `memory/limits.py`'s rule: NaN and Infinity have no
    JSON form (they would come back as null), and it is at most `MAX_METADATA_BYTES`."""
    problem = metadata_problem(metadata)
    if problem is not None:
        raise PydanticCustomError("invalid_request", "metadata {problem}", {"problem": problem})
    return metadata


Metadata = Annotated[dict[str, Any] | None, AfterValidator(valid_metadata)]


def valid_person_name(name: str) -> str:
    try:
        return person_name(name)
    except InvalidPersonName:
        raise PydanticCustomError("invalid_person", PERSON_NAME_RULE) from None


PersonName = Annotated[
    str,
    AfterValidator(valid_person_name),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": PERSON_NAME_MAX}),
]

AgentName = Annotated[
    str,
    AfterValidator(valid_agent_name),
    WithJsonSchema(AGENT_NAME_SCHEMA),
]
