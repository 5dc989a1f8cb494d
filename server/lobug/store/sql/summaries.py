"""Summaries of the conversation log, and the base memory distilled from them: every version
of the base memory is kept, whether the long-term cascade or a person wrote it.

A summary or base memory computed from messages or summaries that were forgotten meanwhile
is refused (`SourcesForgotten`): nothing forgotten comes back through a summary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lobug.store.errors import SourcesForgotten, StoreError
from lobug.store.models import (
    CASCADE,
    MADE_BY_PERSON,
    BaseMemoryVersion,
    Derived,
    Message,
    Summary,
    Vector,
)
from lobug.store.sql import audit, rows
from lobug.store.sql.audit import SqlAudit
from lobug.store.sql.dialect import marks


def _require_rows(conn: Any, table: str, ids: list[int]) -> None:
    if not ids:
        return
    found = conn.execute(
        f"SELECT COUNT(*) AS n FROM {table} WHERE id IN ({marks(ids)})", ids
    ).fetchone()
    if found["n"] != len(set(ids)):
        raise SourcesForgotten(f"some {table} this was written from were forgotten meanwhile")


def _span(messages: Sequence[Message]) -> tuple[float, float]:
    """When the first and the last of these messages were said."""
    times = [m.created_at for m in messages]
    return min(times), max(times)


class SqlSummaries(SqlAudit):
    def _store_summary_vector(
        self, conn: Any, summary_id: int, agent_id: int, vector: Vector
    ) -> None:
        """Inside the summary's transaction: keep its embedding in `summary_vectors`."""
        raise NotImplementedError

    def add_summary(
        self,
        agent: str,
        content: str,
        messages: Sequence[Message],
        *,
        vector: Vector | None = None,
        made_by: str | None = None,
        dropped_sentences: int = 0,
    ) -> Summary:
        """Store a summary (an episode: its span of time is that of its messages; SQLite's
        trigger fills it from the log's rows between the first and the last), with its
        embedding when given and how its text was made, and mark the messages it covers as
        summarized, atomically."""
        if not messages:
            raise StoreError("a summary must cover at least one message")
        agent_id = self.agent_id(agent)
        first, last = messages[0].id, messages[-1].id
        now = self._clock()
        with self._transaction() as conn:
            _require_rows(conn, "conversation_log", [m.id for m in messages])
            summary_id = int(
                conn.execute(
                    "INSERT INTO summaries(agent_id, content, source_from_id, source_to_id, "
                    "created_at, started_at, ended_at, made_by, dropped_sentences) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (
                        *(agent_id, content, first, last, now, *_span(messages)),
                        *(made_by, dropped_sentences),
                    ),
                ).fetchone()["id"]
            )
            if vector is not None:
                self._store_summary_vector(conn, summary_id, agent_id, vector)
            conn.executemany(
                "UPDATE conversation_log SET summarized = 1 WHERE id = ? AND agent_id = ?",
                [(m.id, agent_id) for m in messages],
            )
            # Read back rather than RETURNING: SQLite's trigger sets the span after the insert.
            row = conn.execute(
                f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries WHERE id = ?", (summary_id,)
            ).fetchone()
        return rows.summary(agent, row)

    def unincorporated_summaries(self, agent: str) -> list[Summary]:
        found = self._query(
            f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries "
            "WHERE agent_id = ? AND incorporated = 0 ORDER BY id",
            (self.agent_id(agent),),
        )
        return [rows.summary(agent, row) for row in found]

    def count_unincorporated(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM summaries WHERE agent_id = ? AND incorporated = 0",
            (self.agent_id(agent),),
        )

    def count_summaries(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM summaries WHERE agent_id = ?", (self.agent_id(agent),)
        )

    def summaries(self, agent: str) -> list[Summary]:
        found = self._query(
            f"SELECT {rows.SUMMARY_COLUMNS} FROM summaries WHERE agent_id = ? ORDER BY id",
            (self.agent_id(agent),),
        )
        return [rows.summary(agent, row) for row in found]

    def base_memory(self, agent: str) -> str:
        found = self._query(
            "SELECT content FROM base_memory WHERE agent_id = ?", (self.agent_id(agent),)
        )
        return str(found[0]["content"]) if found else ""

    def base_memory_is_stale(self, agent: str) -> bool:
        """Whether something the base memory was distilled from was forgotten since."""
        found = self._query(
            "SELECT stale FROM base_memory WHERE agent_id = ?", (self.agent_id(agent),)
        )
        return bool(found and found[0]["stale"])

    def base_memory_history(self, agent: str) -> list[BaseMemoryVersion]:
        """Every version of the base memory, newest first."""
        found = self._query(
            f"SELECT {rows.BASE_MEMORY_VERSION_COLUMNS} FROM base_memory_versions "
            "WHERE agent_id = ? ORDER BY id DESC",
            (self.agent_id(agent),),
        )
        return [rows.base_memory_version(row) for row in found]

    def write_base_memory(self, agent: str, content: str, *, actor: str) -> None:
        """Replace the base memory by hand (a new version, `made_by` person)."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            self._write_base_memory(conn, agent_id, Derived(content, MADE_BY_PERSON), actor)

    def distill_base_memory(
        self,
        agent: str,
        content: str,
        incorporated: Sequence[Summary],
        *,
        made_by: str | None = None,
        dropped_sentences: int = 0,
    ) -> None:
        """Replace the base memory (and say how it was made) and mark the summaries it
        absorbed, atomically."""
        agent_id = self.agent_id(agent)
        document = Derived(content, made_by or "", dropped_sentences)
        with self._transaction() as conn:
            _require_rows(conn, "summaries", [s.id for s in incorporated])
            self._write_base_memory(conn, agent_id, document, CASCADE)
            conn.executemany(
                "UPDATE summaries SET incorporated = 1 WHERE id = ? AND agent_id = ?",
                [(s.id, agent_id) for s in incorporated],
            )

    def _write_base_memory(self, conn: Any, agent_id: int, document: Derived, actor: str) -> None:
        """A new version of the base memory (`document.made_by` "": not recorded)."""
        content = document.content
        now = self._clock()
        before = conn.execute(
            f"SELECT content FROM base_memory WHERE agent_id = ?{self.dialect.lock_rows()}",
            (agent_id,),
        ).fetchone()
        conn.execute(
            "INSERT INTO base_memory(agent_id, content, updated_at, stale) VALUES (?, ?, ?, 0) "
            "ON CONFLICT (agent_id) DO UPDATE SET content = excluded.content, "
            "updated_at = excluded.updated_at, stale = 0",
            (agent_id, content, now),
        )
        version = conn.execute(
            "INSERT INTO base_memory_versions(agent_id, content, written_by, created_at, "
            "made_by, dropped_sentences) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            (agent_id, content, actor, now, document.made_by or None, document.dropped_sentences),
        ).fetchone()
        audit.record(
            conn,
            now,
            agent_id,
            actor,
            "write",
            "base_memory",
            [int(version["id"])],
            before=before["content"] if before else None,
            after=content,
        )
