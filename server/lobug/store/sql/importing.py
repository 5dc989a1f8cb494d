"""Writing an imported agent (`store/records.py`) in one transaction: every record whose
content key the agent does not hold yet gets a new id, and references (a fact's sources and
successor, a summary's message span, an audit row's targets) are remapped to the new ids.
Vectors come with the call, computed by the caller with the configured embedding model.

What the agent holds is read inside the import's transaction once its fact writers wait
(PostgreSQL's advisory lock; SQLite's write transaction holds the whole file), so two imports
of one document at the same time add it once. Full text follows by itself (SQLite's triggers,
PostgreSQL's generated columns); SQLite's in-memory indexes follow after the commit."""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lobug.store.errors import ImportConflict
from lobug.store.models import API_SOURCE, Message, Vector
from lobug.store.records import KINDS, AgentRecords, Imported, Record, content_key
from lobug.store.sql import audit, rows
from lobug.store.sql.dialect import insert_returning_id
from lobug.store.sql.export_rows import SqlExportRows, held_keys
from lobug.store.sql.facts import SqlFacts
from lobug.store.sql.people import name_key

# An audit row's target -> the kind of record its ids name.
AUDIT_TARGETS = {
    "fact": "facts",
    "messages": "messages",
    "block": "blocks",
    "base_memory": "base_memory_versions",
    "reminder": "reminders",
}
# An episode's span of time: when the first and the last of its messages were said (what
# SQLite's trigger writes too).
SPAN = (
    "SELECT MIN(created_at) AS started_at, MAX(created_at) AS ended_at FROM conversation_log "
    "WHERE agent_id = ? AND id BETWEEN ? AND ?"
)
# The fields of a record written as they are (`ImportWriter.inserted`), per kind.
FACT_COPIED = (
    *("content", "subject", "relation", "object", "time_span", "confidence", "user_score"),
    *("origin", "created_at", "valid_from", "invalidated_at", "forgotten_at", "purged_at"),
    *("due_at", "scope"),
)
TOPIC_COPIED = ("position", "name", "summary", "written_by", "built_at", "size", "last_active_at")
REMINDER_COPIED = (
    *("device_id", "what", "ring_at", "created_at"),
    *("said_at", "said_on", "cancelled_at"),
)
# A topic member's time, as the topic builder gives it (`memory/topics.py`).
MEMBER_TIMES = {
    "fact": ("facts", "created_at"),
    "episode": ("summaries", "COALESCE(ended_at, created_at)"),
}


