"""Export and import of agents as one versioned JSON document (`docs/export.schema.json`).

An export is written as a stream of text chunks (records read a page at a time), so a large
memory never has to fit in RAM. An import is checked whole before anything is written; a bad
document raises `InvalidExport` naming the JSON path of the first problem. Vectors are
recomputed with the configured embedding model, then the store writes every agent in one
transaction, adding only what the database does not hold yet (by content key), so importing
the same file twice changes nothing the second time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lobug.backends.base import Embedder
from lobug.names import AGENT_NAME_RULE, DEVICE_ID, DEVICE_ID_RULE, is_agent_name
from lobug.store.models import API_SOURCE, FACT_TYPES, TIME_SPANS, Agent, Vector, fact_type_of
from lobug.store.protocol import TransferStore
from lobug.store.records import (
    FORMAT,
    KINDS,
    VERSION,
    AgentRecords,
    Imported,
    Record,
    content_key,
)

Spec = dict[str, str]

# Every field of every record: `integer` (64-bit), `positive` (an integer from 1), `score`
# (0-10), `number` (finite), `string`, `agent` and `device` (names as `lobug/names.py`
# allows them), `boolean`, `object`, `integers` and `strings` (lists of them),
# `history` (a block's changes), `a|b` for one of some strings; a trailing `?` allows null.
# `memory/export_schema.py` generates the JSON Schema file from these.
FIELDS: dict[str, Spec] = {
    "messages": {
        "id": "integer",
        "device_id": "device",
        "role": "user|assistant|system",
        "content": "string",
        "created_at": "number",
        "summarized": "boolean",
        "metadata": "object?",
    },
    "summaries": {
        "id": "integer",
        "content": "string",
        "source_from_id": "integer",
        "source_to_id": "integer",
        "created_at": "number",
        "incorporated": "boolean",
    },
    "facts": {
        "id": "integer",
        "type": "|".join(FACT_TYPES),
        "content": "string",
        "subject": "string?",
        "relation": "string?",
        "object": "string?",
        "time_span": "|".join(TIME_SPANS) + "?",
        "confidence": "number",
        "user_score": "score?",
        "pinned": "boolean",
        "origin": "string?",
        "source_message_ids": "integers",
        "created_at": "number",
        "valid_from": "number",
        "invalidated_at": "number?",
        "superseded_by": "integer?",
        "forgotten_at": "number?",
        "purged_at": "number?",
        "due_at": "number?",
    },
    "base_memory_versions": {
        "id": "integer",
        "content": "string",
        "written_by": "string",
        "created_at": "number",
    },
    "blocks": {
        "id": "integer",
        "label": "string",
        "value": "string",
        "description": "string?",
        "char_limit": "positive?",
        "read_only": "boolean",
        "created_at": "number",
        "updated_at": "number",
        "history": "history",
    },
    "block_history": {
        "old_value": "string?",
        "new_value": "string",
        "changed_by": "string",
        "changed_at": "number",
    },
    "audit": {
        "id": "integer",
        "at": "number",
        "actor": "string",
        "action": "string",
        "target": "string",
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
        "written_by": "string",
        "built_at": "number",
        "size": "integer",
        "last_active_at": "number",
        "fact_ids": "integers",
        "episode_ids": "integers",
    },
}
AGENT_FIELDS: Spec = {
    "name": "agent",
    "created_at": "number",
    "metadata": "object?",
    "base_memory": "base_memory",
}
BASE_MEMORY_FIELDS: Spec = {"content": "string", "stale": "boolean"}
DOCUMENT_FIELDS: Spec = {
    "format": FORMAT,
    "version": "integer",
    "exported_at": "number",
    "embedding_model": "string?",
}


class InvalidExport(ValueError):
    """The document is not a Lo-Bug export; the message names the JSON path."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"invalid export document at {path}: {problem}")
        self.path = path
        self.problem = problem


# ---------------------------------------------------------------------- export


def export_chunks(
    store: TransferStore, agents: Sequence[Agent], embedding_model: str | None, exported_at: float
) -> Iterator[str]:
    """The export document of `agents`, as text chunks (one per record)."""
    head = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": exported_at,
        "embedding_model": embedding_model,
    }
    yield json.dumps(head, ensure_ascii=False)[:-1] + ', "agents": ['
    for number, agent in enumerate(agents):
        yield ("," if number else "") + "\n"
        yield from agent_chunks(store, agent)
    yield "\n]}\n"


def agent_chunks(store: TransferStore, agent: Agent) -> Iterator[str]:
    content, stale = store.base_memory_row(agent.id)
    head = {
        "name": agent.name,
        "created_at": agent.created_at,
        "metadata": agent.metadata,
        "base_memory": {"content": content, "stale": stale},
    }
    yield json.dumps(head, ensure_ascii=False)[:-1]
    for kind in KINDS:
        yield f',\n "{kind}": ['
        for number, record in enumerate(store.export_records(agent.id, kind)):
            yield ("," if number else "") + "\n  " + json.dumps(record, ensure_ascii=False)
        yield "]"
    yield "}"


# ---------------------------------------------------------------------- import


