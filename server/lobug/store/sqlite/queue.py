"""SQLite's part of the work queue: exchanges read as they wait (one process serves the file,
so none is claimed), and backlog vectors stored in the `message_vectors` vec0 table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lobug.store.models import Message, QueuedExchange, Vector
from lobug.store.sql import rows
from lobug.store.sql.dialect import marks
from lobug.store.sql.queue import SqlWorkQueue
from lobug.store.sqlite.database import SQLiteDatabase, vector_blob


class SQLiteWorkQueue(SqlWorkQueue, SQLiteDatabase):
    def queued_exchanges(
        self, limit: int, queued_before: float, after_id: int = 0
    ) -> list[QueuedExchange]:
        """Exchanges still waiting for their memory work (not parked), oldest first, from
        the one whose reply comes after message `after_id`."""
        found = self._query(
            "SELECT q.attempts, a.name AS agent, "
            f"{rows.message_columns('u', 'user_')}, {rows.message_columns('l', 'reply_')} "
            "FROM learning_queue q "
            "JOIN conversation_log u ON u.id = q.user_message_id "
            "JOIN conversation_log l ON l.id = q.assistant_message_id "
            "JOIN agents a ON a.id = l.agent_id "
            "WHERE q.queued_at < ? AND q.assistant_message_id > ? AND q.parked_at IS NULL "
            "ORDER BY q.assistant_message_id LIMIT ?",
            (queued_before, after_id, limit),
        )
        return [
            QueuedExchange(
                rows.message(row["agent"], row, "user_"),
                rows.message(row["agent"], row, "reply_"),
                int(row["attempts"]),
            )
            for row in found
        ]

    def _store_message_vectors(
        self, conn: Any, embedded: Sequence[tuple[Message, Vector]]
    ) -> Sequence[tuple[Message, Vector]]:
        """The messages still in the log first, then their vectors, replacing any they had
        (a retried exchange is embedded again): vec0 takes no upsert, not even `INSERT OR
        REPLACE` (`UNIQUE constraint failed on message_vectors primary key`), so an old
        vector is deleted before the new one goes in."""
        ids = [m.id for m, _ in embedded]
        kept = {
            row["id"]
            for row in conn.execute(
                f"SELECT id FROM conversation_log WHERE id IN ({marks(ids)})", ids
            )
        }
        stored = [(m, v) for m, v in embedded if m.id in kept]
        conn.execute(f"DELETE FROM message_vectors WHERE message_id IN ({marks(ids)})", ids)
        conn.executemany(
            "INSERT INTO message_vectors(message_id, agent_id, embedding) VALUES (?,?,?)",
            [(m.id, m.agent_id, vector_blob(v)) for m, v in stored],
        )
        return stored
