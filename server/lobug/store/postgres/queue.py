"""The work queue, shared by every process on the database: answered exchanges whose memory
work has not finished (`learning_queue`, written with the reply in one transaction) and
messages still to embed (`embedding_backlog`).

An exchange is claimed before its memory work runs: the process that stored the reply holds it
from the start, others claim rows with `SELECT ... FOR UPDATE SKIP LOCKED`, so two processes
never run the same exchange. A claim lasts `CLAIM_LEASE_S`; a failed attempt gives it back at
once, and a process that died leaves it to be claimed again when the lease runs out.
"""

from __future__ import annotations

from collections.abc import Sequence

from lobug.store.models import Message, QueuedExchange, Vector
from lobug.store.postgres.log import PostgresLog, as_vector
from lobug.store.sqlite import rows

CLAIM_LEASE_S = 600.0

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
        self, agent: str, device_id: str, content: str, user: Message
    ) -> Message:
        """Log the assistant's reply to `user` and queue the exchange for its memory work,
        claimed by this process, in one transaction."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            reply = self._insert_message(
                conn, agent, agent_id, device_id, "assistant", content, None
            )
            conn.execute(
                "INSERT INTO learning_queue(assistant_message_id, user_message_id, queued_at, "
                "claimed_until) VALUES (%s, %s, %s, %s)",
                (reply.id, user.id, reply.created_at, reply.created_at + CLAIM_LEASE_S),
            )
        return reply

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
        processes embedding the same message store the same vector twice: harmless)."""
        with self._transaction() as conn, conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO message_vectors(message_id, agent_id, embedding) "
                "VALUES (%s,%s,%s) ON CONFLICT (message_id) DO UPDATE "
                "SET embedding = excluded.embedding",
                [(m.id, m.agent_id, as_vector(v)) for m, v in embedded],
            )
            cursor.execute(
                "DELETE FROM embedding_backlog WHERE message_id = ANY(%s)",
                ([m.id for m, _ in embedded],),
            )
