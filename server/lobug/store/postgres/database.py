"""The connection pool every part of the PostgreSQL store shares: transactions, storage
errors, migrations under an advisory lock, and the agent ids all tables are keyed by.

One `psycopg_pool.ConnectionPool` per process (`POOL_MIN` to `pool_size` connections, 10 by
default: LOBUG_DB_POOL_SIZE). Every method takes a connection for one statement or one
transaction and gives it back, so the store is thread-safe. A connection the database dropped
is found by the pool's check when it is next taken and replaced: after an outage the store
works again without a restart; during one, calls fail fast with StorageUnavailable.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from lobug.store.errors import StorageUnavailable, StoreError
from lobug.store.models import Clock, Vector
from lobug.store.postgres.schema import MIGRATIONS
from lobug.store.sql.database import SqlDatabase
from lobug.store.sql.dialect import POSTGRES, to_format

POOL_MIN = 1
POOL_SIZE = 10
POOL_TIMEOUT_S = 5.0  # how long a call waits for a connection before StorageUnavailable
CONNECT_TIMEOUT_S = 5
MIGRATION_LOCK = 0x10B06  # pg_advisory_xact_lock key held while migrating
FACT_LOCK = 0x10B0F  # pg_advisory_xact_lock(FACT_LOCK, agent_id): one fact writer per agent
EXCLUSIVE_LOCK = 0x10B0E  # pg_try_advisory_lock(EXCLUSIVE_LOCK, crc32(name))

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


@contextmanager
def storage_errors() -> Iterator[None]:
    """Lost connections, a database that is down, full or read-only, and a pool with no
    connection to give as StorageUnavailable; constraint and programming errors stay what
    they are."""
    import psycopg

    try:
        yield
    except (psycopg.OperationalError, psycopg.errors.ReadOnlySqlTransaction) as exc:
        raise StorageUnavailable(f"the database is unavailable: {exc}") from exc


def connect(url: str) -> Any:
    """One connection outside the pool (migrations, VACUUM, `migrate-db`)."""
    import psycopg
    from psycopg.rows import dict_row

    with storage_errors():
        return psycopg.connect(
            url, autocommit=True, row_factory=dict_row, connect_timeout=CONNECT_TIMEOUT_S
        )


def register_vector_type(conn: Any) -> None:
    from pgvector.psycopg import register_vector

    register_vector(conn)


def open_pool(url: str, size: int) -> Any:
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    pool = ConnectionPool(
        url,
        min_size=min(POOL_MIN, size),
        max_size=size,
        kwargs={"autocommit": True, "row_factory": dict_row, "connect_timeout": CONNECT_TIMEOUT_S},
        configure=register_vector_type,
        check=ConnectionPool.check_connection,
        timeout=POOL_TIMEOUT_S,
        name="lobug",
        open=False,
    )
    with storage_errors():
        pool.open(wait=True, timeout=POOL_TIMEOUT_S * 2)
    return pool


def migrate(url: str, clock: Clock) -> list[int]:
    """Apply pending numbered migrations in one transaction under an advisory lock; return
    the versions applied now."""
    conn = connect(url)
    try:
        with storage_errors(), conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                "name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
            )
            done = {r["version"] for r in conn.execute("SELECT version FROM schema_migrations")}
            applied = []
            for migration in MIGRATIONS:
                if migration.version in done:
                    continue
                for statement in migration.statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations(version, name, applied_at) VALUES (%s,%s,%s)",
                    (migration.version, migration.name, clock()),
                )
                applied.append(migration.version)
        return applied
    finally:
        conn.close()


def as_vector(vector: Vector) -> Any:
    """A numpy vector as pgvector's type (adapted by the pool's `register_vector`)."""
    from pgvector import Vector as PgVector

    return PgVector(np.asarray(vector, dtype=np.float32))


class QmarkConnection:
    """A psycopg connection that also takes the shared statements' `?` placeholders."""

    def __init__(self, conn: Any) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(to_format(sql), params)

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> Any:
        cursor = self.raw.cursor()
        cursor.executemany(to_format(sql), params)
        return cursor

    def cursor(self) -> Any:
        return self.raw.cursor()


class PostgresDatabase(SqlDatabase):
    """A pool of connections (autocommit; transactions are explicit); rows read by name."""

    dialect = POSTGRES

    def __init__(self, url: str, *, clock: Clock = time.time, pool_size: int = POOL_SIZE) -> None:
        self.url = url
        self._clock = clock
        migrate(url, clock)
        self._pool = open_pool(url, pool_size)

    def close(self) -> None:
        self._pool.close()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with storage_errors(), self._pool.connection() as conn, conn.transaction():
            yield QmarkConnection(conn)

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """A pooled connection in autocommit (VACUUM, session advisory locks)."""
        with storage_errors(), self._pool.connection() as conn:
            yield conn

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with storage_errors(), self._pool.connection() as conn:
            return list(conn.execute(to_format(sql), params).fetchall())

    def _vector_value(self, vector: Vector) -> Any:
        return as_vector(vector)

    def _lock_fact_writers(self, conn: Any, agent_id: int) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(?, ?)", (FACT_LOCK, agent_id))

    def _erase_free_pages(self, *, rewrite_file: bool = False) -> None:
        """After a purge: VACUUM the tables text was erased from, so the dead row versions
        that still hold it are removed from their pages and the space marked free. What VACUUM
        does not promise (the bytes until overwritten, the WAL, replicas, backups) is in
        docs/memory.md. A VACUUM that fails (another one running) is left to autovacuum."""
        with self._connection() as conn:
            conn.execute(f"VACUUM {', '.join(PURGED_TABLES)}")

    @contextmanager
    def exclusively(self, name: str) -> Iterator[bool]:
        """Work that one process at a time may do (the maintenance pass): True inside when
        this process holds `name` (and no other does until the block ends); False when
        another process holds it: skip the work. A session advisory lock, held on one pooled
        connection while the work runs, released when it ends or when that connection dies."""
        key = zlib.crc32(name.encode()) - 2**31  # the lock takes two int4 keys
        with self._connection() as conn:
            row = conn.execute(
                "SELECT pg_try_advisory_lock(%s, %s) AS held", (EXCLUSIVE_LOCK, key)
            ).fetchone()
            try:
                yield bool(row["held"])
            finally:
                if row["held"]:
                    conn.execute("SELECT pg_advisory_unlock(%s, %s)", (EXCLUSIVE_LOCK, key))

    def backup(self, target: Path) -> str:
        """File backups are SQLite's (`sqlite/backup.py`)."""
        raise StoreError("back up PostgreSQL with its own tools (pg_dump, base backups)")

    def agent_id(self, name: str) -> int:
        """The id of a namespace, created on first use. Not cached: another process may
        delete the agent."""
        found = self._query("SELECT id FROM agents WHERE name = %s", (name,))
        if found:
            return int(found[0]["id"])
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO agents(name, created_at) VALUES (%s, %s) "
                "ON CONFLICT (name) DO NOTHING",
                (name, self._clock()),
            )
            row = conn.execute("SELECT id FROM agents WHERE name = %s", (name,)).fetchone()
        return int(row["id"])
