"""Summaries of the conversation log, and the base memory distilled from them."""

from __future__ import annotations

from collections.abc import Sequence

from lobug.store.errors import StoreError
from lobug.store.models import Message, Summary
from lobug.store.sqlite import rows
from lobug.store.sqlite.database import SQLiteDatabase


class SQLiteSummaries(SQLiteDatabase):
    def add_summary(self, agent: str, content: str, messages: Sequence[Message]) -> Summary:
        """Store a summary and mark the messages it covers as summarized, atomically."""
        if not messages:
            raise StoreError("a summary must cover at least one message")
        agent_id = self.agent_id(agent)
        first, last = messages[0].id, messages[-1].id
        now = self._clock()
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO summaries(agent_id, content, source_from_id, source_to_id, "
                "created_at) VALUES (?, ?, ?, ?, ?)",
                (agent_id, content, first, last, now),
            )
            conn.executemany(
                "UPDATE conversation_log SET summarized = 1 WHERE id = ? AND agent_id = ?",
                [(m.id, agent_id) for m in messages],
            )
        return Summary(int(cursor.lastrowid), agent, content, first, last, now, False)

    def unincorporated_summaries(self, agent: str) -> list[Summary]:
        found = self._query(
            f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries "
            "WHERE agent_id = ? AND incorporated = 0 ORDER BY id",
            (self.agent_id(agent),),
        )
        return [rows.summary(agent, row) for row in found]

    def count_unincorporated(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM summaries WHERE agent_id = ? AND incorporated = 0",
            (self.agent_id(agent),),
        )

    def count_summaries(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM summaries WHERE agent_id = ?", (self.agent_id(agent),)
        )

    def summaries(self, agent: str) -> list[Summary]:
        found = self._query(
            f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries WHERE agent_id = ? ORDER BY id",
            (self.agent_id(agent),),
        )
        return [rows.summary(agent, row) for row in found]

    def base_memory(self, agent: str) -> str:
        found = self._query(
            "SELECT content FROM base_memory WHERE agent_id = ?", (self.agent_id(agent),)
        )
        return str(found[0]["content"]) if found else ""

    def distill_base_memory(
        self, agent: str, content: str, incorporated: Sequence[Summary]
    ) -> None:
        """Replace the base memory and mark the summaries it absorbed, atomically."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO base_memory(agent_id, content, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(agent_id) DO UPDATE SET content = excluded.content, "
                "updated_at = excluded.updated_at",
                (agent_id, content, self._clock()),
            )
            conn.executemany(
                "UPDATE summaries SET incorporated = 1 WHERE id = ? AND agent_id = ?",
                [(s.id, agent_id) for s in incorporated],
            )
