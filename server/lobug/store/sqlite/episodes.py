"""SQLite's part of the episodes: an episode's embedding kept as a float32 blob; found by their
words (FTS5 BM25) or their embedding; read with their vectors to build topics.

An agent has one episode per 20 messages or so, so their vectors are compared by an exact
scan of a matrix kept in memory per agent: reloaded when the agent's episodes change (their
count or newest id) or the embedding model does (a reindex); only the winning rows are read
back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from lobug.store.models import Summary, Vector
from lobug.store.sql import rows
from lobug.store.sql.dialect import marks
from lobug.store.sql.episodes import SqlEpisodes
from lobug.store.sqlite.database import SQLiteDatabase, vector_blob
from lobug.store.sqlite.fulltext import fts_query

# (count, newest id, embedding model) of an agent's episodes; the embedded ones' ids, matrix.
EpisodeMatrix = tuple[tuple[int, int, str], Any, Vector]


class SQLiteEpisodes(SqlEpisodes, SQLiteDatabase):
    def __init__(self, path: Path | str, **kwargs: Any) -> None:
        self._episode_matrices: dict[int, EpisodeMatrix] = {}
        super().__init__(path, **kwargs)

    def _store_summary_vector(
        self, conn: Any, summary_id: int, agent_id: int, vector: Vector
    ) -> None:
        conn.execute(
            "INSERT INTO summary_vectors(summary_id, embedding) VALUES (?, ?)",
            (summary_id, vector_blob(vector)),
        )

    def _episode_matrix(self, agent_id: int) -> tuple[Any, Vector]:
        # An episode gets its vector as it is written, and loses it as it is deleted: the
        # agent's summaries (count, newest id; an index scan) say when to reload.
        stamp_row = self._query(
            "SELECT COUNT(*) AS n, MAX(id) AS top, (SELECT value FROM store_meta "
            "WHERE key = 'embedding_model') AS model FROM summaries WHERE agent_id = ?",
            (agent_id,),
        )[0]
        stamp = (int(stamp_row["n"]), int(stamp_row["top"] or 0), str(stamp_row["model"]))
        cached = self._episode_matrices.get(agent_id)
        if cached is not None and cached[0] == stamp:
            return cached[1], cached[2]
        found = self._query(
            "SELECT v.summary_id, v.embedding FROM summary_vectors v "
            "JOIN summaries s ON s.id = v.summary_id WHERE s.agent_id = ? ORDER BY v.summary_id",
            (agent_id,),
        )
        ids = np.array([row["summary_id"] for row in found], dtype=np.int64)
        blobs = b"".join(row["embedding"] for row in found)
        matrix = np.frombuffer(blobs, dtype=np.float32).reshape(len(found), -1 if found else 0)
        self._episode_matrices[agent_id] = (stamp, ids, matrix)
        return ids, matrix

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
        ids, matrix = self._episode_matrix(self.agent_id(agent))
        if not len(ids) or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        scores = matrix @ q / (np.linalg.norm(q) or 1.0)
        top = np.argpartition(-scores, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
        best = sorted(top.tolist(), key=lambda i: (-scores[i], ids[i]))
        winners = [int(ids[i]) for i in best]
        found = self._query(
            f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries WHERE id IN ({marks(winners)})",
            winners,
        )
        by_id = {row["id"]: rows.summary(agent, row) for row in found}
        return [(by_id[int(ids[i])], float(scores[i])) for i in best if int(ids[i]) in by_id]

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
