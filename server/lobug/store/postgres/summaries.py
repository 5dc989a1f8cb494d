"""PostgreSQL's part of the summaries: an episode's embedding as a pgvector, with its agent."""

from __future__ import annotations

from typing import Any

from lobug.store.models import Vector
from lobug.store.postgres.audit import PostgresAudit
from lobug.store.postgres.database import as_vector
from lobug.store.sql.summaries import SqlSummaries


class PostgresSummaries(SqlSummaries, PostgresAudit):
    def _store_summary_vector(
        self, conn: Any, summary_id: int, agent_id: int, vector: Vector
    ) -> None:
        conn.execute(
            "INSERT INTO summary_vectors(summary_id, agent_id, embedding) VALUES (?, ?, ?)",
            (summary_id, agent_id, as_vector(vector)),
        )
