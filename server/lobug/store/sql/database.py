"""`SqlDatabase`: what the shared statements ask of an engine's database. SQLite's and
PostgreSQL's database classes implement it; every shared part of the store inherits it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar

from lobug.store.models import Clock, Message, Vector
from lobug.store.sql.dialect import Dialect

EmbedBatch = Callable[[list[str]], list[Vector]]
EMBED_BATCH = 256  # texts per call of the embedder while re-embedding everything


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

    def schema_version(self) -> int:
        found = self._query("SELECT MAX(version) AS version FROM schema_migrations")
        return int(found[0]["version"] or 0)

    def embedding_signature(self) -> tuple[str, int] | None:
        meta = {r["key"]: r["value"] for r in self._query("SELECT key, value FROM store_meta")}
        if "embedding_model" not in meta:
            return None
        return meta["embedding_model"], int(meta["embedding_dim"])

    def _reembedded(self, embed_batch: EmbedBatch) -> list[tuple[list[Any], list[Vector]]]:
        """For `reindex`: the current facts, the messages that have a vector and the episodes
        (summaries), as rows of `id, agent_id, content`, each kind with its new vectors."""
        facts = self._query(
            "SELECT id, agent_id, content FROM facts WHERE invalidated_at IS NULL ORDER BY id"
        )
        messages = (
            self._query(
                "SELECT c.id, c.agent_id, c.content FROM conversation_log c "
                "JOIN message_vectors v ON v.message_id = c.id ORDER BY c.id"
            )
            if "message_vectors" in self.table_names()
            else []
        )
        episodes = self._query("SELECT id, agent_id, content FROM summaries ORDER BY id")
        return [(found, embed_all(embed_batch, found)) for found in (facts, messages, episodes)]

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

    def _erase_free_pages(self, *, rewrite_file: bool = False) -> None:
        """After a purge: the engine's way of leaving no bytes of the erased text
        (`rewrite_file`: a whole purge job or agent finished, so the engine rewrites what it
        cannot otherwise promise is clean; SQLite's whole file)."""
        raise NotImplementedError


def embed_all(embed_batch: EmbedBatch, found: Sequence[Any]) -> list[Vector]:
    """The vectors of the rows' `content`, `EMBED_BATCH` texts at a time."""
    texts = [row["content"] for row in found]
    vectors: list[Vector] = []
    for start in range(0, len(texts), EMBED_BATCH):
        vectors.extend(embed_batch(texts[start : start + EMBED_BATCH]))
    return vectors
