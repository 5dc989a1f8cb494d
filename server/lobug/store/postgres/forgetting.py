"""Forgetting is always a purge: forgotten messages leave the log, the keyword index, the
vectors and the work queue; facts learned only from them are purged; summaries that covered
them are dropped (their other messages are summarized again) and the base memory is marked for
rewriting. Deleting an agent erases everything of it. Afterwards the touched tables are
vacuumed (what that does and does not promise about old bytes: MEMORY.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lobug.store import errors
from lobug.store.models import AgentCounts, Forgotten
from lobug.store.postgres.database import FACT_LOCK
from lobug.store.postgres.facts import PostgresFacts
from lobug.store.postgres.topics import drop_topics_holding
from lobug.store.sql import audit, rows
from lobug.store.sql.fact_edits import SqlFactEdits

# Tables keyed by agent_id, emptied for a deleted agent (children before parents).
# Their vectors go with dreams and summaries (ON DELETE CASCADE).
AGENT_TABLES = (
    "topics",
    "audit_log",
    "dreams",
    "base_memory_versions",
    "base_memory",
    "summaries",
    "facts",
)


class PostgresForgetting(SqlFactEdits, PostgresFacts):
    def span_message_ids(
        self, agent: str, device: str | None, since: float | None, until: float | None
    ) -> list[int]:
        """The ids of the agent's messages in a stretch of time (either end open), from one
        device or all."""
        condition, params = "", []
        for clause, value in (
            ("device_id = %s", device),
            ("created_at >= %s", since),
            ("created_at <= %s", until),
        ):
            if value is not None:
                condition += f" AND {clause}"
                params.append(value)
        found = self._query(
            f"SELECT id FROM conversation_log WHERE agent_id = %s {condition} ORDER BY id",
            (self.agent_id(agent), *params),
        )
        return [row["id"] for row in found]

    def forget_message(self, agent: str, message_id: int, *, actor: str) -> Forgotten:
        """Forget one message (MessageNotFound when the agent has none by this id)."""
        known = self._query(
            "SELECT id FROM conversation_log WHERE id = %s AND agent_id = %s",
            (message_id, self.agent_id(agent)),
        )
        if not known:
            raise errors.MessageNotFound(f"agent {agent!r} has no message {message_id}")
        return self.forget_messages(agent, [message_id], actor=actor)

    def forget_messages(self, agent: str, ids: Sequence[int], *, actor: str) -> Forgotten:
        """Purge the agent's messages `ids` and what was learned only from them."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            # Fact writers of the agent wait (their source check then sees what is gone).
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (FACT_LOCK, agent_id))
            ids = self._own_messages(conn, agent_id, ids)
            facts = self._facts_only_from(conn, agent_id, set(ids))
            now = self._clock()
            if facts:
                self._forget_rows(conn, facts, now)
                self._purge_rows(conn, facts, now)
            summaries = self._drop_summaries_covering(conn, agent_id, ids)
            drop_topics_holding(conn, "fact", facts)
            drop_topics_holding(conn, "episode", summaries)
            self._delete_messages(conn, ids)
            if ids:
                conn.execute("UPDATE base_memory SET stale = 1 WHERE agent_id = %s", (agent_id,))
            forgotten = Forgotten(tuple(ids), tuple(facts), tuple(summaries))
            audit.scrub(conn, self.dialect, "fact", facts)
            audit.record(
                conn, now, agent_id, actor, "forget", "messages", ids, detail=forgotten.counts()
            )
        if ids:
            self._erase_free_pages()
        return forgotten

    @staticmethod
    def _own_messages(conn: Any, agent_id: int, ids: Sequence[int]) -> list[int]:
        if not ids:
            return []
        found = conn.execute(
            "SELECT id FROM conversation_log WHERE agent_id = %s AND id = ANY(%s) "
            "ORDER BY id FOR UPDATE",
            (agent_id, list(ids)),
        )
        return [row["id"] for row in found]

    @staticmethod
    def _facts_only_from(conn: Any, agent_id: int, forgotten: set[int]) -> list[int]:
        """The agent's unpurged facts learned from any of `forgotten` and from no message
        that stays."""
        if not forgotten:
            return []
        sources_of = {
            row["id"]: set(json.loads(row["source_message_ids"]))
            for row in conn.execute(
                "SELECT id, source_message_ids FROM facts "
                "WHERE agent_id = %s AND purged_at IS NULL AND source_message_ids != '[]'",
                (agent_id,),
            )
        }
        touched = {i: s for i, s in sources_of.items() if s & forgotten}
        others = list(set().union(*touched.values()) - forgotten)
        staying = {
            row["id"]
            for row in conn.execute("SELECT id FROM conversation_log WHERE id = ANY(%s)", (others,))
        }
        return sorted(i for i, sources in touched.items() if not sources & staying)

    @staticmethod
    def _drop_summaries_covering(conn: Any, agent_id: int, ids: Sequence[int]) -> list[int]:
        """Delete the summaries whose span holds a forgotten message; their other messages
        become unsummarized again, so the short-term cascade summarizes what is left."""
        dropped = []
        for summary in conn.execute(
            "SELECT id, source_from_id, source_to_id FROM summaries WHERE agent_id = %s",
            (agent_id,),
        ).fetchall():
            low, high = summary["source_from_id"], summary["source_to_id"]
            if any(low <= i <= high for i in ids):
                dropped.append(summary["id"])
                conn.execute(
                    "UPDATE conversation_log SET summarized = 0 "
                    "WHERE agent_id = %s AND id BETWEEN %s AND %s",
                    (agent_id, low, high),
                )
        if dropped:
            conn.execute("DELETE FROM summaries WHERE id = ANY(%s)", (dropped,))
        return dropped

    @staticmethod
    def _delete_messages(conn: Any, ids: Sequence[int]) -> None:
        if not ids:
            return
        ids = list(ids)
        conn.execute(
            "DELETE FROM learning_queue WHERE assistant_message_id = ANY(%s) "
            "OR user_message_id = ANY(%s)",
            (ids, ids),
        )
        conn.execute("DELETE FROM embedding_backlog WHERE message_id = ANY(%s)", (ids,))
        if "message_vectors" in _tables(conn):
            conn.execute("DELETE FROM message_vectors WHERE message_id = ANY(%s)", (ids,))
        conn.execute("DELETE FROM conversation_log WHERE id = ANY(%s)", (ids,))

    # ------------------------------------------------------------------ agents

    def agents_with_counts(self) -> list[AgentCounts]:
        found = self._query(
            f"SELECT {rows.AGENT_COLUMNS}, "
            "(SELECT COUNT(*) FROM conversation_log l WHERE l.agent_id = a.id) AS messages, "
            "(SELECT COUNT(*) FROM facts f WHERE f.agent_id = a.id "
            " AND f.invalidated_at IS NULL) AS facts, "
            "(SELECT COUNT(*) FROM summaries s WHERE s.agent_id = a.id) AS summaries "
            "FROM agents a ORDER BY a.name"
        )
        return [
            AgentCounts(rows.agent(row), row["messages"], row["facts"], row["summaries"])
            for row in found
        ]

    def delete_agent(self, name: str, *, actor: str) -> dict[str, int]:
        """Erase the agent and everything of it; the audit log keeps one content-free row
        (the agent's id and the counts)."""
        agent_id = self.agent_id(name)
        with self._transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (FACT_LOCK, agent_id))
            counts = self._delete_agent_rows(conn, agent_id)
            audit.record(
                conn, self._clock(), None, actor, "delete", "agent", [agent_id], detail=counts
            )
        self._erase_free_pages()
        return counts

    def _delete_agent_rows(self, conn: Any, agent_id: int) -> dict[str, int]:
        messages = [
            row["id"]
            for row in conn.execute(
                "SELECT id FROM conversation_log WHERE agent_id = %s", (agent_id,)
            )
        ]
        counts = {"messages": len(messages)}
        self._delete_messages(conn, messages)
        fact_ids = [
            row["id"]
            for row in conn.execute("SELECT id FROM facts WHERE agent_id = %s", (agent_id,))
        ]
        if fact_ids and "fact_vectors" in _tables(conn):
            conn.execute("DELETE FROM fact_vectors WHERE fact_id = ANY(%s)", (fact_ids,))
        conn.execute(
            "DELETE FROM memory_block_history WHERE block_id IN "
            "(SELECT id FROM memory_blocks WHERE agent_id = %s)",
            (agent_id,),
        )
        counts["blocks"] = conn.execute(
            "DELETE FROM memory_blocks WHERE agent_id = %s", (agent_id,)
        ).rowcount
        for table in AGENT_TABLES:
            counts[table] = conn.execute(
                f"DELETE FROM {table} WHERE agent_id = %s", (agent_id,)
            ).rowcount
        conn.execute("DELETE FROM agents WHERE id = %s", (agent_id,))
        return counts


def _tables(conn: Any) -> set[str]:
    found = conn.execute(
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()"
    )
    return {row["name"] for row in found}
