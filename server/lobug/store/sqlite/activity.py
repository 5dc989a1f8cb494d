"""SQLite's part of the dashboard's activity: a row's UTC day."""

from __future__ import annotations

from lobug.store.sql.activity import SqlActivity
from lobug.store.sqlite.database import SQLiteDatabase


class SQLiteActivity(SqlActivity, SQLiteDatabase):
    _DAY = "date(created_at, 'unixepoch')"
