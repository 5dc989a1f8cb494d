"""The audit log: one append-only row per change to facts, base memory, blocks, forgets and
deletions, written in the same transaction as the change. A purge scrubs the text it erased
from earlier rows (their ids and action stay); deleting an agent removes its rows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lobug.store.models import AuditEntry
from lobug.store.postgres.database import PostgresDatabase
from lobug.store.sqlite import rows

# Tables a purge or a deletion erased text from: VACUUM marks their dead rows' space free.
PURGED_TABLES = (
    "topics",
    "conversation_log",
    "facts",
    "summaries",
    "audit_log",
    "base_memory",
    "base_memory_versions",
    "memory_blocks",
    "memory_block_history",
    "fact_vectors",
    "message_vectors",
    "summary_vectors",
    "dreams",
    "dream_vectors",
)


def record(
    conn: Any,
    at: float,
    agent_id: int | None,
    actor: str,
    action: str,
    target: str,
    ids: Sequence[int],
    *,
    before: str | None = None,
    after: str | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Append one audit row (inside the caller's transaction)."""
    conn.execute(
        "INSERT INTO audit_log(agent_id, at, actor, action, target, target_ids, before, after, "
        "detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            agent_id,
            at,
            actor,
            action,
            target,
            json.dumps(list(ids)),
            before,
            after,
            rows.json_or_none(detail),
        ),
    )


def scrub(conn: Any, target: str, ids: Sequence[int]) -> None:
    """Erase the before and after text of every audit row about any of `ids`."""
    if ids:
        conn.execute(
            "UPDATE audit_log SET before = NULL, after = NULL WHERE target = %s AND EXISTS "
            "(SELECT 1 FROM jsonb_array_elements_text(audit_log.target_ids::jsonb) v "
            "WHERE v::bigint = ANY(%s))",
            (target, list(ids)),
        )


class PostgresAudit(PostgresDatabase):
    def audit_entries(self, agent: str, limit: int, offset: int = 0) -> list[AuditEntry]:
        """The agent's audit rows, newest first."""
        found = self._query(
            f"SELECT {rows.AUDIT_COLUMNS} FROM audit_log WHERE agent_id = %s "
            "ORDER BY id DESC LIMIT %s OFFSET %s",
            (self.agent_id(agent), limit, offset),
        )
        return [rows.audit_entry(row) for row in found]

    def count_audit_entries(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM audit_log WHERE agent_id = %s", (self.agent_id(agent),)
        )

    def _erase_free_pages(self) -> None:
        """After a purge: VACUUM the tables text was erased from, so the dead row versions
        that still hold it are removed from their pages and the space marked free. What VACUUM
        does not promise (the bytes until overwritten, the WAL, replicas, backups) is in
        MEMORY.md. A VACUUM that fails (another one running) is left to autovacuum."""
        with self._connection() as conn:
            conn.execute(f"VACUUM {', '.join(PURGED_TABLES)}")
