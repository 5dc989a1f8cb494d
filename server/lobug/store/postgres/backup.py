"""File backups are SQLite's (`sqlite/backup.py`): PostgreSQL is backed up with the
database's own tools (`pg_dump`, base backups)."""

from __future__ import annotations

from pathlib import Path

from lobug.store.errors import StoreError
from lobug.store.postgres.database import PostgresDatabase


class PostgresBackup(PostgresDatabase):
    def backup(self, target: Path) -> str:
        raise StoreError("back up PostgreSQL with its own tools (pg_dump, base backups)")
