"""PostgreSQL's part of the dashboard's activity: a row's UTC day."""

from __future__ import annotations

from lobug.store.postgres.database import PostgresDatabase
from lobug.store.sql.activity import SqlActivity


class PostgresActivity(SqlActivity, PostgresDatabase):
    _DAY = "to_char(to_timestamp(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
