"""The work queue: answered exchanges whose memory work has not finished (`learning_queue`,
written with the reply in one transaction, so a crash never loses it) and messages still to
embed (`embedding_backlog`).

A message posted alone (memory API, `MemoryEngine.add_messages`) is queued as a *lone* row, its
id in both columns; an assistant message that follows it from the same source turns that row
into an exchange, in the insert's transaction.

Where several processes share the queue (PostgreSQL: `_claims_exchanges`), an exchange is
claimed before its memory work runs: the process that stored the reply holds it from the
start, others claim rows as they read them (`queued_exchanges`), so two processes never run
the same exchange. A claim lasts `CLAIM_LEASE_S`; a failed attempt gives it back at once, and a
process that died leaves it to be claimed again when the lease runs out. A lone message that
a process has claimed no longer pairs with the reply that follows it.

An exchange whose memory work failed too often is *parked* (`parked_at`, with its
`last_error`): no pass takes it again (`queued_exchanges` skips it) until a person retries it
(`parked_exchanges`, then the memory work as usual); it is never dropped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from lobug.store.models import Message, ParkedExchange, QueuedMessage, Vector
from lobug.store.sql import rows
from lobug.store.sql.dialect import marks
from lobug.store.sql.log import SqlLog, answered

CLAIM_LEASE_S = 600.0


DRAFT = {"draft": True}  # a reply being said (left so when the process stopped mid-answer)


class SqlWorkQueue(SqlLog):
    # Whether exchanges are claimed (`learning_queue.claimed_until`): PostgreSQL, whose queue
    # several processes share. One process serves a SQLite file: it runs every exchange.
    _claims_exchanges: ClassVar[bool] = False

    def _lock_lone_messages(self, conn: Any, agent_id: int) -> None:
        """Inside a transaction: the agent's other writers of queued messages wait until it
        ends, so a lone message pairs with one reply only (a PostgreSQL advisory lock;
        SQLite's write transaction already holds the file)."""

    def _store_message_vectors(
        self, conn: Any, embedded: Sequence[tuple[Message, Vector]]
    ) -> Sequence[tuple[Message, Vector]]:
        """Inside a transaction: store (or replace) the vectors of the messages still in the
        log and return what was stored."""
        raise NotImplementedError

    def append_reply_for_memory_work(
        self,
        agent: str,
        device_id: str,
        content: str,
        user: Message,
        metadata: dict[str, Any] | None = None,
        draft_id: int | None = None,
    ) -> Message:
        """Log the assistant's reply to `user` (in place of its draft, `draft_reply`) and
        queue the exchange for its memory work (claimed by this process where exchanges are
        claimed), in one transaction."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            if draft_id is not None:
                conn.execute("DELETE FROM conversation_log WHERE id = ?", (draft_id,))
            reply = self._insert_message(
                conn, agent, agent_id, device_id, "assistant", content, metadata, answered(user)
            )
            if self._claims_exchanges:
                conn.execute(
                    "INSERT INTO learning_queue(assistant_message_id, user_message_id, "
                    "queued_at, claimed_until) VALUES (?, ?, ?, ?)",
                    (reply.id, user.id, reply.created_at, reply.created_at + CLAIM_LEASE_S),
                )
            else:
                self._queue(conn, reply, user)
        return reply

    def draft_reply(
        self, agent: str, device_id: str, content: str, user: Message, draft_id: int | None
    ) -> int:
        """The reply to `user` as far as it was said yet (a voice answer, a sentence at a
        time: what was said before a crash stays in the log); its id, the same while it
        grows. The reply stored at the turn's end takes its place."""
        if draft_id is not None:
            with self._transaction() as conn:
                conn.execute(
                    "UPDATE conversation_log SET content = ? WHERE id = ?", (content, draft_id)
                )
            return draft_id
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            draft = self._insert_message(
                conn, agent, agent_id, device_id, "assistant", content, DRAFT, answered(user)
            )
        return draft.id

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
        with self._writing():  # a forget in between must not leave the vector in the index
            with self._transaction() as conn:
                self._lock_lone_messages(conn, agent_id)
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
                self._queue(conn, message, user or message)
            if vector is not None:
                self._index_message_vectors([(message, vector)])
        return QueuedMessage(message, user)

    @staticmethod
    def _queue(conn: Any, reply: Message, user: Message) -> None:
        """Queue an exchange (a lone message: `reply` is `user`), unclaimed."""
        conn.execute(
            "INSERT INTO learning_queue(assistant_message_id, user_message_id, queued_at) "
            "VALUES (?, ?, ?)",
            (reply.id, user.id, reply.created_at),
        )

    def _lone_user_message(
        self, conn: Any, agent: str, agent_id: int, device_id: str
    ) -> Message | None:
        """The agent's last message from `device_id`, if it is a user message waiting alone
        (and not claimed by a process learning from it)."""
        unclaimed = " AND q.claimed_until IS NULL" if self._claims_exchanges else ""
        row = conn.execute(
            f"SELECT {rows.message_columns('l')} FROM conversation_log l "
            "JOIN learning_queue q ON q.assistant_message_id = l.id "
            f"AND q.user_message_id = l.id{unclaimed} "
            "WHERE l.id = (SELECT MAX(id) FROM conversation_log "
            "WHERE agent_id = ? AND device_id = ?) AND l.role = 'user'"
            f"{self.dialect.lock_rows('q')}",
            (agent_id, device_id),
        ).fetchone()
        return rows.message(agent, row) if row else None

    def count_queued_exchanges(self) -> int:
        """Exchanges waiting for their memory work; parked ones are not counted."""
        return self._count("SELECT COUNT(*) AS n FROM learning_queue WHERE parked_at IS NULL")

    def count_parked_exchanges(self) -> int:
        return self._count("SELECT COUNT(*) AS n FROM learning_queue WHERE parked_at IS NOT NULL")

    def dequeue_exchange(self, assistant_message_id: int) -> None:
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM learning_queue WHERE assistant_message_id = ?",
                (assistant_message_id,),
            )

    def count_failed_attempt(self, assistant_message_id: int, error: str = "") -> int:
        """Record one more failed attempt at the exchange's memory work and why (`error`),
        and give up any claim (the next pass of any process retries it); return the total."""
        release = ", claimed_until = NULL" if self._claims_exchanges else ""
        with self._transaction() as conn:
            row = conn.execute(
                f"UPDATE learning_queue SET attempts = attempts + 1, last_error = ?{release} "
                "WHERE assistant_message_id = ? RETURNING attempts",
                (error, assistant_message_id),
            ).fetchone()
        return int(row["attempts"]) if row else 0

    def park_exchange(self, assistant_message_id: int) -> None:
        """Take the exchange out of the passes' retries until a person retries it."""
        release = ", claimed_until = NULL" if self._claims_exchanges else ""
        with self._transaction() as conn:
            conn.execute(
                f"UPDATE learning_queue SET parked_at = ?{release} WHERE assistant_message_id = ?",
                (self._clock(), assistant_message_id),
            )

    def parked_exchanges(
        self, limit: int, ids: Sequence[int] | None = None
    ) -> list[ParkedExchange]:
        """The parked exchanges (those of `ids` alone when given), oldest first."""
        if ids is not None and not ids:
            return []
        chosen = f" AND q.assistant_message_id IN ({marks(ids)})" if ids else ""
        found = self._query(
            "SELECT q.attempts, q.last_error, q.parked_at, a.name AS agent, "
            f"{rows.message_columns('u', 'user_')}, {rows.message_columns('l', 'reply_')} "
            "FROM learning_queue q "
            "JOIN conversation_log u ON u.id = q.user_message_id "
            "JOIN conversation_log l ON l.id = q.assistant_message_id "
            "JOIN agents a ON a.id = l.agent_id "
            f"WHERE q.parked_at IS NOT NULL{chosen} "
            "ORDER BY q.assistant_message_id LIMIT ?",
            (*(ids or ()), limit),
        )
        return [
            ParkedExchange(
                rows.message(row["agent"], row, "user_"),
                rows.message(row["agent"], row, "reply_"),
                int(row["attempts"]),
                row["last_error"] or "",
                float(row["parked_at"]),
            )
            for row in found
        ]

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
        """Store the vectors of backlog messages and take them off the backlog (two
        processes embedding the same message store the same vector twice: harmless); a
        message forgotten since it was read gets none (no vector of forgotten words is kept)."""
        if not embedded:
            return
        ids = [m.id for m, _ in embedded]
        with self._writing():  # a forget in between must not leave the vector in the index
            with self._transaction() as conn:
                stored = self._store_message_vectors(conn, embedded)
                conn.execute(
                    f"DELETE FROM embedding_backlog WHERE message_id IN ({marks(ids)})", ids
                )
            self._index_message_vectors(stored)
