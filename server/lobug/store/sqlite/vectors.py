"""Vectors: the store is bound to one embedding model (`store_meta`), whose dimension the vec0
tables take; `reindex` re-embeds everything with another one. Facts and messages are searched
in in-memory `VectorIndex`es (exact, rebuilt from `fact_vectors` and `message_vectors` when
bound, kept in step by every write); the vec0 tables are the store of record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lobug.store.errors import EmbeddingMismatch
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import FactHit, ScoredFact, ScoredMessage, Vector
from lobug.store.sql import rows
from lobug.store.sql.database import EmbedBatch
from lobug.store.sql.dialect import marks
from lobug.store.sql.visibility import nearest_to_read, visible_facts
from lobug.store.sqlite.database import vector_blob
from lobug.store.sqlite.facts import SQLiteFacts
from lobug.store.sqlite.vector_index import VectorIndex, unit_rows


def _write_signature(conn: Any, model: str, dim: int) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO store_meta(key, value) VALUES (?, ?)",
        [("embedding_model", model), ("embedding_dim", str(dim))],
    )


def _create_vector_tables(conn: Any, dim: int) -> None:
    for table, key in (("fact_vectors", "fact_id"), ("message_vectors", "message_id")):
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
            f"{key} INTEGER PRIMARY KEY, agent_id INTEGER PARTITION KEY, "
            f"embedding float[{int(dim)}] distance_metric=cosine)"
        )


class SQLiteVectors(SQLiteFacts):
    def _index_forgotten(self, fact_ids: Sequence[int], message_ids: Sequence[int]) -> None:
        index, message_index = self._require_index(), self._require_message_index()
        for fact_id in fact_ids:
            index.remove(fact_id)
        for message_id in message_ids:
            message_index.remove(message_id)

    def _agent_deleted(self, name: str, agent_id: int) -> None:
        self._agent_ids.pop(name, None)
        self._require_index().drop_agent(agent_id)
        self._require_message_index().drop_agent(agent_id)

    def bind_embedding(self, model: str, dim: int) -> None:
        """Tie the store to one embedding model; refuse another one with a clear message."""
        signature = self.embedding_signature()
        if signature is None:
            with self._transaction() as conn:
                _write_signature(conn, model, dim)
                _create_vector_tables(conn, dim)
        elif signature == (model, dim):
            # Databases bound before message vectors existed gain their table here.
            with self._transaction() as conn:
                _create_vector_tables(conn, dim)
        else:
            raise EmbeddingMismatch.of(f"memory database {self.path}", signature, model, dim)
        self._load_index(dim)

    def reindex(self, model: str, dim: int, embed_batch: EmbedBatch) -> int:
        """Re-embed every current fact, every message that had a vector and every episode
        (summary) with a new model; return how many facts and messages were embedded."""
        (facts, fact_vectors), (messages, message_vectors), (episodes, episode_vectors) = (
            self._reembedded(embed_batch)
        )
        with self._transaction() as conn:
            conn.execute("DELETE FROM summary_vectors")
            conn.executemany(
                "INSERT INTO summary_vectors(summary_id, embedding) VALUES (?, ?)",
                [(r["id"], vector_blob(v)) for r, v in zip(episodes, episode_vectors, strict=True)],
            )
            conn.execute("DROP TABLE IF EXISTS fact_vectors")
            conn.execute("DROP TABLE IF EXISTS message_vectors")
            _create_vector_tables(conn, dim)
            for table, key, found, vectors in (
                ("fact_vectors", "fact_id", facts, fact_vectors),
                ("message_vectors", "message_id", messages, message_vectors),
            ):
                conn.executemany(
                    f"INSERT INTO {table}({key}, agent_id, embedding) VALUES (?,?,?)",
                    [
                        (r["id"], r["agent_id"], vector_blob(v))
                        for r, v in zip(found, vectors, strict=True)
                    ],
                )
            _write_signature(conn, model, dim)
        self._load_index(dim)
        return len(facts) + len(messages)

    def _load_index(self, dim: int) -> None:
        """Both in-memory indexes, built anew from the vec0 tables: the current facts', and
        the embedded messages' (scaled to unit length; a zero vector matches nothing)."""
        with self._lock:
            self.index = self._indexed("fact_vectors", "fact_id", dim, unit=False)
            self.message_index = self._indexed("message_vectors", "message_id", dim, unit=True)

    def _indexed(self, table: str, key: str, dim: int, *, unit: bool) -> VectorIndex:
        index = VectorIndex(dim)
        cursor = self._conn.execute(f"SELECT {key}, agent_id, embedding FROM {table}")
        while found := cursor.fetchmany(8192):
            blobs = b"".join(row["embedding"] for row in found)
            vectors = np.frombuffer(blobs, dtype=np.float32).reshape(-1, dim)
            agents = np.array([row["agent_id"] for row in found], dtype=np.int64)
            ids = np.array([row[key] for row in found], dtype=np.int64)
            if unit:
                vectors, kept = unit_rows(vectors)
                vectors, agents, ids = vectors[kept], agents[kept], ids[kept]
            index.add_many(agents, ids, vectors)
        return index

    def search_facts(
        self, agent: str, query: Vector, k: int, viewer: Viewer = EVERYONE
    ) -> list[ScoredFact]:
        """Current facts `viewer` may see nearest to `query` (cosine), best first, via the
        in-memory index."""
        hits = self._require_index().search(self.agent_id(agent), query, nearest_to_read(viewer, k))
        return self._scored(hits, viewer)[:k]

    def nearest_fact_hits(
        self, agent: str, query: Vector, k: int, viewer: Viewer = EVERYONE
    ) -> list[FactHit]:
        """`search_facts` without the facts' rows."""
        hits = self._require_index().search(self.agent_id(agent), query, nearest_to_read(viewer, k))
        if not hits:
            return []
        visible, shown = visible_facts(viewer)
        found = self._query(
            f"SELECT id, created_at, user_score FROM facts f WHERE id IN ({marks(hits)}){visible}",
            [*(fact_id for fact_id, _ in hits), *shown],
        )
        by_id = {row["id"]: row for row in found}
        return [
            FactHit(i, score, by_id[i]["created_at"], by_id[i]["user_score"])
            for i, score in hits
            if i in by_id
        ][:k]

    def search_facts_sqlite(self, agent: str, query: Vector, k: int) -> list[ScoredFact]:
        """The same search done by sqlite-vec's vec0 scan (the store of record)."""
        found = self._query(
            "SELECT fact_id, distance FROM fact_vectors "
            "WHERE embedding MATCH ? AND k = ? AND agent_id = ? ORDER BY distance",
            (vector_blob(query), k, self.agent_id(agent)),
        )
        return self._scored([(int(r["fact_id"]), 1.0 - float(r["distance"])) for r in found])

    def _scored(
        self, hits: Sequence[tuple[int, float]], viewer: Viewer = EVERYONE
    ) -> list[ScoredFact]:
        facts = self.facts_by_ids([fact_id for fact_id, _ in hits], viewer)
        return [ScoredFact(facts[i], score) for i, score in hits if i in facts]

    def search_messages(self, agent: str, query: Vector, k: int) -> list[ScoredMessage]:
        """The agent's embedded messages nearest to `query` (cosine), best first, through the
        in-memory index (vec0 scanned every vector of the agent: 120 ms at 100k)."""
        unit = _unit(query)
        hits = (
            []
            if unit is None
            else self._require_message_index().search(self.agent_id(agent), unit, k)
        )
        if not hits:
            return []
        found = self._query(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM conversation_log WHERE id IN ({marks(hits)})",
            [message_id for message_id, _ in hits],
        )
        by_id = {row["id"]: rows.message(agent, row) for row in found}
        return [ScoredMessage(by_id[i], score) for i, score in hits if i in by_id]

    def fact_similarities(self, ids: Sequence[int], query: Vector) -> dict[int, float]:
        """Cosine similarity of `query` to the stored vectors of these current facts (those
        without a vector are left out)."""
        if not ids:
            return {}
        return self._require_index().similarities(ids, query)  # vec0 looks ids up slowly

    def message_similarities(self, ids: Sequence[int], query: Vector) -> dict[int, float]:
        """Cosine similarity of `query` to the stored vectors of these messages (those
        without a vector are left out)."""
        unit = _unit(query)
        if not ids or unit is None:
            return {}
        return self._require_message_index().similarities(ids, unit)


def _unit(query: Vector) -> Vector | None:
    """`query` scaled to unit length; None for a zero vector, which matches nothing."""
    vectors, kept = unit_rows(np.asarray(query, dtype=np.float32).reshape(1, -1))
    return vectors[0] if kept[0] else None
