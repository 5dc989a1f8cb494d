"""SQLite's part of the summaries: an episode's embedding as a float32 blob."""

from __future__ import annotations

from typing import Any

from lobug.store.models import Vector
from lobug.store.sql.summaries import SqlSummaries
from lobug.store.sqlite.audit import SQLiteAudit
from lobug.store.sqlite.database import vector_blob


class SQLiteSummaries(SqlSummaries, SQLiteAudit):
    def _store_summary_vector(
        self, conn: Any, summary_id: int, agent_id: int, vector: Vector
    ) -> None:
        conn.execute(
            "INSERT INTO summary_vectors(summary_id, embedding) VALUES (?, ?)",
            (summary_id, vector_blob(vector)),
        )
