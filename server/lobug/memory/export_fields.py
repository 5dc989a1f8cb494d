"""What an export document (`docs/export.schema.json`) may hold, field by field, and the checks
an import makes before anything is written (`memory/transfer.py`). The rules are the API's
(`memory/limits.py`): the same character limits (a fact at most `MAX_FACT_CHARS`, a base
memory `MAX_BASE_MEMORY_CHARS`, a block's value its own `char_limit`), the same block labels,
metadata within `MAX_METADATA_BYTES`, no lone surrogate in any text, every time within
1970..2200. Besides, the records of one agent must hang together: no id repeats within a kind,
no label among blocks, no name among agents; a fact's successor (`superseded_by`) is a fact of
the same agent, and following successors never comes back to where it started (nor to a copy
of it: a record the same by its content key). Every problem is an `InvalidExport` naming the
JSON path of the value."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from lobug.clock import EARLIEST, LATEST
from lobug.memory.limits import (
    BLOCK_LABEL_RULE,
    MAX_BASE_MEMORY_CHARS,
    MAX_CONTENT_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_DETAIL_BYTES,
    MAX_FACT_CHARS,
    MAX_METADATA_BYTES,
    MAX_NAME_CHARS,
    TIME_RULE,
    is_block_label,
    object_problem,
    text_problem,
)
from lobug.names import (
    AGENT_NAME_RULE,
    DEVICE_ID,
    DEVICE_ID_RULE,
    PERSON_NAME_RULE,
    is_agent_name,
    is_person_name,
)
from lobug.store.models import FACT_TYPES, TIME_SPANS
from lobug.store.records import FORMAT, content_key

Spec = dict[str, str]

# The kinds of value a field holds, each with what bounds it. A `FIELDS` entry names one of
# these, `agent` or `device` (names as `lobug/names.py` allows them), `label` (a block's),
# `boolean`, `integers` or `strings` (lists of `integer` / `string`), `history` (a block's
# changes), `base_memory`, or `a|b` for one of some strings; a trailing `?` allows null.
# `memory/export_schema.py` writes the JSON Schema from these same tables.
TEXTS: dict[str, int] = {  # text (no lone surrogate) of at most so many characters
    "string": MAX_CONTENT_CHARS,
    "fact": MAX_FACT_CHARS,
    "memory": MAX_BASE_MEMORY_CHARS,
    "description": MAX_DESCRIPTION_CHARS,
    "short": MAX_NAME_CHARS,
}
INTEGERS: dict[str, tuple[int, int]] = {
    "integer": (-(2**63), 2**63 - 1),
    "limit": (1, MAX_CONTENT_CHARS),  # a block's char_limit, as the API allows it
    "score": (0, 10),
}
NUMBERS: dict[str, tuple[float, float]] = {  # finite numbers (integers too) in a range
    "time": (EARLIEST, LATEST),
    "confidence": (0.0, 1.0),
}
OBJECTS: dict[str, int] = {  # JSON objects of at most so many bytes (`limits.object_problem`)
    "metadata": MAX_METADATA_BYTES,
    "object": MAX_DETAIL_BYTES,
}

FIELDS: dict[str, Spec] = {
    "people": {
        "id": "integer",
        "name": "person",
        "created_at": "time",
        "devices": "devices",
    },
    "messages": {
        "id": "integer",
        "device_id": "device",
        "role": "user|assistant|system",
        "content": "string",
        "created_at": "time",
        "summarized": "boolean",
        "metadata": "metadata?",
        "person_id": "integer?",
        "speaker_source": "voice|claim|device_default|named|guest|assistant|system?",
        "speaker_confidence": "confidence?",
    },
    "summaries": {
        "id": "integer",
        "content": "string",
        "source_from_id": "integer",
        "source_to_id": "integer",
        "created_at": "time",
        "incorporated": "boolean",
    },
    "facts": {
        "id": "integer",
        "type": "|".join(FACT_TYPES),
        "content": "fact",
        "subject": "fact?",
        "relation": "fact?",
        "object": "fact?",
        "time_span": "|".join(TIME_SPANS) + "?",
        "confidence": "confidence",
        "user_score": "score?",
        "pinned": "boolean",
        "origin": "short?",
        "source_message_ids": "integers",
        "created_at": "time",
        "valid_from": "time",
        "invalidated_at": "time?",
        "superseded_by": "integer?",
        "forgotten_at": "time?",
        "purged_at": "time?",
        "due_at": "time?",
        "owner_person_id": "integer?",
        "scope": "private|household",
        "shareable": "boolean",
    },
    "base_memory_versions": {
        "id": "integer",
        "content": "memory",
        "written_by": "short",
        "created_at": "time",
    },
    "blocks": {
        "id": "integer",
        "label": "label",
        "value": "string",
        "description": "description?",
        "char_limit": "limit?",
        "read_only": "boolean",
        "created_at": "time",
        "updated_at": "time",
        "history": "history",
    },
    "block_history": {
        "old_value": "string?",
        "new_value": "string",
        "changed_by": "short",
        "changed_at": "time",
    },
    "audit": {
        "id": "integer",
        "at": "time",
        "actor": "short",
        "action": "short",
        "target": "short",
        "target_ids": "integers",
        "before": "string?",
        "after": "string?",
        "detail": "object?",
    },
    "topics": {
        "id": "integer",
        "position": "integer",
        "name": "string",
        "summary": "string",
        "open_questions": "strings",
        "next_actions": "strings",
        "written_by": "short",
        "built_at": "time",
        "size": "integer",
        "last_active_at": "time",
        "fact_ids": "integers",
        "episode_ids": "integers",
    },
    "reminders": {
        "id": "integer",
        "device_id": "device",
        "what": "fact",
        "ring_at": "time",
        "created_at": "time",
        "said_at": "time?",
        "said_on": "device?",
        "cancelled_at": "time?",
        "owner_person_id": "integer?",  # read as the household's (None) when absent
    },
}
AGENT_FIELDS: Spec = {
    "name": "agent",
    "created_at": "time",
    "metadata": "metadata?",
    "base_memory": "base_memory",
}
BASE_MEMORY_FIELDS: Spec = {"content": "memory", "stale": "boolean"}
DOCUMENT_FIELDS: Spec = {
    "format": FORMAT,
    "version": "integer",
    "exported_at": "time",
    "embedding_model": "string?",
}


class InvalidExport(ValueError):
    """The document is not a Lo-Bug export; the message names the JSON path."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"invalid export document at {path}: {problem}")
        self.path = path
        self.problem = problem


