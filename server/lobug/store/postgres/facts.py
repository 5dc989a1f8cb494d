"""Facts with history: a superseded fact is invalidated and linked to its successor, never
deleted. Current facts have a row in `fact_vectors` (HNSW-indexed). Every fact written is
recorded in the audit log.

Storing a fact that may supersede a near duplicate takes a transaction-scoped advisory lock on
the agent, so facts stored at the same time by several processes never duplicate."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lobug.store import errors
from lobug.store.models import EXTRACTION, AddedFact, Fact, NewFact, Vector
from lobug.store.postgres.audit import PostgresAudit
from lobug.store.postgres.database import FACT_LOCK
from lobug.store.postgres.log import as_vector
from lobug.store.sql import audit, rows
from lobug.store.sql.dialect import like_pattern


class PostgresFacts(PostgresAudit):
    def add_fact(
        self, agent: str, fact: NewFact, vector: Vector, *, actor: str = EXTRACTION
    ) -> Fact:
        """Insert a current fact with its vector."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            now = self._clock()
            fact_id = self._insert_fact(conn, agent_id, fact, vector, now)
            audit.record(
                conn, now, agent_id, actor, "create", "fact", [fact_id], after=fact.content
            )
        return self.get_fact(fact_id)

    def add_fact_superseding_duplicate(
        self,
        agent: str,
        fact: NewFact,
        vector: Vector,
        *,
        duplicate_distance: float,
        actor: str = EXTRACTION,
    ) -> AddedFact:
        """Insert a current fact; the nearest current fact, if closer than
        `duplicate_distance` (cosine), becomes its history. The check and the write are one
        transaction under the agent's advisory lock.

        Raises SourcesForgotten when the fact has source messages and all of them were
        forgotten while it was being learned (a forgotten message leaves no fact behind)."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (FACT_LOCK, agent_id))
            self._check_sources_remain(conn, fact.source_message_ids)
            superseded = self._near_duplicates(conn, agent_id, vector, duplicate_distance)
            now = self._clock()
            fact_id = self._insert_fact(conn, agent_id, fact, vector, now)
            self._supersede(conn, superseded, fact_id, now)
            audit.record(
                conn,
                now,
                agent_id,
                actor,
                "create",
                "fact",
                [fact_id, *superseded],
                after=fact.content,
                detail={"superseded": list(superseded)} if superseded else None,
            )
        return AddedFact(self.get_fact(fact_id), superseded)

    @staticmethod
    def _near_duplicates(
        conn: Any, agent_id: int, vector: Vector, duplicate_distance: float
    ) -> tuple[int, ...]:
        """The nearest current fact of the agent, if closer than `duplicate_distance`
        (exact: a sequential scan of the agent's vectors is avoided by the HNSW index only
        when the planner picks it)."""
        found = conn.execute(
            "SELECT fact_id, embedding <=> %s AS distance FROM fact_vectors "
            "WHERE agent_id = %s ORDER BY embedding <=> %s LIMIT 1",
            (as_vector(vector), agent_id, as_vector(vector)),
        ).fetchall()
        return tuple(
            r["fact_id"]
            for r in found
            if r["distance"] is not None and r["distance"] < duplicate_distance
        )

    @staticmethod
    def _check_sources_remain(conn: Any, source_ids: Sequence[int]) -> None:
        if not source_ids:
            return
        found = conn.execute(
            "SELECT COUNT(*) AS n FROM conversation_log WHERE id = ANY(%s)", (list(source_ids),)
        ).fetchone()
        if found["n"] == 0:
            raise errors.SourcesForgotten("every source message of this fact was forgotten")

    @staticmethod
    def _insert_fact(conn: Any, agent_id: int, fact: NewFact, vector: Vector, now: float) -> int:
        row = conn.execute(
            "INSERT INTO facts(agent_id, content, fact_type, subject, relation, object, "
            "time_span, confidence, source_message_ids, created_at, valid_from, origin, due_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                agent_id,
                fact.content,
                fact.fact_type,
                fact.subject,
                fact.relation,
                fact.object,
                fact.time_span,
                fact.confidence,
                json.dumps(list(fact.source_message_ids)),
                now,
                now,
                fact.origin,
                fact.due_at,
            ),
        ).fetchone()
        conn.execute(
            "INSERT INTO fact_vectors(fact_id, agent_id, embedding) VALUES (%s, %s, %s)",
            (row["id"], agent_id, as_vector(vector)),
        )
        return int(row["id"])

    @staticmethod
    def _supersede(conn: Any, old_ids: Sequence[int], new_id: int, now: float) -> None:
        if not old_ids:
            return
        conn.execute(
            "UPDATE facts SET invalidated_at = %s, superseded_by = %s "
            "WHERE id = ANY(%s) AND invalidated_at IS NULL",
            (now, new_id, list(old_ids)),
        )
        conn.execute("DELETE FROM fact_vectors WHERE fact_id = ANY(%s)", (list(old_ids),))

    def add_facts_bulk(self, agent: str, new: Sequence[tuple[NewFact, Vector]]) -> None:
        """Insert many current facts at once (benchmarks, imports), by COPY."""
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            ids = [
                r["id"]
                for r in conn.execute(
                    "SELECT nextval(pg_get_serial_sequence('facts', 'id')) AS id "
                    "FROM generate_series(1, %s)",
                    (len(new),),
                )
            ]
            cursor = conn.cursor()
            with cursor.copy(
                "COPY facts(id, agent_id, content, fact_type, confidence, created_at, "
                "valid_from) FROM STDIN"
            ) as copy:
                for i, (f, _) in zip(ids, new, strict=True):
                    copy.write_row((i, agent_id, f.content, f.fact_type, f.confidence, now, now))
            with cursor.copy(
                "COPY fact_vectors(fact_id, agent_id, embedding) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["bigint", "bigint", "vector"])
                for i, (_, v) in zip(ids, new, strict=True):
                    copy.write_row((i, agent_id, as_vector(v)))

    def get_fact(self, fact_id: int) -> Fact:
        found = self._query(
            f"SELECT {rows.FACT_COLUMNS} FROM {rows.FACTS_JOIN_AGENTS} WHERE f.id = %s",
            (fact_id,),
        )
        if not found:
            raise KeyError(fact_id)
        return rows.fact(found[0])

    def agent_fact(self, agent: str, fact_id: int) -> Fact:
        """One of the agent's facts (any version); FactNotFound when it has none by this id."""
        found = self._query(
            f"SELECT {rows.FACT_COLUMNS} FROM {rows.FACTS_JOIN_AGENTS} "
            "WHERE f.id = %s AND f.agent_id = %s",
            (fact_id, self.agent_id(agent)),
        )
        if not found:
            raise errors.FactNotFound(f"agent {agent!r} has no fact {fact_id}")
        return rows.fact(found[0])

    def facts(self, agent: str) -> list[Fact]:
        """The agent's current facts, oldest first."""
        return self._facts_where(agent, "AND f.invalidated_at IS NULL")

    def facts_with_history(self, agent: str) -> list[Fact]:
        """The agent's facts, superseded ones included, oldest first."""
        return self._facts_where(agent, "")

    def _facts_where(self, agent: str, condition: str) -> list[Fact]:
        found = self._query(
            f"SELECT {rows.FACT_COLUMNS} FROM {rows.FACTS_JOIN_AGENTS} "
            f"WHERE f.agent_id = %s {condition} ORDER BY f.id",
            (self.agent_id(agent),),
        )
        return [rows.fact(row) for row in found]

    def facts_by_ids(self, ids: Sequence[int]) -> dict[int, Fact]:
        if not ids:
            return {}
        found = self._query(
            f"SELECT {rows.FACT_COLUMNS} FROM {rows.FACTS_JOIN_AGENTS} WHERE f.id = ANY(%s)",
            (list(ids),),
        )
        return {row["id"]: rows.fact(row) for row in found}

    def fact_texts_containing(self, agent: str, words: Sequence[str]) -> list[str]:
        """The texts of the agent's current facts holding any of `words`, in any case."""
        if not words:
            return []
        found = self._query(
            "SELECT content FROM facts WHERE agent_id = %s AND invalidated_at IS NULL "
            "AND content ILIKE ANY(%s)",
            (self.agent_id(agent), [like_pattern(word) for word in words]),
        )
        return [row["content"] for row in found]

    def recent_facts(self, agent: str, limit: int) -> list[Fact]:
        found = self._query(
            f"SELECT {rows.FACT_COLUMNS} FROM {rows.FACTS_JOIN_AGENTS} "
            "WHERE f.agent_id = %s AND f.invalidated_at IS NULL ORDER BY f.id DESC LIMIT %s",
            (self.agent_id(agent), limit),
        )
        return [rows.fact(row) for row in found]

    def count_facts(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM facts WHERE agent_id = %s AND invalidated_at IS NULL",
            (self.agent_id(agent),),
        )
