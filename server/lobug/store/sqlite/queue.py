"""The work queue: answered exchanges whose memory work has not finished (`learning_queue`,
written with the reply in one transaction, so a crash never loses it) and messages still to
embed (`embedding_backlog`).

A message posted alone (memory API, `MemoryEngine.add_messages`) is queued as a *lone* row, its
id in both columns; an assistant message that follows it from the same source turns that row
into an exchange, in the insert's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lobug.store.models import Message, QueuedExchange, QueuedMessage, Vector
from lobug.store.sql import rows
from lobug.store.sql.dialect import marks
from lobug.store.sqlite.database import vector_blob
from lobug.store.sqlite.log import SQLiteLog


class SQLiteWorkQueue(SQLiteLog):
    def append_reply_for_memory_work(
        self,
        agent: str,
        device_id: str,
        content: str,
        user: Message,
        metadata: dict[str, Any] | None = None,
    ) -> Message:
        """Log the assistant's reply to `user` and queue the exchange for its memory work,
        in one transaction."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            reply = self._insert_message(
                conn, agent, agent_id, device_id, "assistant", content, metadata
            )
            conn.execute(
                "INSERT INTO learning_queue(assistant_message_id, user_message_id, queued_at) "
                "VALUES (?, ?, ?)",
                (reply.id, user.id, reply.created_at),
            )
        return reply

    def append_message_to_learn(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        vector: Vector | None,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> QueuedMessage:
        """Log a message (with its vector; None: into the embedding backlog) and queue it for
        learning in one transaction. An assistant message right after a user message of the
        same agent and source that still waits alone makes the two one exchange; any other
        message waits alone."""
        agent_id = self.agent_id(agent)
        with self._lock:  # a forget in between must not leave the vector in the index
            with self._transaction() as conn:
                waiting = self._lone_user_message(conn, agent, agent_id, device_id)
                message = self._insert_message(
                    conn, agent, agent_id, device_id, role, content, metadata
                )
                self._insert_vector(conn, message, vector)
                user = waiting if role == "assistant" else None
                if user is not None:
                    conn.execute(
                        "DELETE FROM learning_queue WHERE assistant_message_id = ?", (user.id,)
                    )
                conn.execute(
                    "INSERT INTO learning_queue(assistant_message_id, user_message_id, queued_at) "
                    "VALUES (?, ?, ?)",
                    (message.id, (user or message).id, message.created_at),
                )
            if vector is not None:
                self._index_message_vectors([(message, vector)])
        return QueuedMessage(message, user)

    @staticmethod
    def _lone_user_message(conn: Any, agent: str, agent_id: int, device_id: str) -> Message | None:
        """The agent's last message from `device_id`, if it is a user message waiting alone."""
        row = conn.execute(
            f"SELECT {rows.message_columns('l')} FROM conversation_log l "
            "JOIN learning_queue q ON q.assistant_message_id = l.id "
            "AND q.user_message_id = l.id "
            "WHERE l.id = (SELECT MAX(id) FROM conversation_log "
            "WHERE agent_id = ? AND device_id = ?) AND l.role = 'user'",
            (agent_id, device_id),
        ).fetchone()
        return rows.message(agent, row) if row else None

    def queued_exchanges(
        self, limit: int, queued_before: float, after_id: int = 0
    ) -> list[QueuedExchange]:
        """Exchanges still waiting for their memory work, oldest first, from the one whose
        reply comes after message `after_id`."""
        found = self._query(
            "SELECT q.attempts, a.name AS agent, "
            f"{rows.message_columns('u', 'user_')}, {rows.message_columns('l', 'reply_')} "
            "FROM learning_queue q "
            "JOIN conversation_log u ON u.id = q.user_message_id "
            "JOIN conversation_log l ON l.id = q.assistant_message_id "
            "JOIN agents a ON a.id = l.agent_id "
            "WHERE q.queued_at < ? AND q.assistant_message_id > ? "
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

    def count_queued_exchanges(self) -> int:
        return self._count("SELECT COUNT(*) AS n FROM learning_queue")

    def dequeue_exchange(self, assistant_message_id: int) -> None:
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM learning_queue WHERE assistant_message_id = ?",
                (assistant_message_id,),
            )

    def count_failed_attempt(self, assistant_message_id: int) -> int:
        """Record one more failed attempt at the exchange's memory work; return the total."""
        with self._transaction() as conn:
            conn.execute(
                "UPDATE learning_queue SET attempts = attempts + 1 WHERE assistant_message_id = ?",
                (assistant_message_id,),
            )
            row = conn.execute(
                "SELECT attempts FROM learning_queue WHERE assistant_message_id = ?",
                (assistant_message_id,),
            ).fetchone()
        return int(row["attempts"]) if row else 0

    def messages_to_embed(self, limit: int) -> list[Message]:
        """Messages of the embedding backlog (stored while the embedder failed), oldest first."""
        found = self._query(
            f"SELECT {rows.message_columns('l')}, a.name AS agent FROM embedding_backlog b "
            "JOIN conversation_log l ON l.id = b.message_id JOIN agents a ON a.id = l.agent_id "
            "ORDER BY b.message_id LIMIT ?",
            (limit,),
        )
        return [rows.message(row["agent"], row) for row in found]

    def add_message_vectors(self, embedded: Sequence[tuple[Message, Vector]]) -> None:
        """Store the vectors of backlog messages and take them off the backlog; a message
        forgotten since it was read gets none (no vector of forgotten words is kept)."""
        with self._lock:  # a forget in between must not leave the vector in the index
            with self._transaction() as conn:
                ids = [m.id for m, _ in embedded]
                kept = {
                    row["id"]
                    for row in conn.execute(
                        f"SELECT id FROM conversation_log WHERE id IN ({marks(ids)})", ids
                    )
                }
                embedded = [(m, v) for m, v in embedded if m.id in kept]
                conn.executemany(
                    "INSERT OR REPLACE INTO message_vectors(message_id, agent_id, embedding) "
                    "VALUES (?,?,?)",
                    [(m.id, m.agent_id, vector_blob(v)) for m, v in embedded],
                )
                conn.executemany(
                    "DELETE FROM embedding_backlog WHERE message_id = ?",
                    [(m.id,) for m, _ in embedded],
                )
            self._index_message_vectors(embedded)
