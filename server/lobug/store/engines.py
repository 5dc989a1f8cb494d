"""Which engine a database URL names, and opening it: `sqlite:///path` (the default, one
process per file) or `postgresql://user:pass@host:port/db` (several processes; needs the
`lobug[postgres]` extra)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from lobug.store.errors import StoreError
from lobug.store.protocol import Store

SQLITE_PREFIX = "sqlite:///"
POSTGRES_PREFIXES = ("postgresql://", "postgres://")


def sqlite_path(url: str) -> Path | None:
    """The file of a `sqlite:///path` URL (`sqlite:////abs/path` or `sqlite:///rel/path`);
    None for another engine."""
    return Path(url[len(SQLITE_PREFIX) :]) if url.startswith(SQLITE_PREFIX) else None


def is_postgres(url: str) -> bool:
    return url.startswith(POSTGRES_PREFIXES)


def redacted(url: str) -> str:
    """The URL with its password hidden, for logs and health reports."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def open_database(url: str, *, pool_size: int = 10, ef_search: int = 200) -> Store:
    """The store at `url`, migrated (not yet bound to an embedding model); `pool_size` and
    `ef_search` concern PostgreSQL only."""
    path = sqlite_path(url)
    if path is not None:
        from lobug.store.sqlite.engine import SQLiteStore

        return SQLiteStore(path)
    if is_postgres(url):
        try:
            from lobug.store.postgres.engine import PostgresStore
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise StoreError(
                "PostgreSQL needs the postgres extra: pip install 'lobug[postgres]'"
            ) from exc
        return PostgresStore(url, pool_size=pool_size, ef_search=ef_search)
    raise StoreError(f"unknown database URL {redacted(url)!r}: use sqlite:/// or postgresql://")
