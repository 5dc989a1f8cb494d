"""Dreams: a consolidation of an agent's memory applied in one transaction (facts retired,
base memory rewritten, every change in the audit log under actor `dream`, the diary stored),
listed, and undone by id (retired facts current again with their vectors, the base memory
written back). Both take the agent's fact lock, as forgetting does."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from lobug.store import errors
from lobug.store.models import DREAM, Derived, Dream, DreamChange, Fact, Vector
from lobug.store.sql import audit, rows
from lobug.store.sql.dialect import marks
from lobug.store.sql.episodes import SqlEpisodes
from lobug.store.sql.facts import SqlFacts

# The newest message, audit row and summary of an agent (`_watermark` of the row).
WATERMARK_SQL = (
    "SELECT (SELECT MAX(id) FROM conversation_log WHERE agent_id = ?) AS messages, "
    "(SELECT MAX(id) FROM audit_log WHERE agent_id = ?) AS audit, "
    "(SELECT MAX(id) FROM summaries WHERE agent_id = ?) AS summaries"
)


def _watermark(found: Any) -> str:
    return f"{found['messages'] or 0}:{found['audit'] or 0}:{found['summaries'] or 0}"


class SqlDreams(SqlEpisodes, SqlFacts):
    def current_fact_vectors(self, agent: str) -> tuple[list[Fact], Vector]:
        """The agent's current facts, oldest first, and their vectors as one matrix (a row
        each, in the same order)."""
        found = self._query(
            "SELECT fact_id, embedding FROM fact_vectors WHERE agent_id = ?",
            (self.agent_id(agent),),
        )
        by_id = {int(row["fact_id"]): row["embedding"] for row in found}
        facts = sorted(self.facts_by_ids(list(by_id)).values(), key=lambda f: f.id)
        if not facts:
            return [], np.zeros((0, 0), dtype=np.float32)
        return facts, self._vector_matrix([by_id[f.id] for f in facts])

    def memory_watermark(self, agent: str) -> str:
        """What an agent's memory holds, in brief: it changes whenever a message, fact,
        summary or audited change is added."""
        agent_id = self.agent_id(agent)
        return _watermark(self._query(WATERMARK_SQL, (agent_id, agent_id, agent_id))[0])

    def apply_dream(
        self,
        agent: str,
        changes: Sequence[DreamChange],
        base_memory: str | None,
        diary: str,
        *,
        started_at: float,
        made_by: str | None = None,
        dropped_sentences: int = 0,
    ) -> Dream:
        """Retire the facts `changes` name (those still current), write `base_memory` when
        given (made as `made_by` says, `dropped_sentences` left out of it), and store the
        dream with its diary: one transaction, each change audited."""
        self._require_vectors()
        agent_id = self.agent_id(agent)
        with self._writing():
            with self._transaction() as conn:
                self._lock_fact_writers(conn, agent_id)
                now = self._clock()
                before = conn.execute(
                    "SELECT content FROM base_memory WHERE agent_id = ?", (agent_id,)
                ).fetchone()
                dream_id = conn.execute(
                    "INSERT INTO dreams(agent_id, started_at, finished_at, diary, watermark) "
                    "VALUES (?, ?, ?, ?, '') RETURNING id",
                    (agent_id, started_at, now, diary),
                ).fetchone()["id"]
                applied = self._retire(conn, agent_id, dream_id, changes, now)
                if base_memory is not None:
                    document = Derived(base_memory, made_by or "", dropped_sentences)
                    self._write_base_memory(conn, agent_id, document, DREAM)
                replaced = (
                    (before["content"] if before else "") if base_memory is not None else None
                )
                conn.execute(
                    "UPDATE dreams SET changes = ?, base_memory_before = ? WHERE id = ?",
                    (json.dumps([asdict(c) for c in applied]), replaced, dream_id),
                )
                # The memory the dream leaves behind, its own audit rows included.
                found = conn.execute(WATERMARK_SQL, (agent_id, agent_id, agent_id)).fetchone()
                conn.execute(
                    "UPDATE dreams SET watermark = ? WHERE id = ?", (_watermark(found), dream_id)
                )
            self._index_facts(agent_id, removed=[change.fact_id for change in applied])
        return self.dream(agent, dream_id)

    def _retire(
        self,
        conn: Any,
        agent_id: int,
        dream_id: int,
        changes: Sequence[DreamChange],
        now: float,
    ) -> list[DreamChange]:
        applied = []
        for change in changes:
            row = conn.execute(
                "SELECT f.content, v.embedding FROM facts f JOIN fact_vectors v "
                "ON v.fact_id = f.id WHERE f.id = ? AND f.agent_id = ? "
                f"AND f.invalidated_at IS NULL AND f.pinned = 0{self.dialect.lock_rows('f')}",
                (change.fact_id, agent_id),
            ).fetchone()
            if row is None:
                continue  # no longer current, or pinned since the dream was planned
            conn.execute(
                "INSERT INTO dream_vectors(dream_id, fact_id, embedding) VALUES (?, ?, ?)",
                (dream_id, change.fact_id, row["embedding"]),
            )
            conn.execute(
                "UPDATE facts SET invalidated_at = ?, superseded_by = ? WHERE id = ?",
                (now, change.kept_id, change.fact_id),
            )
            conn.execute("DELETE FROM fact_vectors WHERE fact_id = ?", (change.fact_id,))
            ids = [change.fact_id] if change.kept_id is None else [change.fact_id, change.kept_id]
            audit.record(
                conn,
                now,
                agent_id,
                DREAM,
                change.action,
                "fact",
                ids,
                before=row["content"],
                detail={"dream": dream_id, "reason": change.reason},
            )
            applied.append(change)
        return applied

    def dreams(self, agent: str, limit: int = 20) -> list[Dream]:
        """The agent's dreams, newest first."""
        found = self._query(
            f"SELECT {rows.DREAM_COLUMNS} FROM dreams WHERE agent_id = ? ORDER BY id DESC LIMIT ?",
            (self.agent_id(agent), limit),
        )
        return [rows.dream(agent, row) for row in found]

    def dream(self, agent: str, dream_id: int) -> Dream:
        found = self._query(
            f"SELECT {rows.DREAM_COLUMNS} FROM dreams WHERE id = ? AND agent_id = ?",
            (dream_id, self.agent_id(agent)),
        )
        if not found:
            raise errors.DreamNotFound(f"agent {agent!r} has no dream {dream_id}")
        return rows.dream(agent, found[0])

    def undo_dream(self, agent: str, dream_id: int, *, actor: str) -> Dream:
        """Make the facts the dream retired current again (those not forgotten since) and
        write back the base memory it replaced; DreamNotFound, or DreamUndone when it was
        undone already."""
        agent_id = self.agent_id(agent)
        with self._writing():
            with self._transaction() as conn:
                self._lock_fact_writers(conn, agent_id)
                dream = self.dream(agent, dream_id)
                if dream.undone_at is not None:
                    raise errors.DreamUndone(f"dream {dream_id} was undone already")
                self._require_vectors()
                now = self._clock()
                restored = self._restore(conn, agent_id, dream, now, actor)
                if dream.base_memory_before is not None:
                    before = self._version_before(conn, agent_id, dream)
                    self._write_base_memory(conn, agent_id, before, actor)
                conn.execute("UPDATE dreams SET undone_at = ? WHERE id = ?", (now, dream_id))
            if restored:
                vectors = self._vector_matrix([embedding for _, embedding in restored])
                self._index_facts(
                    agent_id, added=[(i, v) for (i, _), v in zip(restored, vectors, strict=True)]
                )
        return self.dream(agent, dream_id)

    @staticmethod
    def _version_before(conn: Any, agent_id: int, dream: Dream) -> Derived:
        """The base memory the dream replaced, made as its version said (None: unknown)."""
        content = dream.base_memory_before or ""
        found = conn.execute(
            "SELECT made_by, dropped_sentences FROM base_memory_versions WHERE agent_id = ? "
            "AND created_at <= ? AND content = ? ORDER BY id DESC LIMIT 1",
            (agent_id, dream.finished_at, content),
        ).fetchone()
        if found is None:
            return Derived(content, "")
        return Derived(content, found["made_by"] or "", int(found["dropped_sentences"]))

    @staticmethod
    def _restore(
        conn: Any, agent_id: int, dream: Dream, now: float, actor: str
    ) -> list[tuple[int, Any]]:
        """Make the dream's retired facts current again; their ids and stored vectors."""
        ids = [c.fact_id for c in dream.changes]
        if not ids:
            return []
        found = conn.execute(
            "SELECT f.id, f.content, v.embedding FROM facts f JOIN dream_vectors v "
            f"ON v.fact_id = f.id AND v.dream_id = ? WHERE f.id IN ({marks(ids)}) "
            "AND f.forgotten_at IS NULL AND f.purged_at IS NULL",
            (dream.id, *ids),
        ).fetchall()
        for row in found:
            conn.execute(
                "UPDATE facts SET invalidated_at = NULL, superseded_by = NULL WHERE id = ?",
                (row["id"],),
            )
            conn.execute(
                "INSERT INTO fact_vectors(fact_id, agent_id, embedding) VALUES (?, ?, ?)",
                (row["id"], agent_id, row["embedding"]),
            )
            audit.record(
                conn,
                now,
                agent_id,
                actor,
                "restore",
                "fact",
                [row["id"]],
                after=row["content"],
                detail={"dream": dream.id},
            )
        return [(int(row["id"]), row["embedding"]) for row in found]
