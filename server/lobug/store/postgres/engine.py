"""`PostgresStore`: the parts of the PostgreSQL engine put together; it implements `Store`."""

from __future__ import annotations

import time

from lobug.store.models import Clock
from lobug.store.postgres.database import POOL_SIZE
from lobug.store.postgres.episodes import PostgresEpisodes
from lobug.store.postgres.fulltext import PostgresFullText
from lobug.store.postgres.queue import PostgresWorkQueue
from lobug.store.postgres.vectors import EF_SEARCH, PostgresVectors
from lobug.store.sql.activity import SqlActivity
from lobug.store.sql.blocks import SqlBlocks
from lobug.store.sql.dreams import SqlDreams
from lobug.store.sql.importing import SqlImport
from lobug.store.sql.purges import SqlPurges
from lobug.store.sql.reminders import SqlReminders
from lobug.store.sql.topics import SqlTopics


class PostgresStore(
    PostgresWorkQueue,
    PostgresVectors,
    SqlPurges,
    SqlDreams,
    SqlTopics,
    PostgresEpisodes,
    SqlBlocks,
    SqlReminders,
    PostgresFullText,
    SqlActivity,
    SqlImport,
):
    """Thread-safe and multi-process: a connection pool per process, transactions in the
    database, advisory locks where a check and a write must be one step. Opening migrates
    the schema; `bind_embedding` creates the vector tables."""

    def __init__(
        self,
        url: str,
        *,
        clock: Clock = time.time,
        pool_size: int = POOL_SIZE,
        ef_search: int = EF_SEARCH,
    ) -> None:
        super().__init__(url, clock=clock, pool_size=pool_size)
        self.ef_search = ef_search
