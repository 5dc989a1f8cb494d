"""Vectors in pgvector columns: the store is bound to one embedding model (`store_meta`),
whose dimension `fact_vectors` and `message_vectors` take, each with an HNSW index (cosine)
and an index on the agent. `reindex` re-embeds everything with another model.

How a search reaches recall@5 >= 0.99 against exact search (docs/operations.md has the figures):
- An agent with at most `EXACT_SCAN_ROWS` vectors (`exact_scan_rows`) is searched exactly
  (its rows through the agent index, every distance computed).
- A larger one goes through HNSW (m 16, ef_construction `HNSW_EF_CONSTRUCTION`), searched with
  `ef_search` candidates (LOBUG_HNSW_EF_SEARCH, `EF_SEARCH` by default): recall@5 1.000 at
  100k and 1M bench vectors whose local intrinsic dimension is that of the bundled model's
  (`scripts/bench_store.py`).
- pgvector 0.6 filters by agent after the index scan (0.8's iterative scans are not there), so
  when the agent holds a small share of a large table the index may return fewer than `k` of
  its rows: the search then runs again exactly over that agent's rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lobug.store.errors import EmbeddingMismatch
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import FactHit, ScoredFact, ScoredMessage, Vector
from lobug.store.postgres.database import as_vector
from lobug.store.postgres.facts import PostgresFacts
from lobug.store.sql import rows
from lobug.store.sql.database import EmbedBatch
from lobug.store.sql.visibility import nearest_to_read, visible_facts

EF_SEARCH = 200  # recall@5 1.000 at 100k and 1M bench vectors, 0.98 at 1M with 100 (docs)
HNSW_M = 16  # pgvector's default (links per row)
HNSW_EF_CONSTRUCTION = 200  # pgvector's 64: recall@5 0.88 at 1M bench vectors, ef_search 200
EXACT_SCAN_ROWS = 20_000  # an agent with no more vectors is searched exactly
INDEX_BUILD_MIN_MB = 512  # maintenance_work_mem for a build: at least this, more for big tables
INDEX_BUILD_MAX_MB = 8192
VECTOR_TABLES = (("fact_vectors", "fact_id", "facts"), ("message_vectors", "message_id", None))


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
    create_summary_vectors(conn, dim)
    create_vector_indexes(conn)


def create_summary_vectors(conn: Any, dim: int) -> None:
    """Episodes' vectors: few (one per 20 messages or so), so compared by an exact scan of
    the agent's rows, without an HNSW index; deleted with their summary."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS summary_vectors (summary_id BIGINT PRIMARY KEY REFERENCES "
        "summaries(id) ON DELETE CASCADE, agent_id BIGINT NOT NULL, "
        f"embedding vector({int(dim)}) NOT NULL)"
    )
    conn.execute("CREATE INDEX IF NOT EXISTS summary_vectors_by_agent ON summary_vectors(agent_id)")


def index_build_memory_mb(rows: int, dim: int) -> int:
    """maintenance_work_mem (MB) that holds the HNSW graph of `rows` vectors of `dim` while it
    is built: a build whose graph outgrows it goes on from disk, many times slower. Per row:
    the vector, up to 2 x m neighbours on the ground layer (and the rare upper ones) with
    their distances, and pgvector's bookkeeping, with a quarter to spare."""
    per_row = dim * 4 + 3 * HNSW_M * 16 + 256
    needed = math.ceil(rows * per_row * 1.25 / 2**20)
    return min(INDEX_BUILD_MAX_MB, max(INDEX_BUILD_MIN_MB, needed))


def _build_memory_for(conn: Any, table: str) -> int:
    rows = conn.execute(f"SELECT COUNT(*) AS n FROM {table}").fetchone()["n"]
    one = conn.execute(f"SELECT vector_dims(embedding) AS dim FROM {table} LIMIT 1").fetchone()
    return index_build_memory_mb(int(rows), int(one["dim"]) if one else 0)


def create_vector_indexes(conn: Any) -> None:
    """The HNSW indexes (cosine), where missing. Building one over loaded rows is much faster
    than growing it row by row: bulk loads drop them first (`drop_vector_indexes`)."""
    for table, _, _ in VECTOR_TABLES:
        index = f"{table}_hnsw"
        if conn.execute("SELECT to_regclass(%s) AS found", (index,)).fetchone()["found"]:
            continue
        conn.execute(f"SET maintenance_work_mem = '{_build_memory_for(conn, table)}MB'")
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {index} ON {table} "
            f"USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
        )
    conn.execute("RESET maintenance_work_mem")


