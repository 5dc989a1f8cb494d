"""Reminders: what a person asked to be reminded of, rung once. Ringing claims the due ones in
one statement (`said_at` set where it was still empty), so two devices or two turns at the
same moment never say the same reminder twice. Setting and cancelling one is audited."""

from __future__ import annotations

from lobug.store.models import Reminder
from lobug.store.sql import audit, rows
from lobug.store.sql.audit import SqlAudit
from lobug.store.sql.dialect import marks

_FROM = "reminders r JOIN agents a ON a.id = r.agent_id"
_WAITING = "r.said_at IS NULL AND r.cancelled_at IS NULL"


class SqlReminders(SqlAudit):
    def add_reminder(
        self, agent: str, device_id: str, what: str, ring_at: float, *, actor: str
    ) -> Reminder:
        """A reminder to ring at `ring_at`, asked for on `device_id`."""
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            row = conn.execute(
                "INSERT INTO reminders(agent_id, device_id, what, ring_at, created_at) "
                "VALUES (?, ?, ?, ?, ?) RETURNING id",
                (agent_id, device_id, what, ring_at, now),
            ).fetchone()
            reminder_id = int(row["id"])
            audit.record(
                conn, now, agent_id, actor, "create", "reminder", [reminder_id], after=what,
                detail={"ring_at": ring_at},
            )  # fmt: skip
        return Reminder(reminder_id, agent, device_id, what, ring_at, now)

    def waiting_reminders(self, agent: str) -> list[Reminder]:
        """The agent's reminders not yet rung nor cancelled, the soonest first."""
        found = self._query(
            f"SELECT {rows.REMINDER_COLUMNS} FROM {_FROM} "
            f"WHERE a.name = ? AND {_WAITING} ORDER BY r.ring_at, r.id",
            (agent,),
        )
        return [rows.reminder(row) for row in found]

    def ring_due_reminders(self, agent: str, device_id: str, now: float) -> list[Reminder]:
        """Claim the agent's reminders due by `now` as said on `device_id`, the soonest first;
        a reminder claimed once is never returned again."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            claimed = conn.execute(
                "UPDATE reminders SET said_at = ?, said_on = ? "
                "WHERE agent_id = ? AND said_at IS NULL AND cancelled_at IS NULL "
                "AND ring_at <= ? RETURNING id",
                (now, device_id, agent_id, now),
            ).fetchall()
        return self._reminders([int(row["id"]) for row in claimed])

    def cancel_reminders(self, agent: str, ids: list[int], *, actor: str) -> list[Reminder]:
        """Cancel those of `ids` that still wait; the ones cancelled."""
        if not ids:
            return []
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            cancelled = [
                int(row["id"])
                for row in conn.execute(
                    "UPDATE reminders SET cancelled_at = ? WHERE agent_id = ? AND said_at IS NULL "
                    f"AND cancelled_at IS NULL AND id IN ({marks(ids)}) RETURNING id",
                    (now, agent_id, *ids),
                ).fetchall()
            ]
            if cancelled:
                audit.record(conn, now, agent_id, actor, "cancel", "reminder", cancelled)
        return self._reminders(cancelled)

    def _reminders(self, ids: list[int]) -> list[Reminder]:
        if not ids:
            return []
        found = self._query(
            f"SELECT {rows.REMINDER_COLUMNS} FROM {_FROM} WHERE r.id IN ({marks(ids)}) "
            "ORDER BY r.ring_at, r.id",
            ids,
        )
        return [rows.reminder(row) for row in found]
