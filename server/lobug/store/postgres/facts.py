"""PostgreSQL's part of the facts: vectors in pgvector columns (HNSW-indexed), a near
duplicate found by the database under the agent's advisory lock, and the bulk insert of
benchmarks and imports by COPY."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lobug.store.household import owned
from lobug.store.models import NewFact, Vector
from lobug.store.postgres.database import PostgresDatabase, as_vector
from lobug.store.sql.facts import SqlFacts


class PostgresFacts(SqlFacts, PostgresDatabase):
    def _vector_matrix(self, stored: Sequence[Any]) -> Vector:
        return np.stack([vector.to_numpy() for vector in stored])

    def _near_duplicates(
        self, conn: Any, agent_id: int, vector: Vector, duplicate_distance: float
    ) -> tuple[int, ...]:
        """Exact: a sequential scan of the agent's vectors is avoided by the HNSW index only
        when the planner picks it."""
        found = conn.execute(
            "SELECT fact_id, embedding <=> ? AS distance FROM fact_vectors "
            "WHERE agent_id = ? ORDER BY embedding <=> ? LIMIT 1",
            (as_vector(vector), agent_id, as_vector(vector)),
        ).fetchall()
        return tuple(
            r["fact_id"]
            for r in found
            if r["distance"] is not None and r["distance"] < duplicate_distance
        )

    def add_facts_bulk(self, agent: str, new: Sequence[tuple[NewFact, Vector]]) -> None:
        """Insert many current facts at once (benchmarks, imports), by COPY."""
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            ids = [
                r["id"]
                for r in conn.execute(
                    "SELECT nextval(pg_get_serial_sequence('facts', 'id')) AS id "
                    "FROM generate_series(1, ?)",
                    (len(new),),
                )
            ]
            cursor = conn.cursor()
            with cursor.copy(
                "COPY facts(id, agent_id, content, fact_type, confidence, created_at, "
                "valid_from, owner_person_id, scope, shareable) FROM STDIN"
            ) as copy:
                for i, (f, _) in zip(ids, new, strict=True):
                    row = (i, agent_id, f.content, f.fact_type, f.confidence, now, now)
                    copy.write_row((*row, *owned(f)))
            with cursor.copy(
                "COPY fact_vectors(fact_id, agent_id, embedding) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["bigint", "bigint", "vector"])
                for i, (_, v) in zip(ids, new, strict=True):
                    copy.write_row((i, agent_id, as_vector(v)))
