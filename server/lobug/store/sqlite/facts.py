"""SQLite's part of the facts: current facts mirrored in the in-memory `VectorIndex` (a near
duplicate is found there, under the store lock), vectors stored as float32 blobs, and the bulk
insert of benchmarks and imports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lobug.store.household import owned
from lobug.store.models import NewFact, Vector
from lobug.store.sql.facts import SqlFacts
from lobug.store.sqlite.database import SQLiteDatabase, vector_blob


class SQLiteFacts(SqlFacts, SQLiteDatabase):
    def _require_vectors(self) -> None:
        self._require_index()

    def _vector_matrix(self, stored: Sequence[Any]) -> Vector:
        return np.frombuffer(b"".join(stored), dtype=np.float32).reshape(len(stored), -1)

    def _near_duplicates(
        self, conn: Any, agent_id: int, vector: Vector, duplicate_distance: float
    ) -> tuple[int, ...]:
        """Exact, from the in-memory index (the store lock is held)."""
        nearest = self._require_index().search(agent_id, vector, 1)
        return tuple(i for i, sim in nearest if 1.0 - sim < duplicate_distance)

    def _index_facts(
        self,
        agent_id: int,
        added: Sequence[tuple[int, Vector]] = (),
        removed: Sequence[int] = (),
    ) -> None:
        if not added and not removed:
            return
        index = self._require_index()
        for old_id in removed:
            index.remove(old_id)
        for fact_id, vector in added:
            index.add(agent_id, fact_id, vector)

    def add_facts_bulk(self, agent: str, new: Sequence[tuple[NewFact, Vector]]) -> None:
        """Insert many current facts at once (benchmarks, imports)."""
        index = self._require_index()
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._lock:
            with self._transaction() as conn:
                start = conn.execute("SELECT COALESCE(MAX(id), 0) AS id FROM facts").fetchone()
                ids = list(range(start["id"] + 1, start["id"] + 1 + len(new)))
                conn.executemany(
                    "INSERT INTO facts(id, agent_id, content, fact_type, confidence, "
                    "created_at, valid_from, owner_person_id, scope, shareable) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (i, agent_id, f.content, f.fact_type, f.confidence, now, now, *owned(f))
                        for i, (f, _) in zip(ids, new, strict=True)
                    ],
                )
                conn.executemany(
                    "INSERT INTO fact_vectors(fact_id, agent_id, embedding) VALUES (?, ?, ?)",
                    [(i, agent_id, vector_blob(v)) for i, (_, v) in zip(ids, new, strict=True)],
                )
            for i, (_, vector) in zip(ids, new, strict=True):
                index.add(agent_id, i, vector)