# ---------------------------------------------------------------------- one value


def check_object(value: Any, spec: Spec, path: str) -> None:
    if not isinstance(value, dict):
        raise InvalidExport(path, "must be an object")
    for name, kind in spec.items():
        if name not in value:
            raise InvalidExport(f"{path}.{name}", "is missing")
        check_value(value[name], kind, f"{path}.{name}")


def check_value(value: Any, kind: str, path: str) -> None:
    if kind.endswith("?"):
        if value is None:
            return
        kind = kind[:-1]
    if kind == "history":
        if not isinstance(value, list):
            raise InvalidExport(path, "must be a list")
        for number, change in enumerate(value):
            check_object(change, FIELDS["block_history"], f"{path}[{number}]")
    elif kind == "base_memory":
        check_object(value, BASE_MEMORY_FIELDS, path)
    elif kind in ("integers", "strings", "devices"):
        if not isinstance(value, list):
            raise InvalidExport(path, f"must be {describe(kind)}, not {shown(value)}")
        for item in value:
            problem = value_problem(item, kind[:-1])
            if problem is not None:
                raise InvalidExport(path, f"must be {describe(kind)}: an item {problem}")
    else:
        problem = value_problem(value, kind)
        if problem is not None:
            raise InvalidExport(path, problem)


def value_problem(value: Any, kind: str) -> str | None:
    """Why `value` is no `kind` (a kind of one value), or None."""
    if kind in NUMBERS and isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, not {shown(value)}"  # JSON has no NaN
    if not is_kind(value, kind):
        return f"must be {describe(kind)}, not {shown(value)}"
    if kind in OBJECTS:
        return object_problem(value, OBJECTS[kind])
    if kind in TEXTS:
        problem = text_problem(value)
        if problem is not None:
            return problem
        if len(value) > TEXTS[kind]:
            return f"must be {describe(kind)}, not {len(value)}"
    return None


