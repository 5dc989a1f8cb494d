"""Episodes: summaries with the span of time they cover, found by their words (`tsvector`,
ranked by `ts_rank_cd`), their embedding (an exact cosine scan of the agent's few episode
vectors) or their dates; and the messages of a span of time."""

from __future__ import annotations

import math

from lobug.store.models import Message, Summary, Vector
from lobug.store.postgres.fulltext import ts_query
from lobug.store.postgres.log import as_vector
from lobug.store.postgres.summaries import PostgresSummaries
from lobug.store.sql import rows
from lobug.store.sql.rows import summary_columns


class PostgresEpisodes(PostgresSummaries):
    def keyword_summaries(self, agent: str, query: str, k: int) -> list[tuple[Summary, float]]:
        """The agent's episodes matching any word of `query`, best rank first (score > 0)."""
        match = ts_query(query)
        if not match:
            return []
        found = self._query(
            f"SELECT {summary_columns('s')}, ts_rank_cd(s.search, q) AS score "
            "FROM summaries s, to_tsquery('english', %s) q "
            "WHERE s.search @@ q AND s.agent_id = %s ORDER BY score DESC, s.id LIMIT %s",
            (match, self.agent_id(agent), k),
        )
        return [(rows.summary(agent, row), float(row["score"])) for row in found]

    def search_summaries(self, agent: str, query: Vector, k: int) -> list[tuple[Summary, float]]:
        """The agent's embedded episodes nearest to `query` (cosine), best first."""
        if k <= 0:
            return []
        q = as_vector(query)
        found = self._query(
            f"SELECT {summary_columns('s')}, v.embedding <=> %s AS distance "
            "FROM summary_vectors v JOIN summaries s ON s.id = v.summary_id "
            "WHERE v.agent_id = %s ORDER BY v.embedding <=> %s, s.id LIMIT %s",
            (q, self.agent_id(agent), q, k),
        )
        return [
            (rows.summary(agent, row), 1.0 - float(row["distance"]))
            for row in found
            if row["distance"] is not None and not math.isnan(row["distance"])
        ]

    def summaries_between(self, agent: str, start: float, end: float, k: int) -> list[Summary]:
        """The agent's episodes that overlap [start, end), oldest first, at most `k`."""
        found = self._query(
            f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries WHERE agent_id = %s "
            "AND ended_at >= %s AND started_at < %s ORDER BY started_at, id LIMIT %s",
            (self.agent_id(agent), start, end, k),
        )
        return [rows.summary(agent, row) for row in found]

    def messages_between(self, agent: str, start: float, end: float, k: int) -> list[Message]:
        """The agent's messages said in [start, end), oldest first, at most `k`."""
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log WHERE agent_id = %s "
            "AND created_at >= %s AND created_at < %s ORDER BY created_at, id LIMIT %s",
            (self.agent_id(agent), start, end, k),
        )
        return [rows.message(agent, row) for row in found]
