"""Both storage engines for the tests: PostgreSQL from pgserver (started once per session in a
temporary folder, stopped at its end) or LOBUG_TEST_DATABASE_URL, one fresh database per test;
and what a database holds, as bytes, to check that a purge erased a text."""

from __future__ import annotations

import subprocess
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from lobug.store.engines import sqlite_path

ENGINES = ("sqlite", "postgres")


@contextmanager
def postgres_server(url: str | None) -> Iterator[str]:
    """The URL of a PostgreSQL server with pgvector: `url`, or a pgserver started in a
    temporary folder for as long as the context lasts (outside pytest's own temporary
    folders, which a concurrent pytest may delete; readable by the user pgserver runs the
    server as when started by root)."""
    if url:
        yield url
        return
    folder = Path(tempfile.mkdtemp(prefix="lobug-pg-"))
    folder.chmod(0o755)
    try:
        with _pgserver(folder) as server_url:
            yield server_url
    finally:
        remove_in_the_background(folder)


def remove_in_the_background(folder: Path) -> None:
    """`folder` removed by a process of its own that outlives this one: a session's stopped
    server leaves a database folder for each test that used one (tens of thousands of
    files; removing them took 4 s at the end of `tests/store` alone, and up to 30 s at the end
    of a worker in `make test`, while the other workers had finished)."""
    subprocess.run(
        ["sh", "-c", 'rm -rf -- "$1" >/dev/null 2>&1 &', "sh", str(folder)],
        check=True,
        timeout=30,
    )


@contextmanager
def _pgserver(folder: Path) -> Iterator[str]:
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pgserver

        server = pgserver.get_server(folder, cleanup_mode="stop")
    url = str(server.get_uri())
    _make_throwaway(url)
    try:
        yield url
    finally:
        server.cleanup()


def _make_throwaway(url: str) -> None:
    """No fsync: the test server's data dies with the session, so it need not survive a
    power cut, and stopping it need not wait for the disk."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


class Databases:
    """Fresh databases on one server, cloned from a migrated template (a clone takes a
    fraction of the migrations' time); all dropped by `drop_all` at the end.

    A clone copies the template's files (`STRATEGY FILE_COPY`): 0.16 s of the server's CPU
    each, against 0.39 s for PostgreSQL's default, which writes every block of the template
    (its catalogs included) through the WAL; the checkpoints a file copy needs are cheap on a
    server without fsync (`_make_throwaway`)."""

    def __init__(self, server_url: str) -> None:
        import psycopg

        from lobug.store.postgres.database import migrate

        self.server_url = server_url
        self.template = f"lobug_template_{uuid.uuid4().hex[:8]}"
        self.names = [self.template]
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {self.template}")
        migrate(with_database(server_url, self.template), time.time)

    def fresh(self) -> str:
        """The URL of a new database holding the migrated, empty schema."""
        import psycopg

        name = f"lobug_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.server_url, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name} TEMPLATE {self.template} STRATEGY FILE_COPY")
        self.names.append(name)
        return with_database(self.server_url, name)

    def drop_all(self) -> None:
        import psycopg

        with psycopg.connect(self.server_url, autocommit=True) as admin:
            for name in self.names:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def stored_bytes(url: str) -> bytes:
    """Everything the database holds that a purge must have erased: a SQLite file's bytes
    (its -wal and -shm too), or every live row of every PostgreSQL table as text (what VACUUM
    leaves in free space is not readable through SQL; see docs/memory.md, "PostgreSQL")."""
    path = sqlite_path(url)
    if path is not None:
        return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
        texts = [
            str(row[0])
            for (table,) in tables
            for row in conn.execute(f"SELECT t::text FROM {table} t").fetchall()
        ]
    return "\n".join(texts).encode()
