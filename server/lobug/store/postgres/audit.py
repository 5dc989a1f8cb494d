"""PostgreSQL's part of the audit: after a purge, the tables text was erased from are
vacuumed."""

from __future__ import annotations

from lobug.store.postgres.database import PostgresDatabase
from lobug.store.sql.audit import SqlAudit

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


class PostgresAudit(SqlAudit, PostgresDatabase):
    def _erase_free_pages(self) -> None:
        """After a purge: VACUUM the tables text was erased from, so the dead row versions
        that still hold it are removed from their pages and the space marked free. What VACUUM
        does not promise (the bytes until overwritten, the WAL, replicas, backups) is in
        MEMORY.md. A VACUUM that fails (another one running) is left to autovacuum."""
        with self._connection() as conn:
            conn.execute(f"VACUUM {', '.join(PURGED_TABLES)}")
