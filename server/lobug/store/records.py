"""The records of an export document (`docs/export.schema.json`): one plain JSON object per
stored row, times as Unix seconds, ids as the exporting database's integers.

Engines read their rows as these records and write an import from them; `content_key` names a
record by what it says, not by its id, so an import can tell what a database already holds
(importing the same file twice adds nothing the second time).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Record = dict[str, Any]

FORMAT = "lobug-export"
# Version 2: facts of the six types of seed 001, `time_span` a coarse enum, `due_at`.
# Version 3: the agent's topics. Version 4: its reminders. Versions 1 to 3 are still read
# (`memory/transfer.py` upgrades a version-1 document's facts; a version-2 one has no topics,
# a version-3 one no reminders). Version 5: the household (`people`, who said each message,
# whose each fact is); an older document's messages are a guest's and its facts the
# household's, not shareable (`memory/transfer.py`).
VERSION = 5

# The kinds of record of one agent, in the order a document holds them: a later kind may
# refer to the ids of an earlier one (messages and facts to people, facts and summaries to
# messages, audit entries to facts, blocks and reminders, topics to facts and summaries).
KINDS = (
    "people",
    "messages",
    "summaries",
    "facts",
    "base_memory_versions",
    "blocks",
    "reminders",
    "audit",
    "topics",
)

# The fields that say what a record is; ids and references to ids are left out, because they
# differ from one database to another.
KEY_FIELDS: Mapping[str, Sequence[str]] = {
    "messages": ("device_id", "role", "content", "created_at"),
    "summaries": ("content", "created_at"),
    "facts": ("type", "content", "created_at", "valid_from"),
    "base_memory_versions": ("content", "written_by", "created_at"),
    "blocks": ("label",),
    "block_history": ("label", "new_value", "changed_at"),
    "audit": ("at", "actor", "action", "target", "before", "after"),
    "topics": ("name", "built_at"),
    "reminders": ("device_id", "what", "ring_at", "created_at"),
    "people": ("name",),
}


def content_key(kind: str, record: Record) -> str:
    """A digest of the record's identifying fields (`KEY_FIELDS`)."""
    named = [record.get(name) for name in KEY_FIELDS[kind]]
    text = json.dumps([kind, named], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class AgentRecords:
    """Everything of one agent in an export document, as records."""

    name: str
    created_at: float
    metadata: dict[str, Any] | None
    base_memory: str
    base_memory_stale: bool
    records: dict[str, list[Record]] = field(default_factory=dict)

    def of(self, kind: str) -> list[Record]:
        return self.records.get(kind, [])


@dataclass(frozen=True)
class Imported:
    """How many records of each kind an import added (0 everywhere: it was there already)."""

    agent: str
    added: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.added.values())
