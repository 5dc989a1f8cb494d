"""`SQLiteStore`: the parts of the SQLite engine put together; it implements `Store`."""

from __future__ import annotations

import time
from pathlib import Path

from lobug.store.models import Clock
from lobug.store.sqlite.activity import SQLiteActivity
from lobug.store.sqlite.blocks import SQLiteBlocks
from lobug.store.sqlite.forgetting import SQLiteForgetting
from lobug.store.sqlite.fulltext import SQLiteFullText
from lobug.store.sqlite.queue import SQLiteWorkQueue
from lobug.store.sqlite.summaries import SQLiteSummaries
from lobug.store.sqlite.vectors import SQLiteVectors


class SQLiteStore(
    SQLiteWorkQueue,
    SQLiteVectors,
    SQLiteForgetting,
    SQLiteSummaries,
    SQLiteBlocks,
    SQLiteFullText,
    SQLiteActivity,
):
    """Thread-safe: one connection guarded by a lock (WAL keeps reads cheap). Opening migrates
    the file and repairs a damaged full-text index; `bind_embedding` loads the vectors."""

    def __init__(self, path: Path | str, *, clock: Clock = time.time) -> None:
        super().__init__(path, clock=clock)
        self.repair_full_text_search()
