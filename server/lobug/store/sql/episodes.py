"""Episodes: summaries with the span of time they cover, found by their dates; and the
messages of a span of time. Finding them by their words or their embedding is each engine's
own (full-text and vectors differ)."""

from __future__ import annotations

from lobug.store.models import Message, Summary
from lobug.store.sql import rows
from lobug.store.sql.summaries import SqlSummaries


class SqlEpisodes(SqlSummaries):
    def summaries_between(self, agent: str, start: float, end: float, k: int) -> list[Summary]:
        """The agent's episodes that overlap [start, end), oldest first, at most `k`."""
        found = self._query(
            f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries WHERE agent_id = ? "
            "AND ended_at >= ? AND started_at < ? ORDER BY started_at, id LIMIT ?",
            (self.agent_id(agent), start, end, k),
        )
        return [rows.summary(agent, row) for row in found]

    def messages_between(self, agent: str, start: float, end: float, k: int) -> list[Message]:
        """The agent's messages said in [start, end), oldest first, at most `k`."""
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log WHERE agent_id = ? "
            "AND created_at >= ? AND created_at < ? ORDER BY created_at, id LIMIT ?",
            (self.agent_id(agent), start, end, k),
        )
        return [rows.message(agent, row) for row in found]
