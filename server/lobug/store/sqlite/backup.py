"""Online backup and restore of the database file, and the lock file that tells a restore
whether some process has the database open.

Every `SQLiteStore` holds a shared `flock` on `<db>-lobug.lock` while it is open (the kernel
drops it when the process ends, killed or not, so it never goes stale). A restore takes the
lock exclusively without waiting: when it cannot, a server (or another `lobug` command) has
the file open and the restore refuses.
"""

from __future__ import annotations

import fcntl
import os
import weakref
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from lobug.store.errors import DatabaseInUse, StoreError
from lobug.store.sqlite.database import (
    SQLiteDatabase,
    is_storage_failure,
    open_connection,
    prepare_private_file,
)

RESTORE_STEP_PAGES = 1024


def lock_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + "-lobug.lock")


class FileHold(AbstractContextManager["FileHold"]):
    """A `flock` on the database's lock file, released by `close`, when the object is
    collected, or when the process ends (the kernel drops it: it never goes stale)."""

    def __init__(self, db_path: Path, *, exclusive: bool) -> None:
        descriptor = os.open(lock_path(db_path), os.O_CREAT | os.O_RDWR, 0o600)
        self._release = weakref.finalize(self, os.close, descriptor)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
        except BlockingIOError:
            self.close()
            raise DatabaseInUse(
                f"{db_path} is open in another process (a running `lobug serve` or `lobug "
                "memory-server`, or another lobug command): stop it, then restore"
            ) from None

    def close(self) -> None:
        self._release()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def hold_shared(db_path: Path) -> FileHold:
    """The shared hold an open store keeps on its database (waits while a restore runs)."""
    return FileHold(db_path, exclusive=False)


def hold_exclusive(db_path: Path) -> FileHold:
    """The hold of a restore. Raises DatabaseInUse when any process has the database open."""
    return FileHold(db_path, exclusive=True)


def integrity(path: Path) -> str:
    """`PRAGMA integrity_check` of a database file: `ok`, or what is wrong."""
    conn = open_connection(path)
    try:
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        if "schema_migrations" not in {row[0] for row in tables}:
            return "not a Lo-Bug database (no schema_migrations table)"
        found = [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
        return "ok" if found == ["ok"] else "; ".join(found)
    except Exception as exc:
        if is_storage_failure(exc):
            return f"not a readable database ({exc})"
        raise
    finally:
        conn.close()


def restore_database(backup: Path, db_path: Path) -> None:
    """Replace the database with a backup, page by page. Raises StoreError for a damaged
    backup and DatabaseInUse while any process has the database open."""
    verdict = integrity(backup)
    if verdict != "ok":
        raise StoreError(f"{backup} cannot be restored: {verdict}")
    prepare_private_file(db_path)
    with hold_exclusive(db_path):
        source, target = open_connection(backup), open_connection(db_path)
        try:
            source.backup(target, pages=RESTORE_STEP_PAGES)
        finally:
            source.close()
            target.close()


class SQLiteBackup(SQLiteDatabase):
    def backup(self, target: Path) -> str:
        """Copy the database to `target` while it is in use (SQLite's online backup, in one
        step: a consistent snapshot holding every write committed before it began, taken
        without blocking writers, which WAL lets go on). Written to a temporary file and
        renamed, so `target` is a whole copy or untouched. Returns the copy's integrity check
        (`ok`)."""
        partial = target.with_name(target.name + ".partial")
        partial.unlink(missing_ok=True)
        prepare_private_file(partial)
        copy: Any = open_connection(partial)
        try:
            with self._lock:
                self._conn.backup(copy, pages=-1)
        finally:
            copy.close()
        verdict = integrity(partial)
        if verdict != "ok":
            partial.unlink()
            raise StoreError(f"the backup failed its integrity check: {verdict}")
        partial.replace(target)
        return verdict
