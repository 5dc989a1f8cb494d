"""PostgreSQL's part of the episodes: found by their words (`tsvector`, ranked by
`ts_rank_cd`) or their embedding (an exact cosine scan of the agent's few episode vectors)."""

from __future__ import annotations

import math

from lobug.store.models import Summary, Vector
from lobug.store.postgres.database import as_vector
from lobug.store.postgres.fulltext import ts_query
from lobug.store.postgres.summaries import PostgresSummaries
from lobug.store.sql import rows
from lobug.store.sql.episodes import SqlEpisodes
from lobug.store.sql.rows import summary_columns


class PostgresEpisodes(SqlEpisodes, PostgresSummaries):
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
