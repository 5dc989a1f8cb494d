"""The work queue, shared by every process on the database: answered exchanges whose memory
work has not finished (`learning_queue`, written with the reply in one transaction) and
messages still to embed (`embedding_backlog`).

A message posted alone (memory API) is queued as a *lone* row, its id in both columns; an
assistant message that follows it from the same source turns that row into an exchange, in
the insert's transaction.

An exchange is claimed before its memory work runs: the process that stored the reply holds it
from the start, others claim rows with `SELECT ... FOR UPDATE SKIP LOCKED`, so two processes
never run the same exchange. A claim lasts `CLAIM_LEASE_S`; a failed attempt gives it back at
once, and a process that died leaves it to be claimed again when the lease runs out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lobug.store.models import Message, QueuedExchange, QueuedMessage, Vector
from lobug.store.postgres.log import PostgresLog, as_vector
from lobug.store.sql import rows

CLAIM_LEASE_S = 600.0
QUEUE_LOCK = 0x10B0D  # pg_advisory_xact_lock(QUEUE_LOCK, agent_id): pairing lone messages

_CLAIM_SQL = """
WITH claimed AS (
    SELECT assistant_message_id FROM learning_queue
    WHERE queued_at < %(before)s AND assistant_message_id > %(after)s
      AND (claimed_until IS NULL OR claimed_until < %(now)s)
    ORDER BY assistant_message_id LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE learning_queue q SET claimed_until = %(until)s FROM claimed c
WHERE q.assistant_message_id = c.assistant_message_id
RETURNING q.attempts, q.user_message_id, q.assistant_message_id,
    (SELECT name FROM agents a JOIN conversation_log l ON a.id = l.agent_id
     WHERE l.id = q.assistant_message_id) AS agent
"""


class PostgresWorkQueue(PostgresLog):
    def append_reply_for_memory_work(
        self,
        agent: str,
        device_id: str,
        content: str,
        user: Message,
        metadata: dict[str, Any] | None = None,
    ) -> Message:
        """Log the assistant's reply to `user` and queue the exchange for its memory work,
        claimed by this process, in one transaction."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            reply = self._insert_message(
                conn, agent, agent_id, device_id, "assistant", content, metadata
            )
            conn.execute(
                "INSERT INTO learning_queue(assistant_message_id, user_message_id, queued_at, "
                "claimed_until) VALUES (%s, %s, %s, %s)",
                (reply.id, user.id, reply.created_at, reply.created_at + CLAIM_LEASE_S),
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
        learning in one transaction, unclaimed (the maintenance pass of any process learns
        from it). An assistant message right after a user message of the same agent and
        source that still waits alone makes the two one exchange; any other message waits
        alone."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (QUEUE_LOCK, agent_id))
            waiting = self._lone_user_message(conn, agent, agent_id, device_id)
            message = self._insert_message(
                conn, agent, agent_id, device_id, role, content, metadata
            )
            self._insert_vector(conn, message, vector)
            user = waiting if role == "assistant" else None
            if user is not None:
                conn.execute(
                    "DELETE FROM learning_queue WHERE assistant_message_id = %s", (user.id,)
                )
            conn.execute(
                "INSERT INTO learning_queue(assistant_message_id, user_message_id, queued_at) "
                "VALUES (%s, %s, %s)",
                (message.id, (user or message).id, message.created_at),
            )
        return QueuedMessage(message, user)

    @staticmethod
    def _lone_user_message(conn: Any, agent: str, agent_id: int, device_id: str) -> Message | None:
        """The agent's last message from `device_id`, if it is a user message waiting alone
        (and not claimed by a process learning from it)."""
        row = conn.execute(
            f"SELECT {rows.message_columns('l')} FROM conversation_log l "
            "JOIN learning_queue q ON q.assistant_message_id = l.id "
            "AND q.user_message_id = l.id AND q.claimed_until IS NULL "
            "WHERE l.id = (SELECT MAX(id) FROM conversation_log "
            "WHERE agent_id = %s AND device_id = %s) AND l.role = 'user' FOR UPDATE OF q",
            (agent_id, device_id),
        ).fetchone()
        return rows.message(agent, row) if row else None

    def queued_exchanges(
        self, limit: int, queued_before: float, after_id: int = 0
    ) -> list[QueuedExchange]:
        """Exchanges no process holds, oldest first, from the one whose reply comes after
        message `after_id`, each claimed for this process (see the module's docstring)."""
        now = self._clock()
        params = {
            "before": queued_before,
            "after": after_id,
            "now": now,
            "limit": limit,
            "until": now + CLAIM_LEASE_S,
        }
        with self._transaction() as conn:
            claimed = conn.execute(_CLAIM_SQL, params).fetchall()
            ids = [r["user_message_id"] for r in claimed] + [
                r["assistant_message_id"] for r in claimed
            ]
            found = conn.execute(
                f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log WHERE id = ANY(%s)", (ids,)
            ).fetchall()
        by_id = {row["id"]: row for row in found}
        return [
            QueuedExchange(
                rows.message(r["agent"], by_id[r["user_message_id"]]),
                rows.message(r["agent"], by_id[r["assistant_message_id"]]),
                int(r["attempts"]),
            )
            for r in sorted(claimed, key=lambda r: r["assistant_message_id"])
        ]

    def count_queued_exchanges(self) -> int:
        return self._count("SELECT COUNT(*) AS n FROM learning_queue")

    def dequeue_exchange(self, assistant_message_id: int) -> None:
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM learning_queue WHERE assistant_message_id = %s",
                (assistant_message_id,),
            )

    def count_failed_attempt(self, assistant_message_id: int) -> int:
        """Record one more failed attempt at the exchange's memory work and give up the
        claim (the next pass of any process retries it); return the total."""
        with self._transaction() as conn:
            row = conn.execute(
                "UPDATE learning_queue SET attempts = attempts + 1, claimed_until = NULL "
                "WHERE assistant_message_id = %s RETURNING attempts",
                (assistant_message_id,),
            ).fetchone()
        return int(row["attempts"]) if row else 0

    def messages_to_embed(self, limit: int) -> list[Message]:
        """Messages of the embedding backlog (stored while the embedder failed), oldest first."""
        found = self._query(
            f"SELECT {rows.message_columns('l')}, a.name AS agent FROM embedding_backlog b "
            "JOIN conversation_log l ON l.id = b.message_id JOIN agents a ON a.id = l.agent_id "
            "ORDER BY b.message_id LIMIT %s",
            (limit,),
        )
        return [rows.message(row["agent"], row) for row in found]

    def add_message_vectors(self, embedded: Sequence[tuple[Message, Vector]]) -> None:
        """Store the vectors of backlog messages and take them off the backlog (two
        processes embedding the same message store the same vector twice: harmless); a
        message forgotten since it was read gets none (no vector of forgotten words is kept)."""
        with self._transaction() as conn, conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO message_vectors(message_id, agent_id, embedding) "
                "SELECT %s, %s, %s WHERE EXISTS (SELECT 1 FROM conversation_log WHERE id = %s) "
                "ON CONFLICT (message_id) DO UPDATE SET embedding = excluded.embedding",
                [(m.id, m.agent_id, as_vector(v), m.id) for m, v in embedded],
            )
            cursor.execute(
                "DELETE FROM embedding_backlog WHERE message_id = ANY(%s)",
                ([m.id for m, _ in embedded],),
            )
