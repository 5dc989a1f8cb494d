"""PostgreSQL's part of the topics: the embedded episodes they are built from, with their
pgvector embeddings."""

from __future__ import annotations

import numpy as np

from lobug.store.models import Summary, Vector
from lobug.store.postgres.episodes import PostgresEpisodes
from lobug.store.sql import rows
from lobug.store.sql.topics import SqlTopics


class PostgresTopics(SqlTopics, PostgresEpisodes):
    def episode_vectors(self, agent: str) -> tuple[list[Summary], Vector]:
        """The agent's embedded episodes, oldest first, and their vectors as one matrix."""
        if "summary_vectors" not in self.table_names():
            return [], np.zeros((0, 0), dtype=np.float32)
        found = self._query(
            f"SELECT {rows.summary_columns('s')}, v.embedding FROM summary_vectors v "
            "JOIN summaries s ON s.id = v.summary_id WHERE v.agent_id = ? ORDER BY s.id",
            (self.agent_id(agent),),
        )
        if not found:
            return [], np.zeros((0, 0), dtype=np.float32)
        vectors = np.stack([row["embedding"].to_numpy() for row in found]).astype(np.float32)
        return [rows.summary(agent, row) for row in found], vectors
