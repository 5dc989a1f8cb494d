"""The JSON Schema of the export document, generated from the field specs of
`memory/export_fields.py`; `docs/export.schema.json` is this, written out (a test keeps them equal).

Regenerate with `python -m lobug.memory.export_schema > docs/export.schema.json`."""

from __future__ import annotations

import json
from typing import Any

from lobug.memory.export_fields import (
    AGENT_FIELDS,
    BASE_MEMORY_FIELDS,
    DOCUMENT_FIELDS,
    FIELDS,
    INTEGERS,
    NUMBERS,
    OBJECTS,
    TEXTS,
    Spec,
)
from lobug.memory.limits import BLOCK_LABEL_PATTERN, MAX_NAME_CHARS
from lobug.names import AGENT_NAME_SCHEMA, DEVICE_ID, PERSON_NAME_MAX
from lobug.store.records import FORMAT, KINDS, VERSION

NAMES = {
    "agent": AGENT_NAME_SCHEMA,
    "device": {"type": "string", "pattern": f"^{DEVICE_ID.pattern}$"},
    "person": {"type": "string", "minLength": 1, "maxLength": PERSON_NAME_MAX},
    "label": {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_NAME_CHARS,
        "pattern": BLOCK_LABEL_PATTERN,
    },
}


def json_schema() -> dict[str, Any]:
    document = object_schema(DOCUMENT_FIELDS)
    document["properties"]["format"] = {"const": FORMAT}
    document["properties"]["version"] = {"const": VERSION}
    document["properties"]["agents"] = {"type": "array", "items": {"$ref": "#/$defs/agent"}}
    document["required"].append("agents")
    agent = object_schema(AGENT_FIELDS)
    for kind in KINDS:
        agent["properties"][kind] = {"type": "array", "items": {"$ref": f"#/$defs/{kind}"}}
        agent["required"].append(kind)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Lo-Bug memory export",
        "description": "`lobug export` / GET /memory/export/{agent}: times are Unix seconds "
        "from 1970 to 2200, ids are the exporting database's own. An import also checks what "
        "a schema cannot say: no lone surrogate in any text, no id repeated within a kind, "
        "every superseded_by naming a fact of the agent and no cycle of them, a block's "
        "value within its char_limit (memory/export_fields.py).",
        **document,
        "$defs": {
            "agent": agent,
            "base_memory": object_schema(BASE_MEMORY_FIELDS),
            **{kind: object_schema(spec) for kind, spec in FIELDS.items()},
        },
    }


def object_schema(spec: Spec) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: value_schema(kind) for name, kind in spec.items()},
        "required": list(spec),
    }


def value_schema(kind: str) -> dict[str, Any]:
    nullable = kind.endswith("?")
    kind = kind.removesuffix("?")
    if kind == "history":
        schema: dict[str, Any] = {"type": "array", "items": {"$ref": "#/$defs/block_history"}}
    elif kind == "base_memory":
        schema = {"$ref": "#/$defs/base_memory"}
    elif kind in ("integers", "strings", "devices"):
        schema = {"type": "array", "items": value_schema(kind[:-1])}
    else:
        schema = one_value_schema(kind)
    return {"anyOf": [schema, {"type": "null"}]} if nullable else schema


def one_value_schema(kind: str) -> dict[str, Any]:
    if kind in NAMES:
        return dict(NAMES[kind])
    if kind in TEXTS:
        return {"type": "string", "maxLength": TEXTS[kind]}
    if kind in INTEGERS:
        low, high = INTEGERS[kind]
        return {"type": "integer", "minimum": low, "maximum": high}
    if kind in NUMBERS:
        least, most = NUMBERS[kind]
        return {"type": "number", "minimum": least, "maximum": most}
    if kind in OBJECTS:
        return {
            "type": "object",
            "description": f"at most {OBJECTS[kind]} bytes as compact UTF-8 JSON",
        }
    if kind == "boolean":
        return {"type": "boolean"}
    return {"enum": kind.split("|")}


if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2))
