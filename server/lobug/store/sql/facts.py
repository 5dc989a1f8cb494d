"""Facts with history: a superseded fact is invalidated and linked to its successor, never
deleted. Current facts have a row in `fact_vectors` (SQLite mirrors them in its in-memory
index, PostgreSQL indexes them with HNSW). Every fact written is recorded in the audit log.

Storing a fact that may supersede a near duplicate is one step for the agent's fact writers
(SQLite's store lock; PostgreSQL's transaction-scoped advisory lock on the agent), so facts
stored at the same time, by several processes too, never duplicate."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lobug.store import errors
from lobug.store.household import EVERYONE, Viewer, owned
from lobug.store.models import EXTRACTION, AddedFact, Fact, NewFact, Vector
from lobug.store.sql import audit, rows
from lobug.store.sql.audit import SqlAudit
from lobug.store.sql.dialect import insert_returning_id, like_pattern, marks
from lobug.store.sql.visibility import visible_facts

# The fields of a new fact written as they are (`_insert_fact`).
NEW_FACT_COPIED = (
    *("content", "fact_type", "subject", "relation", "object", "time_span", "confidence"),
    *("origin", "due_at"),
)


class SqlFacts(SqlAudit):
    def add_fact(
        self, agent: str, fact: NewFact, vector: Vector, *, actor: str = EXTRACTION
    ) -> Fact:
        """Insert a current fact with its vector."""
        self._require_vectors()
        agent_id = self.agent_id(agent)
        with self._writing():
            with self._transaction() as conn:
                now = self._clock()
                fact_id = self._insert_fact(conn, agent_id, fact, vector, now)
                audit.record(
                    conn, now, agent_id, actor, "create", "fact", [fact_id], after=fact.content
                )
            self._index_facts(agent_id, added=[(fact_id, vector)])
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
        step under the agent's fact lock, so facts stored at the same time never duplicate.

        Raises SourcesForgotten when the fact has source messages and all of them were
        forgotten while it was being learned (a forgotten message leaves no fact behind)."""
        self._require_vectors()
        agent_id = self.agent_id(agent)
        with self._writing():
            with self._transaction() as conn:
                self._lock_fact_writers(conn, agent_id)
                self._check_sources_remain(conn, fact.source_message_ids)
                superseded = self._same_owner(
                    conn, fact, self._near_duplicates(conn, agent_id, vector, duplicate_distance)
                )
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
            self._index_facts(agent_id, added=[(fact_id, vector)], removed=superseded)
        return AddedFact(self.get_fact(fact_id), superseded)

    # ------------------------------------------------------------------ engine hooks

    def _require_vectors(self) -> None:
        """Raise StoreError before a fact is written when `bind_embedding()` was not called
        (SQLite: its index is missing); nothing where the engine's own error says so."""

    def _vector_matrix(self, stored: Sequence[Any]) -> Vector:
        """Embedding column values as one float32 matrix, a row each (`_vector_value`'s
        inverse)."""
        raise NotImplementedError

    def _near_duplicates(
        self, conn: Any, agent_id: int, vector: Vector, duplicate_distance: float
    ) -> tuple[int, ...]:
        """The agent's nearest current fact, if closer than `duplicate_distance` (cosine)."""
        raise NotImplementedError

    def _index_facts(
        self,
        agent_id: int,
        added: Sequence[tuple[int, Vector]] = (),
        removed: Sequence[int] = (),
    ) -> None:
        """After the transaction that made facts current (`added`) or not (`removed`)
        committed: the engine's in-memory mirror of the current facts follows (SQLite)."""

    # ------------------------------------------------------------------ statements

    @staticmethod
    def _check_sources_remain(conn: Any, source_ids: Sequence[int]) -> None:
        if not source_ids:
            return
        found = conn.execute(
            f"SELECT COUNT(*) AS n FROM conversation_log WHERE id IN ({marks(source_ids)})",
            list(source_ids),
        ).fetchone()
        if found["n"] == 0:
            raise errors.SourcesForgotten("every source message of this fact was forgotten")

    def _insert_fact(
        self, conn: Any, agent_id: int, fact: NewFact, vector: Vector, now: float
    ) -> int:
        columns = {
            "agent_id": agent_id,
            **{name: getattr(fact, name) for name in NEW_FACT_COPIED},
            "source_message_ids": json.dumps(list(fact.source_message_ids)),
            "created_at": now,
            "valid_from": now,
            **dict(zip(("owner_person_id", "scope", "shareable"), owned(fact), strict=True)),
        }
        sql = insert_returning_id("facts", list(columns))
        fact_id = int(conn.execute(sql, tuple(columns.values())).fetchone()["id"])
        conn.execute(
            "INSERT INTO fact_vectors(fact_id, agent_id, embedding) VALUES (?, ?, ?)",
            (fact_id, agent_id, self._vector_value(vector)),
        )
        return fact_id

    @staticmethod
    def _same_owner(conn: Any, fact: NewFact, near: Sequence[int]) -> tuple[int, ...]:
        """The near duplicates that are the same person's in the same scope: one person's
        fact never replaces another's, nor a private one a household one."""
        if not near:
            return ()
        found = conn.execute(
            f"SELECT id, owner_person_id, scope FROM facts WHERE id IN ({marks(near)})",
            list(near),
        ).fetchall()
        return tuple(
            row["id"]
            for row in found
            if row["owner_person_id"] == fact.owner_person_id and row["scope"] == fact.scope
        )

    @staticmethod
    def _supersede(conn: Any, old_ids: Sequence[int], new_id: int, now: float) -> None:
        for old_id in old_ids:
            conn.execute(
                "UPDATE facts SET invalidated_at = ?, superseded_by = ? "
                "WHERE id = ? AND invalidated_at IS NULL",
                (now, new_id, old_id),
            )
            conn.execute("DELETE FROM fact_vectors WHERE fact_id = ?", (old_id,))

    # ------------------------------------------------------------------ reads

    def _facts_where(self, condition: str, params: Sequence[Any]) -> list[Fact]:
        """The facts that `condition` (on `facts f` joined to `agents a`, with its ORDER BY)
        picks."""
        found = self._query(
            f"SELECT {rows.FACT_COLUMNS} FROM {rows.FACTS_JOIN_AGENTS} WHERE {condition}", params
        )
        return [rows.fact(row) for row in found]

    def get_fact(self, fact_id: int) -> Fact:
        found = self._facts_where("f.id = ?", (fact_id,))
        if not found:
            raise KeyError(fact_id)
        return found[0]

    def agent_fact(self, agent: str, fact_id: int) -> Fact:
        """One of the agent's facts (any version); FactNotFound when it has none by this id."""
        found = self._facts_where("f.id = ? AND f.agent_id = ?", (fact_id, self.agent_id(agent)))
        if not found:
            raise errors.FactNotFound(f"agent {agent!r} has no fact {fact_id}")
        return found[0]

    def facts(self, agent: str) -> list[Fact]:
        """The agent's current facts, oldest first."""
        return self._facts_where(
            "f.agent_id = ? AND f.invalidated_at IS NULL ORDER BY f.id", (self.agent_id(agent),)
        )

    def facts_by_ids(self, ids: Sequence[int], viewer: Viewer = EVERYONE) -> dict[int, Fact]:
        """The facts among `ids` that `viewer` may see."""
        if not ids:
            return {}
        visible, shown = visible_facts(viewer)
        found = self._facts_where(f"f.id IN ({marks(ids)}){visible}", [*ids, *shown])
        return {fact.id: fact for fact in found}

    def fact_texts_containing(self, agent: str, words: Sequence[str]) -> list[str]:
        """The texts of the agent's current facts holding any of `words`, in any case (ASCII
        letters on SQLite): a scan in the database, not a row object per fact."""
        if not words:
            return []
        matches = " OR ".join([f"content {self.dialect.ilike} ? ESCAPE '\\'"] * len(words))
        found = self._query(
            "SELECT content FROM facts WHERE agent_id = ? AND invalidated_at IS NULL "
            f"AND ({matches})",
            (self.agent_id(agent), *(like_pattern(word) for word in words)),
        )
        return [row["content"] for row in found]

    def recent_facts(self, agent: str, limit: int) -> list[Fact]:
        return self._facts_where(
            "f.agent_id = ? AND f.invalidated_at IS NULL ORDER BY f.id DESC LIMIT ?",
            (self.agent_id(agent), limit),
        )

    def count_facts(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM facts WHERE agent_id = ? AND invalidated_at IS NULL",
            (self.agent_id(agent),),
        )
