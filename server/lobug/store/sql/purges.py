"""Purge jobs (`memory/purges.py`; the table is `purge_schema.py`'s): a purge is recorded with
the ids it erases (never their text) before its first deletion, and finished only when every
copy is gone; `unfinished_purges` is what a crash left for the next start.

`purge_facts_and_derived` reads, in one transaction, every text the memory made or kept from
others (the base memory and each of its versions, episodes, topics, dreams, the audit log's
texts), asks the memory for each one's new text (it knows what holds the purged facts),
rewrites or drops those texts and erases the facts (every version). Episodes and topics
holding the text are dropped (their messages are summarized again, the topics rebuilt by the
next dream); the base memory, its versions and dreams are rewritten; audit rows lose their
texts, keeping what was done, by whom and to which ids."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from lobug.store import errors
from lobug.store.household import HOUSEHOLD
from lobug.store.purge_protocol import DerivedText, PurgeJob
from lobug.store.sql import audit
from lobug.store.sql.dialect import batches, marks
from lobug.store.sql.people import SqlPeople
from lobug.store.sql.topics import drop_topics_holding

JOB_COLUMNS = (
    "j.id, a.name AS agent, j.kind, j.target_ids, j.fact_ids, j.message_ids, j.actor, "
    "j.created_at, j.finished_at, j.counts"
)

# The texts a purge looks through: (kind, table, id column, text columns).
DERIVED_SOURCES = (
    ("base_memory", "base_memory", "agent_id", ("content",)),
    ("base_memory_version", "base_memory_versions", "id", ("content",)),
    ("summary", "summaries", "id", ("content",)),
    ("topic", "topics", "id", ("name", "summary", "open_questions", "next_actions")),
    ("dream", "dreams", "id", ("diary", "changes", "base_memory_before")),
    ("audit", "audit_log", "id", ("before", "after", "detail")),
)
# Rewritten in place (the others are dropped): their table, id column and text columns.
REWRITTEN = {kind: (table, key, columns) for kind, table, key, columns in DERIVED_SOURCES}
DROPPED = ("summary", "topic")
PLURALS = {
    "base_memory": "base_memory",
    "base_memory_version": "base_memory_versions",
    "summary": "summaries",
    "topic": "topics",
    "dream": "dreams",
    "audit": "audit_rows",
}
# Columns emptied to NULL rather than rewritten (the audit keeps what was done, not the text).
NULLED = {("audit", "before"), ("audit", "after"), ("audit", "detail")}


def _job(row: Any) -> PurgeJob:
    return PurgeJob(
        id=int(row["id"]),
        agent=row["agent"],
        kind=row["kind"],
        target_ids=tuple(json.loads(row["target_ids"])),
        fact_ids=tuple(json.loads(row["fact_ids"])),
        message_ids=tuple(json.loads(row["message_ids"])),
        actor=row["actor"],
        created_at=float(row["created_at"]),
        finished_at=None if row["finished_at"] is None else float(row["finished_at"]),
        counts=None if row["counts"] is None else json.loads(row["counts"]),
    )


class SqlPurges(SqlPeople):
    def begin_purge(
        self,
        agent: str,
        kind: str,
        target_ids: Sequence[int],
        fact_ids: Sequence[int],
        message_ids: Sequence[int],
        *,
        actor: str,
    ) -> PurgeJob:
        """Record a purge before anything of it is erased."""
        with self._transaction() as conn:
            row = conn.execute(
                "INSERT INTO purge_jobs(agent_id, kind, target_ids, fact_ids, message_ids, "
                "actor, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    self.agent_id(agent),
                    kind,
                    json.dumps(sorted(set(target_ids))),
                    json.dumps(sorted(set(fact_ids))),
                    json.dumps(sorted(set(message_ids))),
                    actor,
                    self._clock(),
                ),
            ).fetchone()
        return self.purge_job(int(row["id"]))

    def purge_job(self, job_id: int) -> PurgeJob:
        found = self._query(
            f"SELECT {JOB_COLUMNS} FROM purge_jobs j JOIN agents a ON a.id = j.agent_id "
            "WHERE j.id = ?",
            (job_id,),
        )
        if not found:
            raise errors.StoreError(f"no purge job {job_id}")
        return _job(found[0])

    def unfinished_purges(self) -> list[PurgeJob]:
        """The purges begun and not finished (a crash, a failure), oldest first."""
        found = self._query(
            f"SELECT {JOB_COLUMNS} FROM purge_jobs j JOIN agents a ON a.id = j.agent_id "
            "WHERE j.finished_at IS NULL ORDER BY j.id"
        )
        return [_job(row) for row in found]

    def finish_purge(self, job_id: int, counts: dict[str, int]) -> PurgeJob:
        """Mark the purge done with what it erased; the audit log records that it happened,
        by whom and how many rows (never what). Then nothing of the text is left in the
        engine's files (`_erase_free_pages`)."""
        job = self.purge_job(job_id)
        with self._transaction() as conn:
            conn.execute(
                "UPDATE purge_jobs SET finished_at = ?, counts = ? WHERE id = ?",
                (self._clock(), json.dumps(counts), job_id),
            )
            audit.record(
                conn,
                self._clock(),
                self.agent_id(job.agent),
                job.actor,
                "purge",
                job.kind,
                list(job.target_ids),
                detail={"job": job_id, **counts},
            )
        self._erase_free_pages(rewrite_file=True)
        return self.purge_job(job_id)

    # ------------------------------------------------------------------ what a purge erases

    def facts_learned_only_from(self, agent: str, message_ids: Sequence[int]) -> list[int]:
        """The agent's unpurged facts learned from any of the messages and from no other."""
        with self._transaction() as conn:
            return self._facts_only_from(conn, self.agent_id(agent), set(message_ids))

    def person_purge_ids(self, agent: str, person_id: int) -> tuple[list[int], list[int]]:
        """What forgetting the person erases, as `forget_person_memory` does: every version
        of their private facts and the facts learned only from what they said (but the
        household facts they stated, which stay the household's); and their messages."""
        self.person(agent, person_id)
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            private = set(self._private_fact_ids(conn, agent_id, person_id))
            said = [
                int(row["id"])
                for row in conn.execute(
                    "SELECT id FROM conversation_log WHERE agent_id = ? AND person_id = ?",
                    (agent_id, person_id),
                )
            ]
            stated = {
                int(row["id"])
                for row in conn.execute(
                    "SELECT id FROM facts WHERE agent_id = ? AND owner_person_id = ? AND scope = ?",
                    (agent_id, person_id, HOUSEHOLD),
                )
            }
            learned = set(self._facts_only_from(conn, agent_id, set(said))) - stated
        return sorted(private | learned), said

    def purge_facts_and_derived(
        self,
        agent: str,
        fact_ids: Sequence[int],
        rewrite: Callable[[DerivedText], str | None],
        *,
        person_id: int | None = None,
    ) -> dict[str, list[int]]:
        """In one transaction: rewrite each derived text (see the module) to what
        `rewrite` gives for it (None: unchanged; episodes and topics are dropped), then purge
        every version of the facts (content-free tombstones stay, their vectors and the
        audit's copies of their text go). With `person_id` (a person forgotten), the
        household facts they stated stay the household's: their link to what they said is
        cut, as `forget_person_memory` does. Returns the ids touched, by kind ("facts",
        "summaries", "topics", "base_memory", "base_memory_versions", "dreams",
        "audit_rows")."""
        agent_id = self.agent_id(agent)
        with self._writing():
            with self._transaction() as conn:
                self._lock_fact_writers(conn, agent_id)
                changes = [
                    (derived, text)
                    for derived in self._derived_texts(conn, agent_id)
                    if (text := rewrite(derived)) is not None
                ]
                touched = self._apply(conn, agent_id, changes)
                ids = self._agent_fact_ids(conn, agent_id, fact_ids)
                now = self._clock()
                for batch in batches(ids):
                    self._forget_rows(conn, batch, now)
                    self._purge_rows(conn, batch, now)
                drop_topics_holding(conn, "fact", ids)
                if person_id is not None:
                    conn.execute(
                        "UPDATE facts SET source_message_ids = '[]', owner_person_id = NULL "
                        "WHERE agent_id = ? AND owner_person_id = ? AND scope = ?",
                        (agent_id, person_id, HOUSEHOLD),
                    )
            self._index_forgotten(ids, [])
        return {"facts": ids} | touched

    def _derived_texts(self, conn: Any, agent_id: int) -> list[DerivedText]:
        """Every text of the agent that others were made or kept from (see the module),
        locked where rows lock (no new version is written in between)."""
        found = []
        for kind, table, key, columns in DERIVED_SOURCES:
            for row in conn.execute(
                f"SELECT {key} AS id, {', '.join(columns)} FROM {table} "
                f"WHERE agent_id = ?{self.dialect.lock_rows()}",
                (agent_id,),
            ).fetchall():
                found += [
                    DerivedText(kind, int(row["id"]), column, str(row[column]))
                    for column in columns
                    if row[column]
                ]
        return found

    @staticmethod
    def _agent_fact_ids(conn: Any, agent_id: int, ids: Sequence[int]) -> list[int]:
        return sorted(
            int(row["id"])
            for batch in batches(ids)
            for row in conn.execute(
                f"SELECT id FROM facts WHERE agent_id = ? AND id IN ({marks(batch)})",
                (agent_id, *batch),
            )
        )

    def _apply(
        self, conn: Any, agent_id: int, changes: Sequence[tuple[DerivedText, str]]
    ) -> dict[str, list[int]]:
        touched: dict[str, set[int]] = {kind: set() for kind in REWRITTEN}
        for derived, text in changes:
            touched[derived.kind].add(derived.id)
            if derived.kind in DROPPED:
                continue
            table, key, columns = REWRITTEN[derived.kind]
            if derived.field not in columns:
                raise errors.StoreError(f"{derived.kind} has no text {derived.field!r}")
            value = None if (derived.kind, derived.field) in NULLED else text
            stale = ", stale = 1" if derived.kind == "base_memory" else ""
            conn.execute(
                f"UPDATE {table} SET {derived.field} = ?{stale} WHERE {key} = ? AND agent_id = ?",
                (value, derived.id, agent_id),
            )
        self._drop_episodes(conn, agent_id, sorted(touched["summary"]))
        for batch in batches(sorted(touched["topic"])):
            conn.execute(
                f"DELETE FROM topics WHERE agent_id = ? AND id IN ({marks(batch)})",
                (agent_id, *batch),
            )
        return {PLURALS[kind]: sorted(ids) for kind, ids in touched.items()}

    @staticmethod
    def _drop_episodes(conn: Any, agent_id: int, ids: Sequence[int]) -> None:
        """Delete the episodes (summaries); their messages are summarized again."""
        for batch in batches(ids):
            for row in conn.execute(
                "SELECT source_from_id, source_to_id FROM summaries "
                f"WHERE agent_id = ? AND id IN ({marks(batch)})",
                (agent_id, *batch),
            ).fetchall():
                conn.execute(
                    "UPDATE conversation_log SET summarized = 0 "
                    "WHERE agent_id = ? AND id BETWEEN ? AND ?",
                    (agent_id, row["source_from_id"], row["source_to_id"]),
                )
            drop_topics_holding(conn, "episode", batch)
            conn.execute(
                f"DELETE FROM summaries WHERE agent_id = ? AND id IN ({marks(batch)})",
                (agent_id, *batch),
            )
