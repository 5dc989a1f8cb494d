"""SQLite's part of the audit: after a purge, no bytes of the erased text stay in the file."""

from __future__ import annotations

from lobug.store.sql.audit import SqlAudit
from lobug.store.sqlite.database import SQLiteDatabase
from lobug.store.sqlite.fulltext import FTS_TABLES


class SQLiteAudit(SqlAudit, SQLiteDatabase):
    def _erase_free_pages(self) -> None:
        """After a purge: merge the full-text indexes (their old segments still hold the
        erased words), then checkpoint the WAL into the file and truncate it. With
        `secure_delete` on, freed pages are zeroed, so the text is gone from the file."""
        with self._lock:
            for name in FTS_TABLES:
                self._conn.execute(f"INSERT INTO {name}({name}) VALUES ('optimize')")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
