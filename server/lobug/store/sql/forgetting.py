"""Forgetting is always a purge: forgotten messages leave the log, the keyword index, the
vectors and the work queue; facts learned only from them are purged; summaries that covered
them are dropped (their other messages are summarized again) and the base memory is marked for
rewriting. Deleting an agent erases everything of it. Afterwards the engine leaves nothing of
the text in its files (`_erase_free_pages`: SQLite merges its full-text indexes and
checkpoints the WAL; PostgreSQL vacuums the touched tables, whose promises are in MEMORY.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lobug.store import errors
from lobug.store.models import AgentCounts, Forgotten
from lobug.store.sql import audit, rows
from lobug.store.sql.dialect import batches, marks
from lobug.store.sql.fact_edits import SqlFactEdits
from lobug.store.sql.topics import drop_topics_holding

# Tables keyed by agent_id, emptied for a deleted agent (children before parents). Their
# vectors go with dreams and summaries (deleted with them).
AGENT_TABLES = (
    "purge_jobs",
    "reminders",
    "topics",
    "audit_log",
    "dreams",
    "base_memory_versions",
    "base_memory",
    "summaries",
    "facts",
    "device_people",
    "people",  # after the messages and facts that name them; their voice profiles go first
)


class SqlForgetting(SqlFactEdits):
    def span_message_ids(
        self, agent: str, device: str | None, since: float | None, until: float | None
    ) -> list[int]:
        """The ids of the agent's messages in a stretch of time (either end open), from one
        device or all."""
        condition, params = "", []
        for clause, value in (
            ("device_id = ?", device),
            ("created_at >= ?", since),
            ("created_at <= ?", until),
        ):
            if value is not None:
                condition += f" AND {clause}"
                params.append(value)
        found = self._query(
            f"SELECT id FROM conversation_log WHERE agent_id = ? {condition} ORDER BY id",
            (self.agent_id(agent), *params),
        )
        return [row["id"] for row in found]

    def forget_message(self, agent: str, message_id: int, *, actor: str) -> Forgotten:
        """Forget one message (MessageNotFound when the agent has none by this id)."""
        known = self._query(
            "SELECT id FROM conversation_log WHERE id = ? AND agent_id = ?",
            (message_id, self.agent_id(agent)),
        )
        if not known:
            raise errors.MessageNotFound(f"agent {agent!r} has no message {message_id}")
        return self.forget_messages(agent, [message_id], actor=actor)

    def forget_messages(
        self, agent: str, ids: Sequence[int], *, actor: str, purge_learned: bool = True
    ) -> Forgotten:
        """Purge the agent's messages `ids` and what was learned only from them (unless
        `purge_learned` is False: a purge job purges those facts itself, after it has found
        the copies of their text, `memory/purges.py`)."""
        agent_id = self.agent_id(agent)
        with self._writing():
            with self._transaction() as conn:
                # Fact writers of the agent wait (their source check then sees what is gone).
                self._lock_fact_writers(conn, agent_id)
                ids = self._own_messages(conn, agent_id, ids)
                facts = self._facts_only_from(conn, agent_id, set(ids)) if purge_learned else []
                now = self._clock()
                for batch in batches(facts):
                    self._forget_rows(conn, batch, now)
                    self._purge_rows(conn, batch, now)
                summaries = self._drop_summaries_covering(conn, agent_id, ids)
                drop_topics_holding(conn, "fact", facts)
                drop_topics_holding(conn, "episode", summaries)
                self._delete_messages(conn, ids)
                if ids:
                    conn.execute("UPDATE base_memory SET stale = 1 WHERE agent_id = ?", (agent_id,))
                forgotten = Forgotten(tuple(ids), tuple(facts), tuple(summaries))
                # (`_purge_rows` scrubbed the audit log's copies of the facts' text.)
                audit.record(
                    conn, now, agent_id, actor, "forget", "messages", ids, detail=forgotten.counts()
                )
            self._index_forgotten(facts, ids)
        if ids:
            self._erase_free_pages()
        return forgotten

    # ------------------------------------------------------------------ engine hooks

    def _index_forgotten(self, fact_ids: Sequence[int], message_ids: Sequence[int]) -> None:
        """After the forgetting committed: the engine's in-memory mirrors of the current facts
        and of the messages' vectors drop them (SQLite)."""

    def _agent_deleted(self, name: str, agent_id: int) -> None:
        """After the agent's deletion committed: the engine forgets what it keeps of the agent
        in memory (SQLite: its id, its vectors)."""

    def _table_names_in(self, conn: Any) -> set[str]:
        """The tables there are, seen from inside the transaction on `conn`."""
        return {row["name"] for row in conn.execute(self.dialect.tables)}

    # ------------------------------------------------------------------ statements

    def _own_messages(self, conn: Any, agent_id: int, ids: Sequence[int]) -> list[int]:
        """The agent's messages among `ids`, in order, locked where rows lock."""
        found = []
        for batch in batches(ids):
            found += [
                row["id"]
                for row in conn.execute(
                    f"SELECT id FROM conversation_log WHERE agent_id = ? "
                    f"AND id IN ({marks(batch)}) ORDER BY id{self.dialect.lock_rows()}",
                    (agent_id, *batch),
                )
            ]
        return sorted(found)

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
                "WHERE agent_id = ? AND purged_at IS NULL AND source_message_ids != '[]'",
                (agent_id,),
            )
        }
        touched = {i: s for i, s in sources_of.items() if s & forgotten}
        others = list(set().union(*touched.values()) - forgotten)
        staying = {
            row["id"]
            for batch in batches(others)
            for row in conn.execute(
                f"SELECT id FROM conversation_log WHERE id IN ({marks(batch)})", list(batch)
            )
        }
        return sorted(i for i, sources in touched.items() if not sources & staying)

    @staticmethod
    def _drop_summaries_covering(conn: Any, agent_id: int, ids: Sequence[int]) -> list[int]:
        """Delete the summaries whose span holds a forgotten message; their other messages
        become unsummarized again, so the short-term cascade summarizes what is left."""
        dropped = []
        for summary in conn.execute(
            "SELECT id, source_from_id, source_to_id FROM summaries WHERE agent_id = ?",
            (agent_id,),
        ).fetchall():
            low, high = summary["source_from_id"], summary["source_to_id"]
            if any(low <= i <= high for i in ids):
                dropped.append(summary["id"])
                conn.execute(
                    "UPDATE conversation_log SET summarized = 0 "
                    "WHERE agent_id = ? AND id BETWEEN ? AND ?",
                    (agent_id, low, high),
                )
        for batch in batches(dropped):
            conn.execute(f"DELETE FROM summaries WHERE id IN ({marks(batch)})", list(batch))
        return dropped

    def _delete_messages(self, conn: Any, ids: Sequence[int]) -> None:
        if not ids:
            return
        vectors = "message_vectors" in self._table_names_in(conn)
        for batch in batches(ids):
            where = f"IN ({marks(batch)})"
            conn.execute(
                f"DELETE FROM learning_queue WHERE assistant_message_id {where} "
                f"OR user_message_id {where}",
                (*batch, *batch),
            )
            conn.execute(f"DELETE FROM embedding_backlog WHERE message_id {where}", list(batch))
            if vectors:
                conn.execute(f"DELETE FROM message_vectors WHERE message_id {where}", list(batch))
            conn.execute(f"DELETE FROM conversation_log WHERE id {where}", list(batch))

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
        with self._writing():
            with self._transaction() as conn:
                self._lock_fact_writers(conn, agent_id)
                counts = self._delete_agent_rows(conn, agent_id)
                audit.record(
                    conn, self._clock(), None, actor, "delete", "agent", [agent_id], detail=counts
                )
            self._agent_deleted(name, agent_id)
        self._erase_free_pages(rewrite_file=True)
        return counts

    def _delete_agent_rows(self, conn: Any, agent_id: int) -> dict[str, int]:
        messages = [
            row["id"]
            for row in conn.execute(
                "SELECT id FROM conversation_log WHERE agent_id = ?", (agent_id,)
            )
        ]
        counts = {"messages": len(messages)}
        self._delete_messages(conn, messages)
        fact_ids = [
            row["id"]
            for row in conn.execute("SELECT id FROM facts WHERE agent_id = ?", (agent_id,))
        ]
        if fact_ids and "fact_vectors" in self._table_names_in(conn):
            for batch in batches(fact_ids):
                conn.execute(
                    f"DELETE FROM fact_vectors WHERE fact_id IN ({marks(batch)})", list(batch)
                )
        conn.execute(
            "DELETE FROM memory_block_history WHERE block_id IN "
            "(SELECT id FROM memory_blocks WHERE agent_id = ?)",
            (agent_id,),
        )
        counts["blocks"] = conn.execute(
            "DELETE FROM memory_blocks WHERE agent_id = ?", (agent_id,)
        ).rowcount
        conn.execute(
            "DELETE FROM voice_profiles WHERE person_id IN "
            "(SELECT id FROM people WHERE agent_id = ?)",
            (agent_id,),
        )
        for table in AGENT_TABLES:
            counts[table] = conn.execute(
                f"DELETE FROM {table} WHERE agent_id = ?", (agent_id,)
            ).rowcount
        conn.execute("DELETE FROM agents WHERE id = ?", (agent_id,))
        return counts