def read_document(document: Any) -> list[AgentRecords]:
    """The agents of a parsed export document. Raises InvalidExport."""
    check_object(document, DOCUMENT_FIELDS, "$")
    if document["version"] not in range(1, VERSION + 1):
        raise InvalidExport("$.version", f"this Lo-Bug reads versions 1 to {VERSION} only")
    agents = document.get("agents")
    if not isinstance(agents, list):
        raise InvalidExport("$.agents", "must be a list")
    if document["version"] == 1:
        agents = [upgraded_from_version_1(agent) for agent in agents]
    return [agent_records(agent, f"$.agents[{n}]") for n, agent in enumerate(agents)]


def upgraded_from_version_1(agent: Any) -> Any:
    """A version-1 agent's facts as version 2 writes them: the old types mapped as the
    database's migration maps them, free-text `time_span` cleared, no `due_at`."""
    facts = agent.get("facts") if isinstance(agent, dict) else None
    if not isinstance(facts, list):
        return agent
    return {**agent, "facts": [upgraded_fact(fact) for fact in facts]}


def upgraded_fact(fact: Any) -> Any:
    if not isinstance(fact, dict):
        return fact
    span = fact.get("time_span")
    return {
        **fact,
        "type": fact_type_of(fact.get("type")),
        "time_span": span if span in TIME_SPANS else None,
        "due_at": None,
    }


def agent_records(agent: Any, path: str) -> AgentRecords:
    check_object(agent, AGENT_FIELDS, path)
    records: dict[str, list[Record]] = {}
    for kind in KINDS:
        found = agent.get(kind, [])
        if not isinstance(found, list):
            raise InvalidExport(f"{path}.{kind}", "must be a list")
        for number, record in enumerate(found):
            check_object(record, FIELDS[kind], f"{path}.{kind}[{number}]")
        records[kind] = found
    return AgentRecords(
        name=agent["name"],
        created_at=agent["created_at"],
        metadata=agent["metadata"],
        base_memory=agent["base_memory"]["content"],
        base_memory_stale=agent["base_memory"]["stale"],
        records=records,
    )


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
    elif not is_kind(value, kind):
        raise InvalidExport(path, f"must be {describe(kind)}, not {json.dumps(value)[:60]}")


def is_kind(value: Any, kind: str) -> bool:
    if kind in ("integers", "strings"):
        return isinstance(value, list) and all(is_kind(v, kind[:-1]) for v in value)
    simple: dict[str, Callable[[Any], bool]] = {
        "integer": lambda v: is_integer(v, -(2**63), 2**63 - 1),
        "positive": lambda v: is_integer(v, 1, 2**63 - 1),
        "score": lambda v: is_integer(v, 0, 10),
        "number": lambda v: (
            is_integer(v, -(2**63), 2**63 - 1) or (isinstance(v, float) and math.isfinite(v))
        ),
        "string": lambda v: isinstance(v, str),
        "agent": lambda v: is_agent_name(v),
        "device": lambda v: isinstance(v, str) and DEVICE_ID.fullmatch(v) is not None,
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
    }
    if kind in simple:
        return simple[kind](value)
    return value in kind.split("|")


def is_integer(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def describe(kind: str) -> str:
    named = {
        "agent": f"an agent name ({AGENT_NAME_RULE})",
        "device": f"a device id ({DEVICE_ID_RULE.removeprefix('X-Device-Id ')})",
        "integers": "a list of integers",
        "strings": "a list of strings",
        "positive": "an integer from 1",
        "score": "an integer from 0 to 10",
        "number": "a finite number",
    }
    if kind in named:
        return named[kind]
    if kind in ("integer", "string", "boolean", "object"):
        return f"a{'n' if kind[0] in 'aeio' else ''} {kind}"
    return "one of " + ", ".join(repr(choice) for choice in kind.split("|"))


def import_agents(
    store: TransferStore,
    embedder: Embedder,
    agents: Sequence[AgentRecords],
    *,
    merge: bool,
    actor: str,
) -> list[Imported]:
    """Embed what needs a vector and is new (current facts, memory-API messages), then write
    everything in one transaction."""
    vectors = embed_new(store, embedder, agents)
    return store.import_agents(agents, vectors, merge=merge, actor=actor)


def embed_new(
    store: TransferStore, embedder: Embedder, agents: Sequence[AgentRecords]
) -> dict[str, Vector]:
    wanted: dict[str, str] = {}
    for agent in agents:
        held = store.content_keys(agent.name)
        for kind, record in needing_vectors(agent):
            key = content_key(kind, record)
            if key not in held:
                wanted[key] = record["content"]
    keys = list(wanted)
    vectors: list[Vector] = []
    for start in range(0, len(keys), 256):
        vectors.extend(embedder.embed_batch([wanted[k] for k in keys[start : start + 256]]))
    return dict(zip(keys, vectors, strict=True))


def needing_vectors(agent: AgentRecords) -> Iterator[tuple[str, Record]]:
    for record in agent.of("facts"):
        if record["invalidated_at"] is None:
            yield "facts", record
    for record in agent.of("messages"):
        if record["device_id"] == API_SOURCE:
            yield "messages", record


def renamed(agents: list[AgentRecords], name: str | None) -> list[AgentRecords]:
    """The document's one agent under another name (`--as`)."""
    if name is None:
        return agents
    if len(agents) != 1:
        raise InvalidExport("$.agents", f"holds {len(agents)} agents; --as needs exactly one")
    if not is_agent_name(name):
        raise InvalidExport("--as", AGENT_NAME_RULE)
    agent = agents[0]
    return [
        AgentRecords(
            name,
            agent.created_at,
            agent.metadata,
            agent.base_memory,
            agent.base_memory_stale,
            agent.records,
        )
    ]
