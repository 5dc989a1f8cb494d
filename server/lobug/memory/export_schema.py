"""The JSON Schema of the export document, generated from the field specs of
`memory/transfer.py`; `docs/export.schema.json` is this, written out (a test keeps them equal).

Regenerate with `python -m lobug.memory.export_schema > docs/export.schema.json`."""

from __future__ import annotations

import json
from typing import Any

from lobug.memory.transfer import (
    AGENT_FIELDS,
    BASE_MEMORY_FIELDS,
    DOCUMENT_FIELDS,
    FIELDS,
    Spec,
)
from lobug.names import AGENT_NAME_SCHEMA, DEVICE_ID
from lobug.store.records import FORMAT, KINDS, VERSION

JSON_TYPES = {"integer", "number", "string", "boolean", "object"}
NAMES = {
    "agent": AGENT_NAME_SCHEMA,
    "device": {"type": "string", "pattern": f"^{DEVICE_ID.pattern}$"},
}
RANGES = {"positive": {"minimum": 1}, "score": {"minimum": 0, "maximum": 10}}


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
        "description": "`lobug export` / GET /memory/export/{agent}: times are Unix seconds, "
        "ids are the exporting database's own.",
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
    elif kind in ("integers", "strings"):
        schema = {"type": "array", "items": {"type": kind[:-1]}}
    elif kind in NAMES:
        schema = dict(NAMES[kind])
    elif kind in RANGES:
        schema = {"type": "integer", **RANGES[kind]}
    elif kind in JSON_TYPES:
        schema = {"type": kind}
    else:
        schema = {"enum": kind.split("|")}
    return {"anyOf": [schema, {"type": "null"}]} if nullable else schema


if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2))
