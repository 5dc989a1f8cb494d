"""Vectors in pgvector columns: the store is bound to one embedding model (`store_meta`),
whose dimension `fact_vectors` and `message_vectors` take, each with an HNSW index (cosine)
and an index on the agent. `reindex` re-embeds everything with another model.

HNSW is approximate: `ef_search` candidates are visited per query (LOBUG_HNSW_EF_SEARCH,
`EF_SEARCH` by default; recall@5 against exact search is in README's "Scaling out").
pgvector filters by agent after the index scan, so when an agent holds a small share of all
vectors the index may return fewer than `k` hits; the search then runs again exactly over
that agent's rows."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from lobug.store.errors import EmbeddingMismatch
from lobug.store.models import ScoredFact, ScoredMessage, Vector
from lobug.store.postgres.facts import PostgresFacts
from lobug.store.postgres.log import as_vector
from lobug.store.sqlite import rows

EmbedBatch = Callable[[list[str]], list[Vector]]
EF_SEARCH = 400  # recall@5 >= 0.99 on the bench's synthetic 384-d vectors (README)
INDEX_BUILD_MEMORY = "512MB"  # the graph of 1M x 384 fits; a build that spills is much slower
VECTOR_TABLES = (("fact_vectors", "fact_id", "facts"), ("message_vectors", "message_id", None))


def _embed_all(embed_batch: EmbedBatch, texts: list[str]) -> list[Vector]:
    vectors: list[Vector] = []
    for start in range(0, len(texts), 256):
        vectors.extend(embed_batch(texts[start : start + 256]))
    return vectors


def _write_signature(conn: Any, model: str, dim: int) -> None:
    for key, value in (("embedding_model", model), ("embedding_dim", str(dim))):
        conn.execute(
            "INSERT INTO store_meta(key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def create_vector_tables(conn: Any, dim: int) -> None:
    for table, key, _ in VECTOR_TABLES:
        parent = "facts" if key == "fact_id" else "conversation_log"
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} ({key} BIGINT PRIMARY KEY REFERENCES "
            f"{parent}(id), agent_id BIGINT NOT NULL, embedding vector({int(dim)}) NOT NULL)"
        )
        conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_by_agent ON {table}(agent_id)")
    create_vector_indexes(conn)


def create_vector_indexes(conn: Any) -> None:
    """The HNSW indexes (cosine), where missing. Building one over loaded rows is much faster
    than growing it row by row: bulk loads drop them first (`drop_vector_indexes`)."""
    conn.execute(f"SET maintenance_work_mem = '{INDEX_BUILD_MEMORY}'")
    for table, _, _ in VECTOR_TABLES:
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} "
            "USING hnsw (embedding vector_cosine_ops)"
        )
    conn.execute("RESET maintenance_work_mem")


def drop_vector_indexes(conn: Any) -> None:
    for table, _, _ in VECTOR_TABLES:
        conn.execute(f"DROP INDEX IF EXISTS {table}_hnsw")


def _similarity(distance: float | None) -> float | None:
    """1 - cosine distance; None for a zero vector (pgvector's distance is NaN)."""
    if distance is None or math.isnan(distance):
        return None
    return 1.0 - float(distance)


class PostgresVectors(PostgresFacts):
    ef_search = EF_SEARCH

    def embedding_signature(self) -> tuple[str, int] | None:
        meta = {r["key"]: r["value"] for r in self._query("SELECT key, value FROM store_meta")}
        if "embedding_model" not in meta:
            return None
        return meta["embedding_model"], int(meta["embedding_dim"])

    def bind_embedding(self, model: str, dim: int) -> None:
        """Tie the store to one embedding model; refuse another one with a clear message."""
        with self._transaction() as conn:
            conn.execute("LOCK TABLE store_meta IN EXCLUSIVE MODE")  # processes binding at once
            found = conn.execute("SELECT key, value FROM store_meta").fetchall()
            meta = {r["key"]: r["value"] for r in found}
            if "embedding_model" not in meta:
                _write_signature(conn, model, dim)
                create_vector_tables(conn, dim)
                return
        old = (meta["embedding_model"], int(meta["embedding_dim"]))
        if old != (model, dim):
            raise EmbeddingMismatch(
                f"The memory database was embedded with {old[0]} ({old[1]} dimensions), but "
                f"this server is configured for {model} ({dim} dimensions). Run `lobug "
                "reindex` to re-embed every fact with the configured model, or set "
                "LOBUG_EMBED_BACKEND / LOBUG_EMBED_MODEL back to the old one."
            )

    def reindex(self, model: str, dim: int, embed_batch: EmbedBatch) -> int:
        """Re-embed every current fact, and every message that had a vector, with a new model;
        return how many facts and messages were embedded."""
        facts = self._query(
            "SELECT id, agent_id, content FROM facts WHERE invalidated_at IS NULL ORDER BY id"
        )
        messages = self._query(
            "SELECT c.id, c.agent_id, c.content FROM conversation_log c "
            "JOIN message_vectors v ON v.message_id = c.id ORDER BY c.id"
            if "message_vectors" in self.table_names()
            else "SELECT 1 WHERE false"
        )
        fact_vectors = _embed_all(embed_batch, [row["content"] for row in facts])
        message_vectors = _embed_all(embed_batch, [row["content"] for row in messages])
        with self._transaction() as conn, conn.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS fact_vectors, message_vectors")
            create_vector_tables(cursor, dim)
            for (table, key, _), found, vectors in (
                (VECTOR_TABLES[0], facts, fact_vectors),
                (VECTOR_TABLES[1], messages, message_vectors),
            ):
                cursor.executemany(
                    f"INSERT INTO {table}({key}, agent_id, embedding) VALUES (%s,%s,%s)",
                    [
                        (r["id"], r["agent_id"], as_vector(v))
                        for r, v in zip(found, vectors, strict=True)
                    ],
                )
            _write_signature(cursor, model, dim)
        return len(facts) + len(messages)

    def _nearest(self, table: str, key: str, agent: str, query: Vector, k: int) -> list[Any]:
        """(id, distance) of the agent's `k` nearest rows: HNSW, exact when it found too few."""
        agent_id, q = self.agent_id(agent), as_vector(query)
        sql = (
            f"SELECT {key} AS id, embedding <=> %s AS distance FROM {table} "
            "WHERE agent_id = %s ORDER BY {order} LIMIT %s"
        )
        with self._transaction() as conn:
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(self.ef_search, int(k))}")
            found = conn.execute(sql.format(order="embedding <=> %s"), (q, agent_id, q, k))
            hits = found.fetchall()
            if len(hits) < k:  # `+ 0` keeps the planner off the HNSW index: an exact scan
                order = "(embedding <=> %s) + 0"
                hits = conn.execute(sql.format(order=order), (q, agent_id, q, k)).fetchall()
        return hits

    def search_facts(self, agent: str, query: Vector, k: int) -> list[ScoredFact]:
        """Current facts nearest to `query` (cosine), best first."""
        hits = self._nearest("fact_vectors", "fact_id", agent, query, k)
        facts = self.facts_by_ids([hit["id"] for hit in hits])
        scored = [(hit["id"], _similarity(hit["distance"])) for hit in hits]
        return [ScoredFact(facts[i], s) for i, s in scored if i in facts and s is not None]

    def search_messages(self, agent: str, query: Vector, k: int) -> list[ScoredMessage]:
        """The agent's embedded messages nearest to `query` (cosine), best first."""
        hits = self._nearest("message_vectors", "message_id", agent, query, k)
        if not hits:
            return []
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log WHERE id = ANY(%s)",
            ([hit["id"] for hit in hits],),
        )
        by_id = {row["id"]: rows.message(agent, row) for row in found}
        scored = [(hit["id"], _similarity(hit["distance"])) for hit in hits]
        return [ScoredMessage(by_id[i], s) for i, s in scored if i in by_id and s is not None]

    def fact_similarities(self, ids: Sequence[int], query: Vector) -> dict[int, float]:
        """Cosine similarity of `query` to the stored vectors of these current facts (those
        without a vector are left out)."""
        return self._similarities("fact_vectors", "fact_id", ids, query)

    def message_similarities(self, ids: Sequence[int], query: Vector) -> dict[int, float]:
        """Cosine similarity of `query` to the stored vectors of these messages (those
        without a vector are left out)."""
        return self._similarities("message_vectors", "message_id", ids, query)

    def _similarities(
        self, table: str, key: str, ids: Sequence[int], query: Vector
    ) -> dict[int, float]:
        if not ids:
            return {}
        found = self._query(
            f"SELECT {key} AS id, embedding <=> %s AS distance FROM {table} WHERE {key} = ANY(%s)",
            (as_vector(query), list(ids)),
        )
        scored = {int(row["id"]): _similarity(row["distance"]) for row in found}
        return {i: s for i, s in scored.items() if s is not None}
