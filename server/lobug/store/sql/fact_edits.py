"""What a person does to facts: list them, follow a fact's versions, correct, pin, score,
forget and purge. Each change is one transaction with its audit row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lobug.store import errors
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import Fact, FactFlags, FactQuery, NewFact, Vector
from lobug.store.sql import audit, rows
from lobug.store.sql.dialect import marks
from lobug.store.sql.facts import SqlFacts
from lobug.store.sql.topics import drop_topics_holding
from lobug.store.sql.visibility import visible_facts

# Every version linked to a fact through `superseded_by`, in either direction.
CHAIN_SQL = """
WITH RECURSIVE
  older(id) AS (SELECT CAST(? AS BIGINT)
                UNION SELECT f.id FROM facts f JOIN older o ON f.superseded_by = o.id),
  newer(id) AS (SELECT CAST(? AS BIGINT)
                UNION SELECT f.superseded_by FROM facts f JOIN newer n ON f.id = n.id
                WHERE f.superseded_by IS NOT NULL)
SELECT id FROM older UNION SELECT id FROM newer
"""


def _query_condition(query: FactQuery) -> tuple[str, list[Any]]:
    condition, params = "", list[Any]()
    if not query.include_history:
        condition += " AND f.invalidated_at IS NULL"
    if query.fact_type is not None:
        condition += " AND f.fact_type = ?"
        params.append(query.fact_type)
    if query.pinned is not None:
        condition += " AND f.pinned = ?"
        params.append(int(query.pinned))
    if query.owner_person_id is not None:
        condition += " AND f.owner_person_id = ?"
        params.append(query.owner_person_id)
    visible, shown = visible_facts(query.viewer)
    return condition + visible, params + shown


class SqlFactEdits(SqlFacts):
    def list_facts(self, agent: str, query: FactQuery) -> tuple[list[Fact], int]:
        """One page of the agent's facts (newest first) and how many match in all."""
        condition, params = _query_condition(query)
        agent_id = self.agent_id(agent)
        found = self._facts_where(
            f"f.agent_id = ? {condition} ORDER BY f.id DESC LIMIT ? OFFSET ?",
            (agent_id, *params, query.limit, query.offset),
        )
        total = self._count(
            f"SELECT COUNT(*) AS n FROM facts f WHERE f.agent_id = ? {condition}",
            (agent_id, *params),
        )
        return found, total

    def pinned_facts(self, agent: str, viewer: Viewer = EVERYONE) -> list[Fact]:
        """The agent's current pinned facts `viewer` may see, newest first."""
        visible, shown = visible_facts(viewer)
        return self._facts_where(
            f"f.agent_id = ? AND f.pinned = 1 AND f.invalidated_at IS NULL{visible} "
            "ORDER BY f.id DESC",
            (self.agent_id(agent), *shown),
        )

    def fact_versions(self, agent: str, fact_id: int) -> list[Fact]:
        """Every version of the fact, oldest first (FactNotFound for another agent's id)."""
        self.agent_fact(agent, fact_id)
        ids = [row["id"] for row in self._query(CHAIN_SQL, (fact_id, fact_id))]
        return sorted(self.facts_by_ids(ids).values(), key=lambda fact: fact.id)

    def correct_fact(
        self, agent: str, fact_id: int, fact: NewFact, vector: Vector, *, actor: str
    ) -> Fact:
        """Store `fact` as the new version of the current fact `fact_id` (its pin, score,
        owner and scope carry over); FactNotCurrent when that fact was superseded or forgotten."""
        self._require_vectors()
        agent_id = self.agent_id(agent)
        with self._writing():
            with self._transaction() as conn:
                old = self._lock_current_fact(conn, agent, agent_id, fact_id)
                now = self._clock()
                new_id = self._insert_fact(conn, agent_id, fact, vector, now)
                conn.execute(
                    "UPDATE facts SET pinned = ?, user_score = ?, owner_person_id = ?, "
                    "scope = ?, shareable = ? WHERE id = ?",
                    (
                        int(old.pinned),
                        old.user_score,
                        old.owner_person_id,
                        old.scope,
                        int(old.shareable),
                        new_id,
                    ),
                )
                self._supersede(conn, [fact_id], new_id, now)
                audit.record(
                    conn,
                    now,
                    agent_id,
                    actor,
                    "correct",
                    "fact",
                    [fact_id, new_id],
                    before=old.content,
                    after=fact.content,
                )
            self._index_facts(agent_id, added=[(new_id, vector)], removed=[fact_id])
        return self.get_fact(new_id)

    def set_fact_flags(self, agent: str, fact_id: int, flags: FactFlags, *, actor: str) -> Fact:
        """Pin, unpin or score the current fact `fact_id`."""
        changes = flags.assignments()
        if flags.user_score is not None and not 0 <= flags.user_score <= 10:
            raise errors.StoreError("user score must be between 0 and 10")
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            old = self._lock_current_fact(conn, agent, agent_id, fact_id)
            if changes:
                sets = ", ".join(f"{column} = ?" for column in changes)
                conn.execute(f"UPDATE facts SET {sets} WHERE id = ?", (*changes.values(), fact_id))
                audit.record(
                    conn,
                    self._clock(),
                    agent_id,
                    actor,
                    "flag",
                    "fact",
                    [fact_id],
                    detail={"before": flags_of(old), "after": changes},
                )
        return self.get_fact(fact_id)

    def forget_fact(self, agent: str, fact_id: int, *, actor: str, purge: bool = False) -> Fact:
        """Forget the fact and every version of it: it leaves every prompt and search at
        once. With `purge` the text of all versions is erased too (content-free tombstones
        stay, and the audit log's copies of the text are scrubbed)."""
        versions = self.fact_versions(agent, fact_id)
        ids = [fact.id for fact in versions]
        agent_id = self.agent_id(agent)
        with self._writing():
            with self._transaction() as conn:
                now = self._clock()
                self._forget_rows(conn, ids, now)
                drop_topics_holding(conn, "fact", ids)
                current = [f for f in versions if f.is_current]
                if purge:
                    self._purge_rows(conn, ids, now)
                audit.record(
                    conn,
                    now,
                    agent_id,
                    actor,
                    "purge" if purge else "forget",
                    "fact",
                    ids,
                    before=None if purge or not current else current[0].content,
                    detail={"versions": len(ids)},
                )
            self._index_facts(agent_id, removed=[f.id for f in current])
        if purge:
            self._erase_free_pages()
        return self.get_fact(fact_id)

    def _lock_current_fact(self, conn: Any, agent: str, agent_id: int, fact_id: int) -> Fact:
        """The agent's current fact `fact_id`, its row locked until the transaction ends
        where rows lock (so two processes never both correct the same version)."""
        found = conn.execute(
            f"SELECT {rows.FACT_COLUMNS} FROM {rows.FACTS_JOIN_AGENTS} "
            f"WHERE f.id = ? AND f.agent_id = ?{self.dialect.lock_rows('f')}",
            (fact_id, agent_id),
        ).fetchone()
        if found is None:
            raise errors.FactNotFound(f"agent {agent!r} has no fact {fact_id}")
        fact = rows.fact(found)
        if not fact.is_current:
            raise errors.FactNotCurrent(
                f"fact {fact_id} was superseded or forgotten; change its current version"
            )
        return fact

    @staticmethod
    def _forget_rows(conn: Any, ids: Sequence[int], now: float) -> None:
        conn.execute(
            "UPDATE facts SET forgotten_at = COALESCE(forgotten_at, ?), "
            f"invalidated_at = COALESCE(invalidated_at, ?) WHERE id IN ({marks(ids)})",
            (now, now, *ids),
        )
        conn.execute(f"DELETE FROM fact_vectors WHERE fact_id IN ({marks(ids)})", list(ids))

    def _purge_rows(self, conn: Any, ids: Sequence[int], now: float) -> None:
        conn.execute(
            "UPDATE facts SET content = '', subject = NULL, relation = NULL, object = NULL, "
            "time_span = NULL, purged_at = COALESCE(purged_at, ?) "
            f"WHERE id IN ({marks(ids)})",
            (now, *ids),
        )
        # A dream keeps a retired fact's vector for its undo: derived from the text, it goes.
        conn.execute(f"DELETE FROM dream_vectors WHERE fact_id IN ({marks(ids)})", list(ids))
        audit.scrub(conn, self.dialect, "fact", ids)


def flags_of(fact: Fact) -> dict[str, Any]:
    return {"pinned": int(fact.pinned), "user_score": fact.user_score}