class ImportWriter:
    """One import inside its transaction: the id maps (old id -> new id, per kind) and what
    was added."""

    def __init__(
        self,
        conn: Any,
        agent: tuple[str, int],
        held: dict[str, dict[str, int]],
        vectors: Mapping[str, Vector],
        vector_value: Callable[[Vector], Any],
    ) -> None:
        self.conn = conn
        self.agent, self.agent_id = agent
        self.held = held
        self.vectors = vectors
        self.vector_value = vector_value  # the engine's column value of an embedding
        self.ids: dict[str, dict[int, int]] = {kind: {} for kind in KINDS}
        self.added = {kind: 0 for kind in KINDS}
        self.new_fact_vectors: list[tuple[int, Vector]] = []
        self.new_message_vectors: list[tuple[Message, Vector]] = []

    def known(self, kind: str, record: Record) -> bool:
        """Whether the agent holds the record already (its id then maps to the held one)."""
        key = content_key(kind, record)
        held = self.held[kind].get(key)
        if held is not None:
            self.ids[kind][record["id"]] = held
        return held is not None

    def inserted(
        self, kind: str, record: Record, table: str, copied: Sequence[str], **values: Any
    ) -> int:
        """INSERT into `table` the agent's id, the record's `copied` fields as they are and
        the `values` given, and map the record to its new id."""
        columns = {"agent_id": self.agent_id, **{name: record[name] for name in copied}, **values}
        sql = insert_returning_id(table, list(columns))
        new_id = int(self.conn.execute(sql, tuple(columns.values())).fetchone()["id"])
        self.ids[kind][record["id"]] = new_id
        self.held[kind][content_key(kind, record)] = new_id
        self.added[kind] += 1
        return new_id

    def person(self, record: Record) -> None:
        """A person of the household, matched to one of the same name (any case) it holds,
        with the devices whose default person they are."""
        held = self.conn.execute(
            "SELECT id FROM people WHERE agent_id = ? AND name_key = ?",
            (self.agent_id, name_key(record["name"])),
        ).fetchone()
        if held is not None:
            self.ids["people"][record["id"]] = int(held["id"])
            return
        person_id = self.inserted(
            "people", record, "people", ("name", "created_at"), name_key=name_key(record["name"])
        )
        for device in record["devices"]:
            self.conn.execute(
                "INSERT INTO device_people(agent_id, device_id, person_id) VALUES (?, ?, ?) "
                "ON CONFLICT (agent_id, device_id) DO NOTHING",
                (self.agent_id, device, person_id),
            )

    def person_of(self, person_id: int | None) -> int | None:
        """The imported id of a person the document names (None: a guest, or no one)."""
        return None if person_id is None else self.ids["people"].get(person_id)

    def message(self, record: Record) -> None:
        if self.known("messages", record):
            return
        new_id = self.inserted(
            "messages",
            record,
            "conversation_log",
            ("device_id", "role", "content", "created_at", "speaker_source", "speaker_confidence"),
            summarized=int(record["summarized"]),
            metadata=rows.json_or_none(record.get("metadata")),
            person_id=self.person_of(record["person_id"]),
        )
        vector = self.vectors.get(content_key("messages", record))
        if record["device_id"] == API_SOURCE and vector is not None:
            self.conn.execute(
                "INSERT INTO message_vectors(message_id, agent_id, embedding) VALUES (?, ?, ?)",
                (new_id, self.agent_id, self.vector_value(vector)),
            )
            message = Message(
                new_id,
                self.agent,
                record["device_id"],
                record["role"],
                record["content"],
                record["created_at"],
                bool(record["summarized"]),
                record.get("metadata"),
                self.agent_id,
            )
            self.new_message_vectors.append((message, vector))

    def message_span(self, first: int, last: int) -> tuple[int, int]:
        """The new ids at the ends of an old span of message ids (ids keep their order)."""
        old = sorted(self.ids["messages"])
        start, end = bisect.bisect_left(old, first), bisect.bisect_right(old, last) - 1
        if start > end:
            return 0, 0
        return self.ids["messages"][old[start]], self.ids["messages"][old[end]]

    def summary(self, record: Record) -> None:
        if self.known("summaries", record):
            return
        first, last = self.message_span(record["source_from_id"], record["source_to_id"])
        span = self.conn.execute(SPAN, (self.agent_id, first, last)).fetchone()
        self.inserted(
            "summaries",
            record,
            "summaries",
            ("content", "created_at"),
            source_from_id=first,
            source_to_id=last,
            incorporated=int(record["incorporated"]),
            started_at=span["started_at"],
            ended_at=span["ended_at"],
        )

    def fact(self, record: Record) -> None:
        if self.known("facts", record):
            return
        sources = [
            self.ids["messages"][i]
            for i in record["source_message_ids"]
            if i in self.ids["messages"]
        ]
        new_id = self.inserted(
            "facts",
            record,
            "facts",
            FACT_COPIED,
            fact_type=record["type"],
            pinned=int(record["pinned"]),
            source_message_ids=json.dumps(sources),
            owner_person_id=self.person_of(record["owner_person_id"]),
            shareable=int(record["shareable"]),
        )
        vector = self.vectors.get(content_key("facts", record))
        if record["invalidated_at"] is None and vector is not None:
            self.conn.execute(
                "INSERT INTO fact_vectors(fact_id, agent_id, embedding) VALUES (?, ?, ?)",
                (new_id, self.agent_id, self.vector_value(vector)),
            )
            self.new_fact_vectors.append((new_id, vector))

    def successors(self, facts: list[Record]) -> None:
        """Link the new facts to their successors, once every fact has its new id."""
        for record in facts:
            successor = self.ids["facts"].get(record["superseded_by"] or 0)
            if successor is not None:
                self.conn.execute(
                    "UPDATE facts SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL",
                    (successor, self.ids["facts"][record["id"]]),
                )

    def base_memory_version(self, record: Record) -> None:
        if not self.known("base_memory_versions", record):
            copied = ("content", "written_by", "created_at")
            self.inserted("base_memory_versions", record, "base_memory_versions", copied)

    def base_memory(self, content: str, stale: bool, updated_at: float) -> None:
        """The current base memory, unless the agent's own is newer."""
        self.conn.execute(
            "INSERT INTO base_memory(agent_id, content, updated_at, stale) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(agent_id) DO UPDATE SET content = excluded.content, "
            "updated_at = excluded.updated_at, stale = excluded.stale "
            "WHERE excluded.updated_at > base_memory.updated_at",
            (self.agent_id, content, updated_at, int(stale)),
        )

    def block(self, record: Record) -> None:
        if not self.known("blocks", record):
            copied = ("label", "value", "description", "char_limit", "created_at", "updated_at")
            read_only = int(record["read_only"])
            self.inserted("blocks", record, "memory_blocks", copied, read_only=read_only)
        block_id = self.ids["blocks"][record["id"]]
        self.conn.execute(
            "UPDATE memory_blocks SET value = ?, updated_at = ? WHERE id = ? AND updated_at < ?",
            (record["value"], record["updated_at"], block_id, record["updated_at"]),
        )
        for change in record["history"]:
            self.block_change(block_id, record["label"], change)

    def block_change(self, block_id: int, label: str, change: Record) -> None:
        key = content_key("block_history", {"label": label, **change})
        if key in self.held["block_history"]:
            return
        self.conn.execute(
            "INSERT INTO memory_block_history(block_id, old_value, new_value, changed_by, "
            "changed_at) VALUES (?, ?, ?, ?, ?)",
            (
                block_id,
                change["old_value"],
                change["new_value"],
                change["changed_by"],
                change["changed_at"],
            ),
        )
        self.held["block_history"][key] = block_id

    def audit_entry(self, record: Record) -> None:
        if self.known("audit", record):
            return
        ids = self.ids.get(AUDIT_TARGETS.get(record["target"], ""), {})
        targets = [ids[i] for i in record["target_ids"] if i in ids]
        self.inserted(
            "audit",
            record,
            "audit_log",
            ("at", "actor", "action", "target", "before", "after"),
            target_ids=json.dumps(targets),
            detail=rows.json_or_none(record.get("detail")),
        )

    def topics(self, records: list[Record]) -> None:
        """The document's topics, when the agent has none of its own (topics are rebuilt
        from facts and episodes, so its own are as good); members it did not bring along
        are left out."""
        if self.held["topics"] or not records:
            return
        for record in records:
            if self.known("topics", record):
                continue
            topic_id = self.inserted(
                "topics",
                record,
                "topics",
                TOPIC_COPIED,
                open_questions=json.dumps(record["open_questions"]),
                next_actions=json.dumps(record["next_actions"]),
            )
            for kind, ids, old_ids in (
                ("fact", self.ids["facts"], record["fact_ids"]),
                ("episode", self.ids["summaries"], record["episode_ids"]),
            ):
                table, at = MEMBER_TIMES[kind]
                self.conn.executemany(
                    "INSERT INTO topic_members(topic_id, kind, member_id, at) "
                    f"SELECT ?, ?, id, {at} FROM {table} WHERE id = ? "
                    "ON CONFLICT (topic_id, kind, member_id) DO NOTHING",
                    [(topic_id, kind, ids[i]) for i in old_ids if i in ids],
                )

    def reminder(self, record: Record) -> None:
        if self.known("reminders", record):
            return
        owner = self.person_of(record["owner_person_id"])
        self.inserted("reminders", record, "reminders", REMINDER_COPIED, owner_person_id=owner)


