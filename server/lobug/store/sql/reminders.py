"""Reminders: what a person asked to be reminded of, rung once, at least once. Ringing is two
steps: a claim (`claimed_until`, on the device `claimed_on`) that keeps other devices and turns
from saying the same reminder meanwhile, then, once the words were delivered, `said_at`. A
claim never confirmed (the device left mid-sentence, the process was killed) lapses, and the
reminder rings again. Setting and cancelling one is audited."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lobug.store.models import Reminder
from lobug.store.sql import audit, rows
from lobug.store.sql.audit import SqlAudit
from lobug.store.sql.dialect import marks

_FROM = "reminders r JOIN agents a ON a.id = r.agent_id"
_WAITING = "said_at IS NULL AND cancelled_at IS NULL"


def _owned_by(owners: Sequence[int | None]) -> tuple[str, list[int]]:
    """The condition (and its values) of a reminder whose owner is one of `owners` (None:
    the household's)."""
    people = [owner for owner in owners if owner is not None]
    parts = ["owner_person_id IS NULL"] if None in owners else []
    if people:
        parts.append(f"owner_person_id IN ({marks(people)})")
    return "(" + (" OR ".join(parts) or "1 = 0") + ")", people


class SqlReminders(SqlAudit):
    def add_reminder(
        self,
        agent: str,
        device_id: str,
        what: str,
        ring_at: float,
        *,
        actor: str,
        owner_person_id: int | None = None,
    ) -> Reminder:
        """A reminder to ring at `ring_at`, asked for on `device_id`, `owner_person_id`'s
        (None: the household's)."""
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            row = conn.execute(
                "INSERT INTO reminders(agent_id, device_id, what, ring_at, created_at, "
                "owner_person_id) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (agent_id, device_id, what, ring_at, now, owner_person_id),
            ).fetchone()
            reminder_id = int(row["id"])
            audit.record(
                conn, now, agent_id, actor, "create", "reminder", [reminder_id], after=what,
                detail={"ring_at": ring_at},
            )  # fmt: skip
        return Reminder(
            reminder_id, agent, device_id, what, ring_at, now, owner_person_id=owner_person_id
        )

    def waiting_reminders(self, agent: str) -> list[Reminder]:
        """The agent's reminders not yet said nor cancelled, the soonest first (whoever's:
        the domain decides who hears which)."""
        found = self._query(
            f"SELECT {rows.REMINDER_COLUMNS} FROM {_FROM} "
            "WHERE a.name = ? AND r.said_at IS NULL AND r.cancelled_at IS NULL "
            "ORDER BY r.ring_at, r.id",
            (agent,),
        )
        return [rows.reminder(row) for row in found]

    def count_waiting_reminders(
        self, agent: str, owner_person_id: int | None, device_id: str
    ) -> tuple[int, int]:
        """How many reminders wait of `owner_person_id` (None: the household's), and how many
        were set on `device_id`."""
        owned, people = _owned_by([owner_person_id])
        found = self._query(
            f"SELECT COALESCE(SUM(CASE WHEN {owned} THEN 1 ELSE 0 END), 0) AS owned, "
            "COALESCE(SUM(CASE WHEN device_id = ? THEN 1 ELSE 0 END), 0) AS on_device "
            f"FROM reminders WHERE agent_id = (SELECT id FROM agents WHERE name = ?) "
            f"AND {_WAITING}",
            (*people, device_id, agent),
        )
        return (int(found[0]["owned"]), int(found[0]["on_device"])) if found else (0, 0)

    def claim_due_reminders(
        self,
        agent: str,
        device_id: str,
        now: float,
        owners: Sequence[int | None],
        claim_s: float,
    ) -> list[Reminder]:
        """Claim for `claim_s` seconds, for `device_id`, the agent's reminders due by `now`
        whose owner is one of `owners` and that no other claim holds, the soonest first.
        `mark_reminders_said` once they were said, `release_reminders` when they were not."""
        agent_id = self.agent_id(agent)
        owned, people = _owned_by(owners)
        with self._transaction() as conn:
            claimed = conn.execute(
                "UPDATE reminders SET claimed_until = ?, claimed_on = ? "
                f"WHERE agent_id = ? AND {_WAITING} AND ring_at <= ? AND {owned} "
                "AND (claimed_until IS NULL OR claimed_until <= ?) RETURNING id",
                (now + claim_s, device_id, agent_id, now, *people, now),
            ).fetchall()
        return self._reminders([int(row["id"]) for row in claimed])

    def mark_reminders_said(self, ids: Sequence[int], device_id: str, now: float) -> None:
        """The claimed reminders `ids` were said on `device_id`: never again."""
        self._update_waiting(ids, "said_at = ?, said_on = ?", (now, device_id))

    def release_reminders(self, ids: Sequence[int]) -> None:
        """The claimed reminders `ids` were not said: they ring at the next chance."""
        self._update_waiting(ids, "claimed_until = NULL, claimed_on = NULL", ())

    def release_reminder_claims(self) -> int:
        """Every claim released (a device server starting: the claims of one that stopped
        mid-sentence); how many."""
        with self._transaction() as conn:
            released = conn.execute(
                "UPDATE reminders SET claimed_until = NULL, claimed_on = NULL "
                f"WHERE claimed_until IS NOT NULL AND {_WAITING} RETURNING id"
            ).fetchall()
        return len(released)

    def _update_waiting(
        self, ids: Sequence[int], assignments: str, values: tuple[Any, ...]
    ) -> None:
        if not ids:
            return
        with self._transaction() as conn:
            conn.execute(
                f"UPDATE reminders SET {assignments} WHERE {_WAITING} AND id IN ({marks(ids)})",
                (*values, *ids),
            )

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
                    f"UPDATE reminders SET cancelled_at = ? WHERE agent_id = ? AND {_WAITING} "
                    f"AND id IN ({marks(ids)}) RETURNING id",
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
