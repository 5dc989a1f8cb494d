"""The audit log: one append-only row per change to facts, base memory, blocks, forgets and
deletions, written in the same transaction as the change. A purge scrubs the text it erased
from earlier rows (their ids and action stay); deleting an agent removes its rows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lobug.store.models import AuditEntry
from lobug.store.sql import rows
from lobug.store.sql.database import SqlDatabase
from lobug.store.sql.dialect import Dialect, marks


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
        "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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


def scrub(conn: Any, dialect: Dialect, target: str, ids: Sequence[int]) -> None:
    """Erase the before and after text of every audit row about any of `ids`."""
    if ids:
        conn.execute(
            "UPDATE audit_log SET before = NULL, after = NULL WHERE target = ? AND EXISTS "
            f"(SELECT 1 FROM ({dialect.ids_in_json('audit_log.target_ids')}) AS targets "
            f"WHERE targets.value IN ({marks(ids)}))",
            (target, *ids),
        )


class SqlAudit(SqlDatabase):
    def audit_entries(self, agent: str, limit: int, offset: int = 0) -> list[AuditEntry]:
        """The agent's audit rows, newest first."""
        found = self._query(
            f"SELECT {rows.AUDIT_COLUMNS} FROM audit_log WHERE agent_id = ? "
            "ORDER BY id DESC LIMIT ? OFFSET ?",
            (self.agent_id(agent), limit, offset),
        )
        return [rows.audit_entry(row) for row in found]

    def count_audit_entries(self, agent: str) -> int:
        return self._count(
            "SELECT COUNT(*) AS n FROM audit_log WHERE agent_id = ?", (self.agent_id(agent),)
        )
