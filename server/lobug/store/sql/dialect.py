"""What the shared statements need to know of an engine's SQL, in one small object.

Statements are written once, with `?` placeholders (SQLite's own: its hot paths pay nothing);
PostgreSQL's connection turns them into psycopg's `%s` once per distinct text (`to_format`,
cached). Both engines take `INSERT ... RETURNING`, `ON CONFLICT ... DO NOTHING / DO UPDATE` and
`IN (?, ?, ...)` as they are, so the dialect holds only what is spelled differently: row locks,
case-insensitive LIKE, reading a JSON array of ids, a time's day, the list of tables. A `%` is
never written in a shared statement (psycopg would read it as a placeholder): LIKE patterns are
parameters."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Dialect:
    name: str
    row_lock: str  # appended to a SELECT whose rows the transaction goes on to change
    ilike: str  # LIKE that ignores case
    json_ids: str  # a subquery of one `value` column: the ids of a JSON array column `{}`
    day: str  # the UTC date (`YYYY-MM-DD`) of a row's `created_at`
    tables: str  # a query of one `name` column: the tables there are

    def lock_rows(self, of: str = "") -> str:
        """` FOR UPDATE` (of the table alias `of`, when the SELECT joins) where rows can be
        locked; nothing on SQLite, whose write transaction holds the whole file."""
        if not self.row_lock:
            return ""
        return f"{self.row_lock} OF {of}" if of else self.row_lock

    def ids_in_json(self, column: str) -> str:
        return self.json_ids.format(column)


SQLITE = Dialect(
    name="sqlite",
    row_lock="",
    ilike="LIKE",
    json_ids="SELECT value FROM json_each({})",
    day="date(created_at, 'unixepoch')",
    tables="SELECT name FROM sqlite_master WHERE type='table'",
)

POSTGRES = Dialect(
    name="postgres",
    row_lock=" FOR UPDATE",
    ilike="ILIKE",
    json_ids="SELECT value::bigint AS value FROM jsonb_array_elements_text({}::jsonb)",
    day="to_char(to_timestamp(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
    tables="SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()",
)


def marks(items: Sequence[object]) -> str:
    """`?,?,...`: one placeholder per item, for `IN (...)`."""
    return ",".join("?" * len(items))


def insert_returning_id(table: str, columns: Sequence[str]) -> str:
    """An INSERT of `columns` (in that order) into `table` that returns the new row's id."""
    return f"INSERT INTO {table}({', '.join(columns)}) VALUES ({marks(columns)}) RETURNING id"


# Ids in one `IN (...)`: PostgreSQL takes at most 65,535 parameters in a statement.
BATCH_IDS = 10_000


def batches(ids: Sequence[int]) -> Iterator[Sequence[int]]:
    """`ids` in slices of at most BATCH_IDS (one for most calls), for long `IN` lists."""
    for start in range(0, len(ids), BATCH_IDS):
        yield ids[start : start + BATCH_IDS]


def like_pattern(word: str) -> str:
    """A LIKE pattern for text holding `word`, its wildcards escaped with a backslash."""
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@lru_cache(maxsize=4096)
def to_format(sql: str) -> str:
    """A shared statement's `?` placeholders as psycopg's `%s`; statements written for
    PostgreSQL alone (`%s` already) pass unchanged."""
    return sql.replace("?", "%s")