def drop_vector_indexes(conn: Any) -> None:
    for table, _, _ in VECTOR_TABLES:
        conn.execute(f"DROP INDEX IF EXISTS {table}_hnsw")


def _rows_at_most(conn: Any, table: str, agent_id: int, limit: int) -> bool:
    """Whether the agent has at most `limit` rows in `table` (counting no further)."""
    found = conn.execute(
        f"SELECT COUNT(*) AS n FROM (SELECT 1 FROM {table} WHERE agent_id = %s LIMIT %s) "
        "AS agent_rows",
        (agent_id, limit + 1),
    ).fetchone()
    return int(found["n"]) <= limit


def _similarity(distance: float | None) -> float | None:
    """1 - cosine distance; None for a zero vector (pgvector's distance is NaN)."""
    if distance is None or math.isnan(distance):
        return None
    return 1.0 - float(distance)


class PostgresVectors(PostgresFacts):
    ef_search = EF_SEARCH
    exact_scan_rows = EXACT_SCAN_ROWS

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
        if old == (model, dim) and "summary_vectors" not in self.table_names():
            with self._transaction() as conn:  # bound before the schema's version 2
                create_summary_vectors(conn, dim)
        if old != (model, dim):
            raise EmbeddingMismatch.of("memory database", old, model, dim)

    def reindex(self, model: str, dim: int, embed_batch: EmbedBatch) -> int:
        """Re-embed every current fact, every message that had a vector and every episode
        (summary) with a new model; return how many facts and messages were embedded."""
        (facts, fact_vectors), (messages, message_vectors), (episodes, episode_vectors) = (
            self._reembedded(embed_batch)
        )
        with self._transaction() as conn, conn.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS fact_vectors, message_vectors, summary_vectors")
            create_vector_tables(cursor, dim)
            for (table, key, _), found, vectors in (
                (VECTOR_TABLES[0], facts, fact_vectors),
                (VECTOR_TABLES[1], messages, message_vectors),
                (("summary_vectors", "summary_id", None), episodes, episode_vectors),
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
        """(id, distance) of the agent's `k` nearest rows: exact for an agent with few rows,
        else HNSW, and exact again when the index found too few of the agent's rows."""
        agent_id, q = self.agent_id(agent), as_vector(query)
        sql = (
            f"SELECT {key} AS id, embedding <=> %s AS distance FROM {table} "
            "WHERE agent_id = %s ORDER BY {order} LIMIT %s"
        )
        exact = sql.format(order="(embedding <=> %s) + 0")  # `+ 0`: the planner skips HNSW
        with self._transaction() as conn:
            if _rows_at_most(conn, table, agent_id, self.exact_scan_rows):
                return list(conn.execute(exact, (q, agent_id, q, k)).fetchall())
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(self.ef_search, int(k))}")
            found = conn.execute(sql.format(order="embedding <=> %s"), (q, agent_id, q, k))
            hits = found.fetchall()
            if len(hits) < k:
                hits = conn.execute(exact, (q, agent_id, q, k)).fetchall()
        return list(hits)

    def search_facts(
        self, agent: str, query: Vector, k: int, viewer: Viewer = EVERYONE
    ) -> list[ScoredFact]:
        """Current facts `viewer` may see nearest to `query` (cosine), best first."""
        hits = self._nearest("fact_vectors", "fact_id", agent, query, nearest_to_read(viewer, k))
        facts = self.facts_by_ids([hit["id"] for hit in hits], viewer)
        scored = [(hit["id"], _similarity(hit["distance"])) for hit in hits]
        return [ScoredFact(facts[i], s) for i, s in scored if i in facts and s is not None][:k]

    def nearest_fact_hits(
        self, agent: str, query: Vector, k: int, viewer: Viewer = EVERYONE
    ) -> list[FactHit]:
        """`search_facts` without the facts' rows."""
        hits = self._nearest("fact_vectors", "fact_id", agent, query, nearest_to_read(viewer, k))
        if not hits:
            return []
        visible, shown = visible_facts(viewer, mark="%s")
        found = self._query(
            f"SELECT id, created_at, user_score FROM facts f WHERE id = ANY(%s){visible}",
            ([hit["id"] for hit in hits], *shown),
        )
        by_id = {row["id"]: row for row in found}
        scored = [(hit["id"], _similarity(hit["distance"])) for hit in hits]
        return [
            FactHit(i, s, by_id[i]["created_at"], by_id[i]["user_score"])
            for i, s in scored
            if i in by_id and s is not None
        ][:k]

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
