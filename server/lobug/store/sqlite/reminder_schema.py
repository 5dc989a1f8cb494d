"""Owned reminders, the same statements for both engines (`schema.py` of each): SQLite's
migration 14, PostgreSQL's 9."""

from __future__ import annotations

# Owned reminders, SQLite's migration 14 and PostgreSQL's 9 alike (`memory/reminders.py`):
# whose each is (`owner_person_id`, NULL: the household's, as every older one), and the claim
# of the device saying it (`claimed_until`, `claimed_on`): `said_at` is set once it was said.
OWNED_REMINDERS = (
    "ALTER TABLE reminders ADD COLUMN owner_person_id BIGINT",
    "ALTER TABLE reminders ADD COLUMN claimed_until {time}",
    "ALTER TABLE reminders ADD COLUMN claimed_on TEXT",
    "CREATE INDEX reminders_by_owner ON reminders(agent_id, owner_person_id) "
    "WHERE said_at IS NULL AND cancelled_at IS NULL",
    "CREATE INDEX reminders_by_device ON reminders(agent_id, device_id) "
    "WHERE said_at IS NULL AND cancelled_at IS NULL",
)


def owned_reminders(time_type: str) -> tuple[str, ...]:
    """`OWNED_REMINDERS` with the engine's type of a time."""
    return tuple(statement.format(time=time_type) for statement in OWNED_REMINDERS)
