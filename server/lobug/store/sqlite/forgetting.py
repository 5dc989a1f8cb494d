"""SQLite's part of forgetting: its in-memory indexes and agent ids follow."""

from __future__ import annotations

from collections.abc import Sequence

from lobug.store.sql.forgetting import SqlForgetting
from lobug.store.sqlite.facts import SQLiteFacts


class SQLiteForgetting(SqlForgetting, SQLiteFacts):
    def _index_forgotten(self, fact_ids: Sequence[int], message_ids: Sequence[int]) -> None:
        index, message_index = self._require_index(), self._require_message_index()
        for fact_id in fact_ids:
            index.remove(fact_id)
        for message_id in message_ids:
            message_index.remove(message_id)

    def _agent_deleted(self, name: str, agent_id: int) -> None:
        self._agent_ids.pop(name, None)
        self._require_index().drop_agent(agent_id)
        self._require_message_index().drop_agent(agent_id)
