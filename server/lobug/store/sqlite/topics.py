"""SQLite's part of the topics: the embedded episodes they are built from, read through the
episodes' in-memory matrix."""

from __future__ import annotations

import numpy as np

from lobug.store.models import Summary, Vector
from lobug.store.sql import rows
from lobug.store.sql.dialect import marks
from lobug.store.sql.topics import SqlTopics
from lobug.store.sqlite.episodes import SQLiteEpisodes


class SQLiteTopics(SqlTopics, SQLiteEpisodes):
    def episode_vectors(self, agent: str) -> tuple[list[Summary], Vector]:
        """The agent's embedded episodes, oldest first, and their vectors as one matrix."""
        ids, matrix = self._episode_matrix(self.agent_id(agent))
        if not len(ids):
            return [], np.zeros((0, 0), dtype=np.float32)
        wanted = [int(i) for i in ids]
        found = self._query(
            f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries WHERE id IN ({marks(wanted)})", wanted
        )
        by_id = {int(row["id"]): rows.summary(agent, row) for row in found}
        keep = [i for i, summary_id in enumerate(wanted) if summary_id in by_id]
        return [by_id[wanted[i]] for i in keep], matrix[keep]
