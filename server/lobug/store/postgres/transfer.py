"""Export of an agent's rows as records (`store/records.py`), read a page at a time, as the
SQLite engine does. Import and file backups are SQLite's: on PostgreSQL, back up with the
database's own tools (`pg_dump`, base backups) and import into SQLite first, then run
`migrate-db`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from lobug.store.errors import StoreError
from lobug.store.models import Vector
from lobug.store.postgres.audit import PostgresAudit
from lobug.store.records import KINDS, AgentRecords, Imported, Record, content_key
from lobug.store.sqlite.export_rows import PAGE_ROWS, SOURCES, completed, record_of


class PostgresTransfer(PostgresAudit):
    def export_records(self, agent_id: int, kind: str) -> Iterator[Record]:
        """The agent's records of one kind, oldest first, `PAGE_ROWS` at a time."""
        columns, table = SOURCES[kind]
        last = 0
        while True:
            found = self._query(
                f"SELECT {columns} FROM {table} WHERE agent_id = %s AND id > %s "
                "ORDER BY id LIMIT %s",
                (agent_id, last, PAGE_ROWS),
            )
            for row in found:
                yield completed(self._query, "%s", kind, record_of(row))
            if len(found) < PAGE_ROWS:
                return
            last = found[-1]["id"]

    def base_memory_row(self, agent_id: int) -> tuple[str, bool]:
        """The agent's current base memory and whether it is stale."""
        found = self._query(
            "SELECT content, stale FROM base_memory WHERE agent_id = %s", (agent_id,)
        )
        return (found[0]["content"], bool(found[0]["stale"])) if found else ("", False)

    def content_keys(self, agent: str) -> set[str]:
        """The content keys of everything the agent holds (none when it does not exist)."""
        found = self._query("SELECT id FROM agents WHERE name = %s", (agent,))
        if not found:
            return set()
        keys = set()
        for kind in KINDS:
            for record in self.export_records(found[0]["id"], kind):
                keys.add(content_key(kind, record))
                for change in record.get("history", []) if kind == "blocks" else []:
                    keys.add(content_key("block_history", {"label": record["label"], **change}))
        return keys

    def import_agents(
        self,
        agents: Sequence[AgentRecords],
        vectors: Mapping[str, Vector],
        *,
        merge: bool,
        actor: str,
    ) -> list[Imported]:
        raise StoreError(
            "import into a SQLite database, then copy it with `lobug migrate-db`: importing "
            "straight into PostgreSQL is not supported yet"
        )

    def backup(self, target: Path) -> str:
        raise StoreError("back up PostgreSQL with its own tools (pg_dump, base backups)")