def is_kind(value: Any, kind: str) -> bool:
    """Whether `value` is of `kind`, its length aside."""
    if kind in TEXTS:
        return isinstance(value, str)
    if kind in INTEGERS:
        low, high = INTEGERS[kind]
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if kind in NUMBERS:
        least, most = NUMBERS[kind]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and least <= value <= most  # NaN is not
    simple = {
        "agent": is_agent_name,
        "device": lambda v: isinstance(v, str) and DEVICE_ID.fullmatch(v) is not None,
        "person": is_person_name,
        "label": is_block_label,
        "boolean": lambda v: isinstance(v, bool),
        **{name: lambda v: isinstance(v, dict) for name in OBJECTS},
    }
    if kind in simple:
        return bool(simple[kind](value))
    return value in kind.split("|")


def describe(kind: str) -> str:
    named = {
        "agent": f"an agent name ({AGENT_NAME_RULE})",
        "device": f"a device id ({DEVICE_ID_RULE.removeprefix('X-Device-Id ')})",
        "label": BLOCK_LABEL_RULE,
        "integers": "a list of integers",
        "strings": "a list of strings",
        "devices": "a list of device ids",
        "person": f"a person's name ({PERSON_NAME_RULE})",
        "integer": "an integer",
        "limit": f"an integer from 1 to {MAX_CONTENT_CHARS}",
        "score": "an integer from 0 to 10",
        "time": TIME_RULE,
        "confidence": "a number from 0 to 1",
        "boolean": "a boolean",
        "metadata": "an object",
        "object": "an object",
    }
    if kind in named:
        return named[kind]
    if kind in TEXTS:
        return f"a string of at most {TEXTS[kind]} characters"
    return "one of " + ", ".join(repr(choice) for choice in kind.split("|"))


def shown(value: Any) -> str:
    """The start of `value` as JSON, for an error message."""
    if isinstance(value, str):
        value = value[:60]
    elif isinstance(value, dict | list):
        return "an object" if isinstance(value, dict) else "a list"
    return json.dumps(value)[:60]


# ---------------------------------------------------------------------- records together


def check_together(agent: Mapping[str, Any], path: str) -> None:
    """The checks across one agent's records (the module says which), once each record has
    passed its own."""
    for kind in FIELDS:
        if kind != "block_history":
            unique(agent.get(kind, []), "id", f"{path}.{kind}")
    unique(agent.get("blocks", []), "label", f"{path}.blocks")
    for number, block in enumerate(agent.get("blocks", [])):
        limit = block["char_limit"]
        if limit is not None and len(block["value"]) > limit:
            raise InvalidExport(
                f"{path}.blocks[{number}].value",
                f"has {len(block['value'])} characters; the block's char_limit is {limit}",
            )
    check_successors(agent.get("facts", []), f"{path}.facts")


def unique(records: list[Any], field: str, path: str) -> None:
    seen: dict[Any, int] = {}
    for number, record in enumerate(records):
        first = seen.setdefault(record[field], number)
        if first != number:
            raise InvalidExport(
                f"{path}[{number}].{field}", f"repeats the {field} of {path}[{first}]"
            )


def check_successors(facts: list[Any], path: str) -> None:
    """Every `superseded_by` names a fact of the list, and no chain of successors comes back
    to where it started. Facts are linked as the import links them: by content key, the
    first link of a key winning."""
    index = {fact["id"]: number for number, fact in enumerate(facts)}
    keys = [content_key("facts", fact) for fact in facts]
    successor: dict[str, str] = {}
    for number, fact in enumerate(facts):
        target = fact["superseded_by"]
        if target is None:
            continue
        if target not in index:
            raise InvalidExport(
                f"{path}[{number}].superseded_by", f"names no fact of this agent (id {target})"
            )
        successor.setdefault(keys[number], keys[index[target]])
    cycle = a_cycle(successor)
    if cycle:
        first = min(n for n, key in enumerate(keys) if key in cycle and key in successor)
        raise InvalidExport(
            f"{path}[{first}].superseded_by",
            "makes a cycle: following its successors comes back to this fact",
        )


def a_cycle(successor: Mapping[str, str]) -> set[str]:
    """The keys of one cycle of `successor` links (empty when there is none); each key is
    walked once."""
    done: set[str] = set()
    for start in successor:
        walk: dict[str, None] = {}
        key: str | None = start
        while key is not None and key not in done and key not in walk:
            walk[key] = None
            key = successor.get(key)
        if key is not None and key in walk:
            return set(list(walk)[list(walk).index(key) :])
        done.update(walk)
    return set()
