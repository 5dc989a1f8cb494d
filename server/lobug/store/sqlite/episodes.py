"""Episodes: summaries with the span of time they cover, found by their words (FTS5 BM25),
their embedding (a scan: an agent has one episode per 20 messages or so) or their dates; and
the messages of a span of time."""

from __future__ import annotations

import numpy as np

from lobug.store.models import Message, Summary, Vector
from lobug.store.sqlite import rows
from lobug.store.sqlite.fulltext import fts_query
from lobug.store.sqlite.summaries import SQLiteSummaries


class SQLiteEpisodes(SQLiteSummaries):
    def keyword_summaries(self, agent: str, query: str, k: int) -> list[tuple[Summary, float]]:
        """The agent's episodes matching any word of `query`, best BM25 first (score > 0)."""
        match = fts_query(query)
        if not match:
            return []
        found = self._query(
            f"SELECT {rows.summary_columns('s')}, -bm25(summaries_fts) AS score "
            "FROM summaries_fts JOIN summaries s ON s.id = summaries_fts.rowid "
            "WHERE summaries_fts MATCH ? AND s.agent_id = ? ORDER BY bm25(summaries_fts) LIMIT ?",
            (match, self.agent_id(agent), k),
        )
        return [(rows.summary(agent, row), float(row["score"])) for row in found]

    def search_summaries(self, agent: str, query: Vector, k: int) -> list[tuple[Summary, float]]:
        """The agent's embedded episodes nearest to `query` (cosine), best first."""
        found = self._query(
            f"SELECT {rows.summary_columns('s')}, v.embedding FROM summary_vectors v "
            "JOIN summaries s ON s.id = v.summary_id WHERE s.agent_id = ?",
            (self.agent_id(agent),),
        )
        if not found or k <= 0:
            return []
        matrix = np.frombuffer(b"".join(row["embedding"] for row in found), dtype=np.float32)
        q = np.asarray(query, dtype=np.float32)
        scores = matrix.reshape(len(found), -1) @ q / (np.linalg.norm(q) or 1.0)
        best = np.argsort(-scores, kind="stable")[:k]
        return [(rows.summary(agent, found[i]), float(scores[i])) for i in best]

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
