"""An agent's rows as export records (`store/records.py`), read a page at a time by id, so an
export of a large memory never holds it all; and the content keys of what an agent holds."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lobug.store.records import KINDS, Record, content_key
from lobug.store.sql import rows
from lobug.store.sql.audit import SqlAudit

PAGE_ROWS = 500

# kind -> (columns, table): the columns named as the record's fields.
SOURCES: dict[str, tuple[str, str]] = {
    "people": ("id, name, created_at", "people"),
    "messages": (
        "id, device_id, role, content, created_at, summarized, metadata, person_id, "
        "speaker_source, speaker_confidence",
        "conversation_log",
    ),
    "summaries": (
        "id, content, source_from_id, source_to_id, created_at, incorporated",
        "summaries",
    ),
    "facts": (
        "id, fact_type AS type, content, subject, relation, object, time_span, confidence, "
        "user_score, pinned, origin, source_message_ids, created_at, valid_from, "
        "invalidated_at, superseded_by, forgotten_at, purged_at, due_at, owner_person_id, scope, "
        "shareable",
        "facts",
    ),
    "base_memory_versions": ("id, content, written_by, created_at", "base_memory_versions"),
    "blocks": (
        "id, label, value, description, char_limit, read_only, created_at, updated_at",
        "memory_blocks",
    ),
    "audit": (
        "id, at, actor, action, target, target_ids, before, after, detail",
        "audit_log",
    ),
    "topics": (
        "id, position, name, summary, open_questions, next_actions, written_by, built_at, "
        "size, last_active_at",
        "topics",
    ),
    "reminders": (
        "id, device_id, what, ring_at, created_at, said_at, said_on, cancelled_at, owner_person_id",
        "reminders",
    ),
}
# Runs a `?` statement and gives its rows: the store's `_query`, or a transaction's connection.
Query = Callable[[str, Sequence[Any]], list[Any]]


def record_of(row: Any) -> Record:
    """A row as a record: flags as booleans, JSON columns parsed, what older versions let in
    mended as `store/sql/rows.py` reads it."""
    record = dict(row)
    for name in rows.FLAGS:
        if name in record:
            record[name] = bool(record[name])
    for name in (*rows.JSON_LISTS, *rows.JSON_OBJECTS):
        if record.get(name) is not None:
            record[name] = rows.json_column(record[name])
    return rows.mended_times(record)


def completed(query: Query, kind: str, record: Record) -> Record:
    """A record with what other tables hold of it: a block's history, a topic's members."""
    if kind == "blocks":
        record["history"] = [
            rows.mended_times(dict(row))
            for row in query(
                "SELECT old_value, new_value, changed_by, changed_at "
                "FROM memory_block_history WHERE block_id = ? ORDER BY id",
                (record["id"],),
            )
        ]
    elif kind == "people":
        record["devices"] = [
            row["device_id"]
            for row in query(
                "SELECT device_id FROM device_people WHERE person_id = ? ORDER BY device_id",
                (record["id"],),
            )
        ]
    elif kind == "topics":
        members = query(
            "SELECT kind, member_id FROM topic_members WHERE topic_id = ? ORDER BY kind, member_id",
            (record["id"],),
        )
        for name, member_kind in (("fact_ids", "fact"), ("episode_ids", "episode")):
            record[name] = [int(m["member_id"]) for m in members if m["kind"] == member_kind]
    return record


def records(query: Query, agent_id: int, kind: str) -> Iterator[Record]:
    """The agent's records of one kind, oldest first, read `PAGE_ROWS` at a time."""
    columns, table = SOURCES[kind]
    last = 0
    while True:
        found = query(
            f"SELECT {columns} FROM {table} WHERE agent_id = ? AND id > ? ORDER BY id LIMIT ?",
            (agent_id, last, PAGE_ROWS),
        )
        for row in found:
            yield completed(query, kind, record_of(row))
        if len(found) < PAGE_ROWS:
            return
        last = found[-1]["id"]


def held_keys(query: Query, agent_id: int) -> dict[str, dict[str, int]]:
    """kind -> content key -> id of every record the agent holds (block history keyed
    under `block_history`, mapped to its block's id)."""
    keys: dict[str, dict[str, int]] = {kind: {} for kind in (*KINDS, "block_history")}
    for kind in KINDS:
        for record in records(query, agent_id, kind):
            keys[kind][content_key(kind, record)] = record["id"]
            for change in record.get("history", []) if kind == "blocks" else []:
                key = content_key("block_history", {"label": record["label"], **change})
                keys["block_history"][key] = record["id"]
    return keys


class SqlExportRows(SqlAudit):
    def export_records(self, agent_id: int, kind: str) -> Iterator[Record]:
        """The agent's records of one kind, oldest first, read `PAGE_ROWS` at a time (no lock
        or connection is held between pages, so the server goes on while an export runs)."""
        return records(self._query, agent_id, kind)

    def base_memory_row(self, agent_id: int) -> tuple[str, bool]:
        """The agent's current base memory and whether it is stale."""
        found = self._query(
            "SELECT content, stale FROM base_memory WHERE agent_id = ?", (agent_id,)
        )
        return (found[0]["content"], bool(found[0]["stale"])) if found else ("", False)

    def content_keys(self, agent: str) -> set[str]:
        """The content keys of everything the agent holds (none when it does not exist)."""
        found = self._query("SELECT id FROM agents WHERE name = ?", (agent,))
        if not found:
            return set()
        return {key for keys in held_keys(self._query, found[0]["id"]).values() for key in keys}
