"""Work that one process at a time may do (the maintenance pass): a session advisory lock,
held on one pooled connection while the work runs, released when it ends or when that
connection dies."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from lobug.store.postgres.database import PostgresDatabase

EXCLUSIVE_LOCK = 0x10B0E  # pg_try_advisory_lock(EXCLUSIVE_LOCK, crc32(name))


class PostgresExclusive(PostgresDatabase):
    @contextmanager
    def exclusively(self, name: str) -> Iterator[bool]:
        """True inside when this process holds `name` (and no other does until the block
        ends); False when another process holds it: skip the work."""
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
