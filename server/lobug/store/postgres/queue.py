"""PostgreSQL's part of the work queue, shared by every process on the database: exchanges
claimed with `SELECT ... FOR UPDATE SKIP LOCKED` (see `sql/queue.py`), lone messages paired
under an advisory lock, and backlog vectors stored only for messages still in the log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lobug.store.models import Message, QueuedExchange, Vector
from lobug.store.postgres.database import PostgresDatabase, as_vector
from lobug.store.sql import rows
from lobug.store.sql.queue import CLAIM_LEASE_S, SqlWorkQueue

QUEUE_LOCK = 0x10B0D  # pg_advisory_xact_lock(QUEUE_LOCK, agent_id): pairing lone messages

_CLAIM_SQL = """
WITH claimed AS (
    SELECT assistant_message_id FROM learning_queue
    WHERE queued_at < %(before)s AND assistant_message_id > %(after)s
      AND (claimed_until IS NULL OR claimed_until < %(now)s) AND parked_at IS NULL
    ORDER BY assistant_message_id LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE learning_queue q SET claimed_until = %(until)s FROM claimed c
WHERE q.assistant_message_id = c.assistant_message_id
RETURNING q.attempts, q.user_message_id, q.assistant_message_id,
    (SELECT name FROM agents a JOIN conversation_log l ON a.id = l.agent_id
     WHERE l.id = q.assistant_message_id) AS agent
"""


class PostgresWorkQueue(SqlWorkQueue, PostgresDatabase):
    _claims_exchanges = True

    def _lock_lone_messages(self, conn: Any, agent_id: int) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(?, ?)", (QUEUE_LOCK, agent_id))

    def queued_exchanges(
        self, limit: int, queued_before: float, after_id: int = 0
    ) -> list[QueuedExchange]:
        """Exchanges no process holds and none parked, oldest first, from the one whose
        reply comes after message `after_id`, each claimed for this process (see
        `sql/queue.py`)."""
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

    def _store_message_vectors(
        self, conn: Any, embedded: Sequence[tuple[Message, Vector]]
    ) -> Sequence[tuple[Message, Vector]]:
        """One statement a message: stored only while the message is in the log."""
        conn.executemany(
            "INSERT INTO message_vectors(message_id, agent_id, embedding) "
            "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM conversation_log WHERE id = ?) "
            "ON CONFLICT (message_id) DO UPDATE SET embedding = excluded.embedding",
            [(m.id, m.agent_id, as_vector(v), m.id) for m, v in embedded],
        )
        return embedded
