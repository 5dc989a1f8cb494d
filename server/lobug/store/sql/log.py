"""The conversation log: agents (memory namespaces) and every message said to or by one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lobug.store.household import ASSISTANT, GUEST, Speaker, answering
from lobug.store.models import Agent, Message, Vector
from lobug.store.sql import rows
from lobug.store.sql.database import SqlDatabase
from lobug.store.sql.dialect import marks


class SqlLog(SqlDatabase):
    # ------------------------------------------------------------------ agents and messages

    def find_agent(self, name: str) -> Agent | None:
        """The namespace called `name`, or None (never creates one)."""
        found = self._query(f"SELECT {rows.AGENT_COLUMNS} FROM agents WHERE name = ?", (name,))
        return rows.agent(found[0]) if found else None

    def ensure_agent(self, name: str, metadata: dict[str, Any] | None = None) -> Agent:
        """Create the namespace with `metadata`, or return the existing one unchanged."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO agents(name, created_at, metadata) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO NOTHING",
                (name, self._clock(), rows.json_or_none(metadata)),
            )
            row = conn.execute(
                f"SELECT {rows.AGENT_COLUMNS} FROM agents WHERE name = ?", (name,)
            ).fetchone()
        agent = rows.agent(row)
        self._agent_known(name, agent.id)
        return agent

    def append_message(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        *,
        metadata: dict[str, Any] | None = None,
        speaker: Speaker | None = None,
    ) -> Message:
        """Log a message (found by keyword search only), said by `speaker` (None: a guest's,
        or the assistant's)."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            return self._insert_message(
                conn, agent, agent_id, device_id, role, content, metadata, speaker
            )

    def append_embedded_message(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        vector: Vector | None,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> Message:
        """Log a message with its vector, so that `search_messages` finds it too; None: a
        vector that could not be made now, and the message waits in the embedding backlog
        (`messages_to_embed`)."""
        agent_id = self.agent_id(agent)
        with self._writing():  # a forget in between must not leave the vector in the index
            with self._transaction() as conn:
                message = self._insert_message(
                    conn, agent, agent_id, device_id, role, content, metadata
                )
                self._insert_vector(conn, message, vector)
            if vector is not None:
                self._index_message_vectors([(message, vector)])
        return message

    def _insert_message(
        self,
        conn: Any,
        agent: str,
        agent_id: int,
        device_id: str,
        role: str,
        content: str,
        metadata: dict[str, Any] | None,
        speaker: Speaker | None = None,
    ) -> Message:
        """The INSERT, inside the caller's transaction (`agent_id` looked up before it)."""
        now = self._clock()
        person, source, confidence = provenance(role, speaker)
        row = conn.execute(
            "INSERT INTO conversation_log(agent_id, device_id, role, content, created_at, "
            "metadata, person_id, speaker_source, speaker_confidence) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                agent_id,
                device_id,
                role,
                content,
                now,
                rows.json_or_none(metadata),
                person,
                source,
                confidence,
            ),
        ).fetchone()
        return Message(
            row["id"],
            agent,
            device_id,
            role,
            content,
            now,
            False,
            metadata,
            agent_id,
            person,
            source,
            confidence,
        )

    def _insert_vector(self, conn: Any, message: Message, vector: Vector | None) -> None:
        """The message's vector, or (None: it could not be made now) its backlog row."""
        if vector is None:
            conn.execute("INSERT INTO embedding_backlog(message_id) VALUES (?)", (message.id,))
        else:
            conn.execute(
                "INSERT INTO message_vectors(message_id, agent_id, embedding) VALUES (?,?,?)",
                (message.id, message.agent_id, self._vector_value(vector)),
            )

    def messages_by_id(self, agent: str, ids: Sequence[int]) -> list[Message]:
        """The agent's messages among `ids`, oldest first (others' ids are left out)."""
        if not ids:
            return []
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log "
            f"WHERE agent_id = ? AND id IN ({marks(ids)}) ORDER BY id",
            (self.agent_id(agent), *ids),
        )
        return [rows.message(agent, row) for row in found]

    def agent_messages(self, agent: str, limit: int) -> list[Message]:
        """The agent's last `limit` messages from every device, newest first."""
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log "
            "WHERE agent_id = ? ORDER BY id DESC LIMIT ?",
            (self.agent_id(agent), limit),
        )
        return [rows.message(agent, row) for row in found]

    def recent_messages(self, agent: str, device_id: str, limit: int) -> list[Message]:
        """The device's last `limit` messages, oldest first."""
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log "
            "WHERE agent_id = ? AND device_id = ? ORDER BY id DESC LIMIT ?",
            (self.agent_id(agent), device_id, limit),
        )
        return [rows.message(agent, row) for row in reversed(found)]

    def count_unsummarized(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM conversation_log WHERE agent_id = ? AND summarized = 0",
            (self.agent_id(agent),),
        )

    def unsummarized_messages(self, agent: str) -> list[Message]:
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log "
            "WHERE agent_id = ? AND summarized = 0 ORDER BY id",
            (self.agent_id(agent),),
        )
        return [rows.message(agent, row) for row in found]

    def count_messages(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM conversation_log WHERE agent_id = ?",
            (self.agent_id(agent),),
        )


def provenance(role: str, speaker: Speaker | None) -> tuple[int | None, str, float | None]:
    """(person, source, confidence) stored with a message: the speaker's; for the
    assistant's words `assistant` (with the person it answered, when `speaker` names one);
    a user message said by no one known is a guest's, with no confidence."""
    if role != "user":
        return (
            (speaker.person_id if speaker else None),
            (ASSISTANT if role == "assistant" else role),
            None,
        )
    if speaker is None:
        return None, GUEST, None
    return speaker.person_id, speaker.source, speaker.confidence


def answered(user: Message) -> Speaker:
    """The assistant's reply to `user`: its row names the person it answered."""
    return answering(user.person_id)
