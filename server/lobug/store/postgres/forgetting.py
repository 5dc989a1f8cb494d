"""PostgreSQL's part of forgetting: its tables are listed from `pg_tables`."""

from __future__ import annotations

from typing import Any

from lobug.store.postgres.facts import PostgresFacts
from lobug.store.sql.forgetting import SqlForgetting


class PostgresForgetting(SqlForgetting, PostgresFacts):
    def _table_names_in(self, conn: Any) -> set[str]:
        found = conn.execute(
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()"
        )
        return {row["name"] for row in found}
