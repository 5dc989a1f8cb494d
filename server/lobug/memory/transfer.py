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
from collections.abc import Iterator, Sequence
from typing import IO, Any

from lobug.backends.base import Embedder
from lobug.memory.export_fields import (
    AGENT_FIELDS,
    DOCUMENT_FIELDS,
    FIELDS,
    InvalidExport,
    check_object,
    check_together,
)
from lobug.memory.limits import MAX_JSON_DEPTH, json_problem
from lobug.names import AGENT_NAME_RULE, is_agent_name
from lobug.store.models import API_SOURCE, TIME_SPANS, Agent, Vector, fact_type_of
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


def load_document(source: IO[bytes] | bytes) -> Any:
    """An export document parsed from a file or bytes, refused (InvalidExport at `$`) when it
    is not JSON, or as `memory/limits.py` refuses any JSON: nested too deep, or holding a
    lone surrogate. `read_document` checks what it holds."""
    try:
        document = json.load(source) if not isinstance(source, bytes) else json.loads(source)
    except RecursionError:
        raise InvalidExport("$", f"is nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # UnicodeDecodeError too
        raise InvalidExport("$", f"is not JSON: {exc}") from None
    problem = json_problem(document)
    if problem is not None:
        raise InvalidExport("$", problem)
    return document


def read_document(document: Any) -> list[AgentRecords]:
    """The agents of a parsed export document, each checked whole (`memory/export_fields.py`)
    before anything is written. Raises InvalidExport."""
    check_object(document, DOCUMENT_FIELDS, "$")
    if document["version"] not in range(1, VERSION + 1):
        raise InvalidExport("$.version", f"this Lo-Bug reads versions 1 to {VERSION} only")
    agents = document.get("agents")
    if not isinstance(agents, list):
        raise InvalidExport("$.agents", "must be a list")
    if document["version"] == 1:
        agents = [upgraded_from_version_1(agent) for agent in agents]
    if document["version"] < 5:
        agents = [without_household(agent) for agent in agents]
    agents = [with_reminder_owners(agent) for agent in agents]
    read = [agent_records(agent, f"$.agents[{n}]") for n, agent in enumerate(agents)]
    seen: dict[str, int] = {}
    for number, agent in enumerate(read):
        first = seen.setdefault(agent.name, number)
        if first != number:
            raise InvalidExport(f"$.agents[{number}].name", f"repeats $.agents[{first}].name")
    return read


def upgraded_from_version_1(agent: Any) -> Any:
    """A version-1 agent's facts as version 2 writes them: the old types mapped as the
    database's migration maps them, free-text `time_span` cleared, no `due_at`."""
    facts = agent.get("facts") if isinstance(agent, dict) else None
    if not isinstance(facts, list):
        return agent
    return {**agent, "facts": [upgraded_fact(fact) for fact in facts]}


def without_household(agent: Any) -> Any:
    """An agent of a document older than version 5 as version 5 writes one without people:
    its messages a guest's (the assistant's its own), its facts the household's, not
    shareable (as the database's migration makes its rows)."""
    if not isinstance(agent, dict):
        return agent
    upgraded = dict(agent)
    for kind, added in (("messages", said_by_no_one), ("facts", the_households)):
        found = agent.get(kind)
        if isinstance(found, list):
            upgraded[kind] = [added(r) if isinstance(r, dict) else r for r in found]
    return upgraded


def with_reminder_owners(agent: Any) -> Any:
    """An agent whose reminders name no owner (a document written before reminders had
    one, whatever its version) with each the household's, as the database's migration makes
    them."""
    found = agent.get("reminders") if isinstance(agent, dict) else None
    if not isinstance(found, list):
        return agent
    owned = [{"owner_person_id": None, **r} if isinstance(r, dict) else r for r in found]
    return {**agent, "reminders": owned}


def said_by_no_one(message: dict[str, Any]) -> dict[str, Any]:
    role = message.get("role")
    source = "guest" if role == "user" else role if isinstance(role, str) else None
    return {"person_id": None, "speaker_source": source, "speaker_confidence": None, **message}


def the_households(fact: dict[str, Any]) -> dict[str, Any]:
    return {"owner_person_id": None, "scope": "household", "shareable": False, **fact}


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
    check_together(records, path)
    return AgentRecords(
        name=agent["name"],
        created_at=agent["created_at"],
        metadata=agent["metadata"],
        base_memory=agent["base_memory"]["content"],
        base_memory_stale=agent["base_memory"]["stale"],
        records=records,
    )


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