class SqlImport(SqlExportRows, SqlFacts):
    def import_agents(
        self,
        agents: Sequence[AgentRecords],
        vectors: Mapping[str, Vector],
        *,
        merge: bool,
        actor: str,
    ) -> list[Imported]:
        """Add what each agent does not hold yet, all in one transaction, with one audit row
        per agent that changed. Raises ImportConflict (and writes nothing) when an agent
        holds other memory and `merge` is false."""
        self._require_vectors()
        with self._writing():
            with self._transaction() as conn:
                writers = [self._import_one(conn, agent, vectors, merge, actor) for agent in agents]
            for writer in writers:
                self._index_facts(writer.agent_id, added=writer.new_fact_vectors)
                self._index_message_vectors(writer.new_message_vectors)
        return [Imported(a.name, w.added) for a, w in zip(agents, writers, strict=True)]

    def _import_one(
        self,
        conn: Any,
        agent: AgentRecords,
        vectors: Mapping[str, Vector],
        merge: bool,
        actor: str,
    ) -> ImportWriter:
        agent_id, existed = self._import_target(conn, agent)
        self._lock_fact_writers(conn, agent_id)
        held = held_keys(lambda sql, params: conn.execute(sql, params).fetchall(), agent_id)
        writer = ImportWriter(conn, (agent.name, agent_id), held, vectors, self._vector_value)
        self._write_records(writer, agent)
        added = sum(writer.added.values())
        if added and existed and not merge:
            raise ImportConflict(
                f"the agent {agent.name!r} already holds other memory; merge to add this "
                "into it, or import it under another name"
            )
        if added:
            audit.record(
                conn,
                self._clock(),
                agent_id,
                actor,
                "import",
                "agent",
                [agent_id],
                detail=writer.added,
            )
        return writer

    @staticmethod
    def _import_target(conn: Any, agent: AgentRecords) -> tuple[int, bool]:
        """The agent's id, created with the document's time and metadata when new; and
        whether it held any memory before."""
        find = "SELECT id FROM agents WHERE name = ?"
        found = conn.execute(find, (agent.name,)).fetchone()
        if found is None:
            created = conn.execute(
                "INSERT INTO agents(name, created_at, metadata) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO NOTHING RETURNING id",
                (agent.name, agent.created_at, rows.json_or_none(agent.metadata)),
            ).fetchone()
            if created is not None:
                return int(created["id"]), False
            found = conn.execute(find, (agent.name,)).fetchone()  # made by another process
        agent_id = int(found["id"])
        holds = any(
            conn.execute(
                f"SELECT 1 FROM {table} WHERE agent_id = ? LIMIT 1", (agent_id,)
            ).fetchone()
            for table in ("conversation_log", "facts", "memory_blocks", "base_memory_versions")
        )
        return agent_id, holds

    @staticmethod
    def _write_records(writer: ImportWriter, agent: AgentRecords) -> None:
        for record in agent.of("people"):
            writer.person(record)
        for record in agent.of("messages"):
            writer.message(record)
        for record in agent.of("summaries"):
            writer.summary(record)
        facts = agent.of("facts")
        for record in facts:
            writer.fact(record)
        writer.successors(facts)
        versions = agent.of("base_memory_versions")
        for record in versions:
            writer.base_memory_version(record)
        if versions or agent.base_memory:
            newest = max((v["created_at"] for v in versions), default=agent.created_at)
            writer.base_memory(agent.base_memory, agent.base_memory_stale, newest)
        for record in agent.of("blocks"):
            writer.block(record)
        for record in agent.of("reminders"):
            writer.reminder(record)
        for record in agent.of("audit"):
            writer.audit_entry(record)
        writer.topics(agent.of("topics"))
