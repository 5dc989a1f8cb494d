"""What agents (memory namespaces) and devices may be called: one rule each, checked the same
way on every path that names one (memory API bodies and paths, the `/v1` proxy's `X-Agent` and
`user`, `X-Device-Id`, `LOBUG_AGENT` and `LOBUG_DEVICE_AGENTS`, `MemoryEngine`, MCP, the CLI,
imports). Always with `fullmatch`: a trailing newline is not part of a name.

An agent name made of dots alone (`.`, `..`) is refused: in a URL path it would be read as the
current or parent folder (`/memory/agents/..`), and in a file name as a folder."""

from __future__ import annotations

import re
from typing import Any

AGENT_NAME = re.compile(r"[A-Za-z0-9._:@-]*[A-Za-z0-9_:@-][A-Za-z0-9._:@-]*")
AGENT_NAME_MAX = 64
AGENT_NAME_RULE = "An agent name is 1-64 of A-Z a-z 0-9 . _ : @ -, not dots alone"
# The same rule in JSON Schema (no look-ahead: pydantic's and many clients' regexes lack it).
AGENT_NAME_SCHEMA: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": AGENT_NAME_MAX,
    "pattern": f"^{AGENT_NAME.pattern}$",
}

DEVICE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
DEVICE_ID_RULE = "X-Device-Id must be 1-64 characters of A-Z a-z 0-9 . _ : -"


class InvalidAgentName(ValueError):
    """A name that breaks `AGENT_NAME_RULE` (the API answers it 422 `invalid_agent`)."""


def is_agent_name(name: object) -> bool:
    return (
        isinstance(name, str)
        and len(name) <= AGENT_NAME_MAX
        and AGENT_NAME.fullmatch(name) is not None
    )


def agent_name(name: object) -> str:
    """`name` when it is a valid agent name; raises InvalidAgentName otherwise."""
    if not is_agent_name(name):
        raise InvalidAgentName(f"{name!r}: {AGENT_NAME_RULE}")
    assert isinstance(name, str)
    return name


# A person of a household (`memory/people.py`): a first name or a few words of one, in any
# script ("Jordan", "Mary Ann", "O'Neil", "José"); said back by the device and matched in
# what is said ("it's Jordan"), so no digits or symbols.
PERSON_NAME = re.compile(r"[^\W\d_]+(?:[ '\-.][^\W\d_]+)*")
PERSON_NAME_MAX = 40
PERSON_NAME_RULE = (
    "A person's name is 1-40 letters, words joined by one space, apostrophe, hyphen or dot"
)


class InvalidPersonName(ValueError):
    """A name that breaks `PERSON_NAME_RULE` (the API answers it 422 `invalid_person`)."""


def is_person_name(name: object) -> bool:
    """Whether `name` is a person's name as stored: the rule, with no outer spaces."""
    try:
        return person_name(name) == name
    except InvalidPersonName:
        return False


def person_name(name: object) -> str:
    """`name` with its outer spaces trimmed when it is a valid person's name; raises
    InvalidPersonName otherwise."""
    if isinstance(name, str):
        trimmed = name.strip()
        if len(trimmed) <= PERSON_NAME_MAX and PERSON_NAME.fullmatch(trimmed):
            return trimmed
    raise InvalidPersonName(f"{name!r}: {PERSON_NAME_RULE}")
