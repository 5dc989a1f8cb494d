"""`SQLiteStore`: the parts of the SQLite engine put together; it implements `Store`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lobug.store.models import Clock
from lobug.store.sql.activity import SqlActivity
from lobug.store.sql.blocks import SqlBlocks
from lobug.store.sql.dreams import SqlDreams
from lobug.store.sql.importing import SqlImport
from lobug.store.sql.purges import SqlPurges
from lobug.store.sql.reminders import SqlReminders
from lobug.store.sql.topics import SqlTopics
from lobug.store.sqlite.backup import FileHold, SQLiteBackup, hold_shared
from lobug.store.sqlite.database import prepare_private_file
from lobug.store.sqlite.episodes import SQLiteEpisodes
from lobug.store.sqlite.fulltext import SQLiteFullText
from lobug.store.sqlite.queue import SQLiteWorkQueue
from lobug.store.sqlite.vectors import SQLiteVectors


class SQLiteStore(
    SQLiteWorkQueue,
    SQLiteVectors,
    SqlPurges,
    SqlDreams,
    SqlTopics,
    SQLiteEpisodes,
    SqlBlocks,
    SqlReminders,
    SQLiteFullText,
    SqlActivity,
    SqlImport,
    SQLiteBackup,
):
    """Thread-safe: one connection guarded by a lock (WAL keeps reads cheap). Opening migrates
    the file and repairs a damaged full-text index; `bind_embedding` loads the vectors. While
    open it holds a shared lock on the file's `-lobug.lock` (see `backup.py`: a restore
    refuses while any store has the database open)."""

    def __init__(self, path: Path | str, *, clock: Clock = time.time) -> None:
        self._hold: FileHold | None = None
        if str(path) != ":memory:":
            prepare_private_file(Path(path))  # its folders first: the lock file goes beside it
            self._hold = hold_shared(Path(path))
        super().__init__(path, clock=clock)
        self.repair_full_text_search()

    @contextmanager
    def exclusively(self, name: str) -> Iterator[bool]:
        """Always True: one process serves a SQLite file."""
        yield True

    def close(self) -> None:
        super().close()
        if self._hold is not None:
            self._hold.close()
            self._hold = None
