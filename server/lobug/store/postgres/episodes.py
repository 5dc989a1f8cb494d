"""PostgreSQL's part of the episodes: an episode's embedding kept as a pgvector with its agent;
found by their words (`tsvector`, ranked by `ts_rank_cd`) or their embedding (an exact cosine
scan of the agent's few episode vectors); read with their vectors to build topics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lobug.store.models import Summary, Vector
from lobug.store.postgres.database import PostgresDatabase, as_vector
from lobug.store.postgres.fulltext import ts_query
from lobug.store.sql import rows
from lobug.store.sql.episodes import SqlEpisodes
from lobug.store.sql.rows import summary_columns


class PostgresEpisodes(SqlEpisodes, PostgresDatabase):
    def _store_summary_vector(
        self, conn: Any, summary_id: int, agent_id: int, vector: Vector
    ) -> None:
        conn.execute(
            "INSERT INTO summary_vectors(summary_id, agent_id, embedding) VALUES (?, ?, ?)",
            (summary_id, agent_id, as_vector(vector)),
        )

    def keyword_summaries(self, agent: str, query: str, k: int) -> list[tuple[Summary, float]]:
        """The agent's episodes matching any word of `query`, best rank first (score > 0)."""
        match = ts_query(query)
        if not match:
            return []
        found = self._query(
            f"SELECT {summary_columns('s')}, ts_rank_cd(s.search, q) AS score "
            "FROM summaries s, to_tsquery('english', ?) q "
            "WHERE s.search @@ q AND s.agent_id = ? ORDER BY score DESC, s.id LIMIT ?",
            (match, self.agent_id(agent), k),
        )
        return [(rows.summary(agent, row), float(row["score"])) for row in found]

    def search_summaries(self, agent: str, query: Vector, k: int) -> list[tuple[Summary, float]]:
        """The agent's embedded episodes nearest to `query` (cosine), best first."""
        if k <= 0:
            return []
        q = as_vector(query)
        found = self._query(
            f"SELECT {summary_columns('s')}, v.embedding <=> ? AS distance "
            "FROM summary_vectors v JOIN summaries s ON s.id = v.summary_id "
            "WHERE v.agent_id = ? ORDER BY v.embedding <=> ?, s.id LIMIT ?",
            (q, self.agent_id(agent), q, k),
        )
        return [
            (rows.summary(agent, row), 1.0 - float(row["distance"]))
            for row in found
            if row["distance"] is not None and not math.isnan(row["distance"])
        ]

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
