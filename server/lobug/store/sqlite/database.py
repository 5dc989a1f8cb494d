"""The connection every part of the SQLite store shares: opening the file (private, WAL,
sqlite-vec loaded), one lock, transactions, migrations, and the agent ids all tables are
keyed by."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from lobug.store.errors import StorageUnavailable, StoreError
from lobug.store.models import Clock, Message, Vector
from lobug.store.sql.database import SqlDatabase
from lobug.store.sql.dialect import SQLITE
from lobug.store.sqlite.schema import MIGRATIONS
from lobug.store.sqlite.vector_index import VectorIndex


def dbapi() -> Any:
    """pysqlite3's DB-API module, imported on first use. Always through `import`, never read
    from `sys.modules`: while another thread imports a module for the first time, it is
    briefly out of `sys.modules` (the import moves it to the end), and a direct lookup then
    fails with KeyError."""
    import pysqlite3.dbapi2

    return pysqlite3.dbapi2


def open_connection(path: Path | str) -> Any:
    """A pysqlite3 connection with sqlite-vec loaded (the stdlib module cannot load extensions
    on every Python build)."""
    import sqlite_vec

    sqlite3 = dbapi()

    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=10)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


@contextmanager
def storage_errors() -> Iterator[None]:
    """SQLite's operational failures (full, read-only, I/O, locked, damaged) as
    StorageUnavailable; constraint errors and programming errors stay what they are."""
    try:
        yield
    except Exception as exc:
        if is_storage_failure(exc):
            raise StorageUnavailable(f"the database is unavailable: {exc}") from exc
        raise


def is_storage_failure(exc: Exception) -> bool:
    sqlite3 = dbapi()
    bugs = (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError)
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, bugs)


def prepare_private_file(path: Path) -> None:
    """The memory is personal: new folders are the owner's only (0700) and the database is
    created readable and writable by the owner only (0600; SQLite gives its -wal and -shm
    files the same mode). Every folder created on the way is 0700 too (`mkdir(parents=True)`
    would make the outer ones 0755); existing folders are left as they are."""
    missing = [folder for folder in (path.parent, *path.parent.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def vector_blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class SQLiteDatabase(SqlDatabase):
    """One connection guarded by a lock (WAL keeps reads cheap); rows read by column name."""

    dialect = SQLITE

    def __init__(self, path: Path | str, *, clock: Clock = time.time) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            prepare_private_file(self.path)
        self._clock = clock
        self._lock = threading.RLock()
        self._conn = open_connection(path)
        self._conn.row_factory = dbapi().Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA secure_delete=ON")  # erased text leaves no bytes behind
        self._agent_ids: dict[str, int] = {}
        self.index: VectorIndex | None = None  # current facts' vectors
        self.message_index: VectorIndex | None = None  # embedded messages' vectors
        self.migrate()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._lock, storage_errors():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._rollback()
                raise
            try:
                self._conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock, storage_errors():
            return list(self._conn.execute(sql, params).fetchall())

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with self._lock:
            yield

    def migrate(self) -> list[int]:
        """Apply pending numbered migrations; return the versions applied now."""
        with self._lock:
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
            )
            done = {row["version"] for row in self._query("SELECT version FROM schema_migrations")}
            applied = []
            for migration in MIGRATIONS:
                if migration.version in done:
                    continue
                with self._transaction() as conn:
                    for statement in migration.statements:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?,?,?)",
                        (migration.version, migration.name, self._clock()),
                    )
                applied.append(migration.version)
            return applied

    def agent_id(self, name: str) -> int:
        """The id of a namespace, created on first use."""
        cached = self._agent_ids.get(name)
        if cached is not None:
            return cached
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO agents(name, created_at) VALUES (?, ?)",
                (name, self._clock()),
            )
            row = conn.execute("SELECT id FROM agents WHERE name = ?", (name,)).fetchone()
        self._agent_ids[name] = int(row["id"])
        return int(row["id"])

    def _vector_value(self, vector: Vector) -> Any:
        return vector_blob(vector)

    def _agent_known(self, name: str, agent_id: int) -> None:
        self._agent_ids[name] = agent_id

    def _require_index(self) -> VectorIndex:
        if self.index is None:
            raise StoreError("bind_embedding() must be called before vectors are used")
        return self.index

    def _require_message_index(self) -> VectorIndex:
        if self.message_index is None:
            raise StoreError("bind_embedding() must be called before vectors are used")
        return self.message_index

    def _index_message_vectors(self, embedded: Sequence[tuple[Message, Vector]]) -> None:
        """Mirror message vectors just stored (their transaction committed) in the index."""
        if self.message_index is None:  # not bound yet: `bind_embedding` loads them all
            return
        for message, vector in embedded:
            self.message_index.add_unit(message.agent_id, message.id, vector)
