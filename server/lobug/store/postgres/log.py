"""The conversation log: agents (memory namespaces) and every message said to or by one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lobug.store.models import Agent, Message, Vector
from lobug.store.postgres.database import PostgresDatabase
from lobug.store.sql import rows


def as_vector(vector: Vector) -> Any:
    """A numpy vector as pgvector's type (adapted by the pool's `register_vector`)."""
    from pgvector import Vector as PgVector

    return PgVector(np.asarray(vector, dtype=np.float32))


class PostgresLog(PostgresDatabase):
    def find_agent(self, name: str) -> Agent | None:
        """The namespace called `name`, or None (never creates one)."""
        found = self._query(f"SELECT {rows.AGENT_COLUMNS} FROM agents WHERE name = %s", (name,))
        return rows.agent(found[0]) if found else None

    def ensure_agent(self, name: str, metadata: dict[str, Any] | None = None) -> Agent:
        """Create the namespace with `metadata`, or return the existing one unchanged."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO agents(name, created_at, metadata) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO NOTHING",
                (name, self._clock(), rows.json_or_none(metadata)),
            )
            row = conn.execute(
                f"SELECT {rows.AGENT_COLUMNS} FROM agents WHERE name = %s", (name,)
            ).fetchone()
        return rows.agent(row)

    def append_message(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> Message:
        """Log a message (found by keyword search only)."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            return self._insert_message(conn, agent, agent_id, device_id, role, content, metadata)

    def append_embedded_message(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        vector: Vector,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> Message:
        """Log a message with its vector, so that `search_messages` finds it too."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            message = self._insert_message(
                conn, agent, agent_id, device_id, role, content, metadata
            )
            self._insert_vector(conn, message, vector)
        return message

    def append_message_to_embed(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> Message:
        """Log a message meant to have a vector that could not be made now: it waits in the
        embedding backlog (`messages_to_embed`)."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            message = self._insert_message(
                conn, agent, agent_id, device_id, role, content, metadata
            )
            self._insert_vector(conn, message, None)
        return message

    @staticmethod
    def _insert_vector(conn: Any, message: Message, vector: Vector | None) -> None:
        """The message's vector, or (None: it could not be made now) its backlog row."""
        if vector is None:
            conn.execute("INSERT INTO embedding_backlog(message_id) VALUES (%s)", (message.id,))
            return
        conn.execute(
            "INSERT INTO message_vectors(message_id, agent_id, embedding) VALUES (%s,%s,%s)",
            (message.id, message.agent_id, as_vector(vector)),
        )

    def _insert_message(
        self,
        conn: Any,
        agent: str,
        agent_id: int,
        device_id: str,
        role: str,
        content: str,
        metadata: dict[str, Any] | None,
    ) -> Message:
        """The INSERT, inside the caller's transaction (`agent_id` looked up before it)."""
        now = self._clock()
        row = conn.execute(
            "INSERT INTO conversation_log(agent_id, device_id, role, content, created_at, "
            "metadata) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
            (agent_id, device_id, role, content, now, rows.json_or_none(metadata)),
        ).fetchone()
        return Message(row["id"], agent, device_id, role, content, now, False, metadata, agent_id)

    def messages_by_id(self, agent: str, ids: Sequence[int]) -> list[Message]:
        """The agent's messages among `ids`, oldest first (others' ids are left out)."""
        if not ids:
            return []
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log "
            "WHERE agent_id = %s AND id = ANY(%s) ORDER BY id",
            (self.agent_id(agent), list(ids)),
        )
        return [rows.message(agent, row) for row in found]

    def agent_messages(self, agent: str, limit: int) -> list[Message]:
        """The agent's last `limit` messages from every device, newest first."""
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log "
            "WHERE agent_id = %s ORDER BY id DESC LIMIT %s",
            (self.agent_id(agent), limit),
        )
        return [rows.message(agent, row) for row in found]

    def recent_messages(self, agent: str, device_id: str, limit: int) -> list[Message]:
        """The device's last `limit` messages, oldest first."""
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log "
            "WHERE agent_id = %s AND device_id = %s ORDER BY id DESC LIMIT %s",
            (self.agent_id(agent), device_id, limit),
        )
        return [rows.message(agent, row) for row in reversed(found)]

    def count_unsummarized(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM conversation_log WHERE agent_id = %s AND summarized = 0",
            (self.agent_id(agent),),
        )

    def unsummarized_messages(self, agent: str) -> list[Message]:
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log "
            "WHERE agent_id = %s AND summarized = 0 ORDER BY id",
            (self.agent_id(agent),),
        )
        return [rows.message(agent, row) for row in found]

    def count_messages(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM conversation_log WHERE agent_id = %s",
            (self.agent_id(agent),),
        )
