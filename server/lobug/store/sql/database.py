"""`SqlDatabase`: what the shared statements ask of an engine's database. SQLite's and
PostgreSQL's database classes implement it; every shared part of the store inherits it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar

from lobug.store.models import Clock, Message, Vector
from lobug.store.sql.dialect import Dialect


class SqlDatabase:
    """A connection (or pool) taking `?` statements. Engines override every method that
    raises here; the hooks that do nothing by default are where one engine does more."""

    dialect: ClassVar[Dialect]
    _clock: Clock

    def _transaction(self) -> AbstractContextManager[Any]:
        """One write transaction; yields a connection whose `execute` takes `?` statements."""
        raise NotImplementedError

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _count(self, sql: str, params: Sequence[Any] = ()) -> int:
        """The value of a `SELECT COUNT(*) AS n ...` query."""
        return int(self._query(sql, params)[0]["n"])

    def table_names(self) -> set[str]:
        return {row["name"] for row in self._query(self.dialect.tables)}

    def agent_id(self, name: str) -> int:
        raise NotImplementedError

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Held around a transaction and the in-memory mirrors updated after it commits, so
        no other write comes between (SQLite's store lock); nothing where there is no mirror."""
        yield

    def _lock_fact_writers(self, conn: Any, agent_id: int) -> None:
        """Inside a transaction: the agent's other fact writers wait until it ends (a
        PostgreSQL advisory lock; SQLite's write transaction already holds the file)."""

    def _vector_value(self, vector: Vector) -> Any:
        """An embedding as its column value (a float32 blob; a pgvector)."""
        raise NotImplementedError

    def _agent_known(self, name: str, agent_id: int) -> None:
        """The agent `name` exists with this id (SQLite caches it; PostgreSQL does not: another
        process may delete the agent)."""

    def _index_message_vectors(self, embedded: Sequence[tuple[Message, Vector]]) -> None:
        """After the transaction storing these message vectors committed, still inside
        `_writing`: the engine's in-memory index of them follows (SQLite); nothing where
        there is none."""

    def _erase_free_pages(self) -> None:
        """After a purge: the engine's way of leaving no bytes of the erased text."""
        raise NotImplementedError
