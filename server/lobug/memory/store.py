"""All SQL lives here: one SQLite file (WAL), numbered migrations, and sqlite-vec for vectors.

Tables: agents (memory namespaces), conversation_log, facts (with history: superseded facts are
invalidated and linked, never deleted), summaries, base_memory, store_meta (embedding model and
dimension) and schema_migrations. `fact_vectors` is a vec0 table of the *current* facts; its
dimension comes from the embedding model, so it is created by `bind_embedding`, not by a
migration. An in-memory `VectorIndex` mirrors it for fast exact search.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from lobug.memory.vector_index import VectorIndex

Vector = npt.NDArray[np.float32]
Clock = Callable[[], float]
FACT_TYPES = ("personal", "preference", "knowledge", "event")


class StoreError(RuntimeError):
    pass


class EmbeddingMismatch(StoreError):
    """The database was embedded with another model or dimension than the one configured."""


@dataclass(frozen=True)
class Message:
    id: int
    agent: str
    device_id: str
    role: str
    content: str
    created_at: float
    summarized: bool


@dataclass(frozen=True)
class NewFact:
    content: str
    fact_type: str = "knowledge"
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    time_span: str | None = None
    confidence: float = 0.5
    source_message_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class Fact:
    id: int
    agent: str
    content: str
    fact_type: str
    subject: str | None
    relation: str | None
    object: str | None
    time_span: str | None
    confidence: float
    user_score: int | None
    source_message_ids: tuple[int, ...]
    created_at: float
    valid_from: float
    invalidated_at: float | None
    superseded_by: int | None

    @property
    def is_current(self) -> bool:
        return self.invalidated_at is None


@dataclass(frozen=True)
class ScoredFact:
    fact: Fact
    similarity: float

    @property
    def distance(self) -> float:
        return 1.0 - self.similarity


@dataclass(frozen=True)
class Summary:
    id: int
    agent: str
    content: str
    source_from_id: int
    source_to_id: int
    created_at: float
    incorporated: bool


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: Sequence[str] = field(default_factory=tuple)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "initial_schema",
        (
            """CREATE TABLE agents (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                created_at REAL NOT NULL
            )""",
            """CREATE TABLE conversation_log (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                device_id TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
                content TEXT NOT NULL,
                created_at REAL NOT NULL,
                summarized INTEGER NOT NULL DEFAULT 0
            )""",
            "CREATE INDEX conversation_log_by_device ON conversation_log(agent_id, device_id, id)",
            "CREATE INDEX conversation_log_unsummarized "
            "ON conversation_log(agent_id, summarized, id)",
            """CREATE TABLE facts (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                content TEXT NOT NULL,
                fact_type TEXT NOT NULL,
                subject TEXT,
                relation TEXT,
                object TEXT,
                time_span TEXT,
                confidence REAL NOT NULL DEFAULT 0.5,
                user_score INTEGER CHECK (user_score BETWEEN 0 AND 10),
                source_message_ids TEXT NOT NULL DEFAULT '[]',
                created_at REAL NOT NULL,
                valid_from REAL NOT NULL,
                invalidated_at REAL,
                superseded_by INTEGER REFERENCES facts(id)
            )""",
            "CREATE INDEX facts_by_agent ON facts(agent_id, invalidated_at, id)",
            """CREATE TABLE summaries (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                content TEXT NOT NULL,
                source_from_id INTEGER NOT NULL,
                source_to_id INTEGER NOT NULL,
                created_at REAL NOT NULL,
                incorporated INTEGER NOT NULL DEFAULT 0
            )""",
            "CREATE INDEX summaries_unincorporated ON summaries(agent_id, incorporated, id)",
            """CREATE TABLE base_memory (
                agent_id INTEGER PRIMARY KEY REFERENCES agents(id),
                content TEXT NOT NULL DEFAULT '',
                updated_at REAL NOT NULL
            )""",
            "CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ),
    ),
)

_FACT_COLUMNS = (
    "f.id, a.name, f.content, f.fact_type, f.subject, f.relation, f.object, f.time_span, "
    "f.confidence, f.user_score, f.source_message_ids, f.created_at, f.valid_from, "
    "f.invalidated_at, f.superseded_by"
)


def connect(path: Path | str) -> Any:
    """A pysqlite3 connection with sqlite-vec loaded (the stdlib module cannot load extensions
    on every Python build)."""
    import pysqlite3.dbapi2 as sqlite3
    import sqlite_vec

    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=10)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


def prepare_private_file(path: Path) -> None:
    """The memory is personal: new folders are the owner's only (0700) and the database is
    created readable and writable by the owner only (0600; SQLite gives its -wal and -shm
    files the same mode). Existing folders are left as they are."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def vector_blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class MemoryStore:
    """The SQLite store. Thread-safe: one connection guarded by a lock (WAL keeps reads cheap)."""

    def __init__(self, path: Path | str, *, clock: Clock = time.time) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            prepare_private_file(self.path)
        self._clock = clock
        self._lock = threading.RLock()
        self._conn = connect(path)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._agent_ids: dict[str, int] = {}
        self.index: VectorIndex | None = None
        self.migrate()

    # ------------------------------------------------------------------ plumbing

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return list(self._conn.execute(sql, params).fetchall())

    def migrate(self) -> list[int]:
        """Apply pending numbered migrations; return the versions applied now."""
        with self._lock:
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
            )
            done = {row[0] for row in self._query("SELECT version FROM schema_migrations")}
            applied = []
            for migration in MIGRATIONS:
                if migration.version in done:
                    continue
                with self._transaction() as conn:
                    for statement in migration.statements:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?,?,?)",
                        (migration.version, migration.name, self._clock()),
                    )
                applied.append(migration.version)
            return applied

    def schema_version(self) -> int:
        rows = self._query("SELECT MAX(version) FROM schema_migrations")
        return int(rows[0][0] or 0)

    def table_names(self) -> set[str]:
        return {row[0] for row in self._query("SELECT name FROM sqlite_master WHERE type='table'")}

    # ------------------------------------------------------------------ embedding binding

    def embedding_signature(self) -> tuple[str, int] | None:
        rows = dict(self._query("SELECT key, value FROM store_meta"))
        if "embedding_model" not in rows:
            return None
        return rows["embedding_model"], int(rows["embedding_dim"])

    def bind_embedding(self, model: str, dim: int) -> None:
        """Tie the store to one embedding model; refuse another one with a clear message."""
        signature = self.embedding_signature()
        if signature is None:
            with self._transaction() as conn:
                self._write_signature(conn, model, dim)
                conn.execute(self._vector_table_ddl(dim))
        elif signature != (model, dim):
            old_model, old_dim = signature
            raise EmbeddingMismatch(
                f"The memory database {self.path} was embedded with {old_model} ({old_dim} "
                f"dimensions), but this server is configured for {model} ({dim} dimensions). "
                "Run `lobug reindex` to re-embed every fact with the configured model, or set "
                "LOBUG_EMBED_BACKEND / LOBUG_EMBED_MODEL back to the old one."
            )
        self._load_index(dim)

    def reindex(
        self, model: str, dim: int, embed_batch: Callable[[list[str]], list[Vector]]
    ) -> int:
        """Re-embed every current fact with a new model; return how many were embedded."""
        facts = self._query(
            "SELECT id, agent_id, content FROM facts WHERE invalidated_at IS NULL ORDER BY id"
        )
        vectors: list[Vector] = []
        for start in range(0, len(facts), 256):
            vectors.extend(embed_batch([row[2] for row in facts[start : start + 256]]))
        with self._transaction() as conn:
            conn.execute("DROP TABLE IF EXISTS fact_vectors")
            conn.execute(self._vector_table_ddl(dim))
            conn.executemany(
                "INSERT INTO fact_vectors(fact_id, agent_id, embedding) VALUES (?,?,?)",
                [(row[0], row[1], vector_blob(v)) for row, v in zip(facts, vectors, strict=True)],
            )
            self._write_signature(conn, model, dim)
        self._load_index(dim)
        return len(facts)

    @staticmethod
    def _write_signature(conn: Any, model: str, dim: int) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO store_meta(key, value) VALUES (?, ?)",
            [("embedding_model", model), ("embedding_dim", str(dim))],
        )

    @staticmethod
    def _vector_table_ddl(dim: int) -> str:
        return (
            "CREATE VIRTUAL TABLE IF NOT EXISTS fact_vectors USING vec0("
            "fact_id INTEGER PRIMARY KEY, agent_id INTEGER PARTITION KEY, "
            f"embedding float[{int(dim)}] distance_metric=cosine)"
        )

    def _load_index(self, dim: int) -> None:
        index = VectorIndex(dim)
        with self._lock:
            cursor = self._conn.execute("SELECT fact_id, agent_id, embedding FROM fact_vectors")
            while rows := cursor.fetchmany(8192):
                fact_ids, agent_ids, blobs = zip(*rows, strict=True)
                vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(-1, dim)
                index.add_many(agent_ids, fact_ids, vectors)
            self.index = index

    def _require_index(self) -> VectorIndex:
        if self.index is None:
            raise StoreError("bind_embedding() must be called before vectors are used")
        return self.index

    # ------------------------------------------------------------------ agents

    def agent_id(self, name: str) -> int:
        """The id of a namespace, created on first use."""
        cached = self._agent_ids.get(name)
        if cached is not None:
            return cached
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO agents(name, created_at) VALUES (?, ?)",
                (name, self._clock()),
            )
            (agent_id,) = conn.execute("SELECT id FROM agents WHERE name = ?", (name,)).fetchone()
        self._agent_ids[name] = int(agent_id)
        return int(agent_id)

    # ------------------------------------------------------------------ conversation log

    def append_message(self, agent: str, device_id: str, role: str, content: str) -> Message:
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO conversation_log(agent_id, device_id, role, content, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (agent_id, device_id, role, content, now),
            )
            message_id = int(cursor.lastrowid)
        return Message(message_id, agent, device_id, role, content, now, False)

    def recent_messages(self, agent: str, device_id: str, limit: int) -> list[Message]:
        """The device's last `limit` messages, oldest first."""
        rows = self._query(
            "SELECT id, device_id, role, content, created_at, summarized FROM conversation_log "
            "WHERE agent_id = ? AND device_id = ? ORDER BY id DESC LIMIT ?",
            (self.agent_id(agent), device_id, limit),
        )
        return [self._message(agent, row) for row in reversed(rows)]

    def count_unsummarized(self, agent: str) -> int:
        rows = self._query(
            "SELECT COUNT(*) FROM conversation_log WHERE agent_id = ? AND summarized = 0",
            (self.agent_id(agent),),
        )
        return int(rows[0][0])

    def unsummarized_messages(self, agent: str) -> list[Message]:
        rows = self._query(
            "SELECT id, device_id, role, content, created_at, summarized FROM conversation_log "
            "WHERE agent_id = ? AND summarized = 0 ORDER BY id",
            (self.agent_id(agent),),
        )
        return [self._message(agent, row) for row in rows]

    def count_messages(self, agent: str) -> int:
        rows = self._query(
            "SELECT COUNT(*) FROM conversation_log WHERE agent_id = ?", (self.agent_id(agent),)
        )
        return int(rows[0][0])

    @staticmethod
    def _message(agent: str, row: Sequence[Any]) -> Message:
        return Message(row[0], agent, row[1], row[2], row[3], row[4], bool(row[5]))

    # ------------------------------------------------------------------ summaries

    def add_summary(self, agent: str, content: str, messages: Sequence[Message]) -> Summary:
        """Store a summary and mark the messages it covers as summarized, atomically."""
        if not messages:
            raise StoreError("a summary must cover at least one message")
        agent_id = self.agent_id(agent)
        first, last = messages[0].id, messages[-1].id
        now = self._clock()
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO summaries(agent_id, content, source_from_id, source_to_id, "
                "created_at) VALUES (?, ?, ?, ?, ?)",
                (agent_id, content, first, last, now),
            )
            conn.executemany(
                "UPDATE conversation_log SET summarized = 1 WHERE id = ? AND agent_id = ?",
                [(m.id, agent_id) for m in messages],
            )
        return Summary(int(cursor.lastrowid), agent, content, first, last, now, False)

    def unincorporated_summaries(self, agent: str) -> list[Summary]:
        rows = self._query(
            "SELECT id, content, source_from_id, source_to_id, created_at, incorporated "
            "FROM summaries WHERE agent_id = ? AND incorporated = 0 ORDER BY id",
            (self.agent_id(agent),),
        )
        return [Summary(r[0], agent, r[1], r[2], r[3], r[4], bool(r[5])) for r in rows]

    def count_unincorporated(self, agent: str) -> int:
        rows = self._query(
            "SELECT COUNT(*) FROM summaries WHERE agent_id = ? AND incorporated = 0",
            (self.agent_id(agent),),
        )
        return int(rows[0][0])

    def count_summaries(self, agent: str) -> int:
        rows = self._query(
            "SELECT COUNT(*) FROM summaries WHERE agent_id = ?", (self.agent_id(agent),)
        )
        return int(rows[0][0])

    def summaries(self, agent: str) -> list[Summary]:
        rows = self._query(
            "SELECT id, content, source_from_id, source_to_id, created_at, incorporated "
            "FROM summaries WHERE agent_id = ? ORDER BY id",
            (self.agent_id(agent),),
        )
        return [Summary(r[0], agent, r[1], r[2], r[3], r[4], bool(r[5])) for r in rows]

    # ------------------------------------------------------------------ base memory

    def base_memory(self, agent: str) -> str:
        rows = self._query(
            "SELECT content FROM base_memory WHERE agent_id = ?", (self.agent_id(agent),)
        )
        return str(rows[0][0]) if rows else ""

    def distill_base_memory(
        self, agent: str, content: str, incorporated: Sequence[Summary]
    ) -> None:
        """Replace the base memory and mark the summaries it absorbed, atomically."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO base_memory(agent_id, content, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(agent_id) DO UPDATE SET content = excluded.content, "
                "updated_at = excluded.updated_at",
                (agent_id, content, self._clock()),
            )
            conn.executemany(
                "UPDATE summaries SET incorporated = 1 WHERE id = ? AND agent_id = ?",
                [(s.id, agent_id) for s in incorporated],
            )

    # ------------------------------------------------------------------ facts

    def add_fact(
        self, agent: str, fact: NewFact, vector: Vector, *, supersedes: Sequence[int] = ()
    ) -> Fact:
        """Insert a current fact with its vector; facts in `supersedes` become history."""
        index = self._require_index()
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO facts(agent_id, content, fact_type, subject, relation, object, "
                "time_span, confidence, source_message_ids, created_at, valid_from) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    agent_id,
                    fact.content,
                    fact.fact_type,
                    fact.subject,
                    fact.relation,
                    fact.object,
                    fact.time_span,
                    fact.confidence,
                    json.dumps(list(fact.source_message_ids)),
                    now,
                    now,
                ),
            )
            fact_id = int(cursor.lastrowid)
            conn.execute(
                "INSERT INTO fact_vectors(fact_id, agent_id, embedding) VALUES (?, ?, ?)",
                (fact_id, agent_id, vector_blob(vector)),
            )
            for old_id in supersedes:
                conn.execute(
                    "UPDATE facts SET invalidated_at = ?, superseded_by = ? "
                    "WHERE id = ? AND invalidated_at IS NULL",
                    (now, fact_id, old_id),
                )
                conn.execute("DELETE FROM fact_vectors WHERE fact_id = ?", (old_id,))
        for old_id in supersedes:
            index.remove(old_id)
        index.add(agent_id, fact_id, vector)
        return self.get_fact(fact_id)

    def add_facts_bulk(self, agent: str, rows: Sequence[tuple[NewFact, Vector]]) -> None:
        """Insert many current facts at once (benchmarks, imports)."""
        index = self._require_index()
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            (start,) = conn.execute("SELECT COALESCE(MAX(id), 0) FROM facts").fetchone()
            ids = list(range(start + 1, start + 1 + len(rows)))
            conn.executemany(
                "INSERT INTO facts(id, agent_id, content, fact_type, confidence, created_at, "
                "valid_from) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (i, agent_id, f.content, f.fact_type, f.confidence, now, now)
                    for i, (f, _) in zip(ids, rows, strict=True)
                ],
            )
            conn.executemany(
                "INSERT INTO fact_vectors(fact_id, agent_id, embedding) VALUES (?, ?, ?)",
                [(i, agent_id, vector_blob(v)) for i, (_, v) in zip(ids, rows, strict=True)],
            )
        for i, (_, vector) in zip(ids, rows, strict=True):
            index.add(agent_id, i, vector)

    def get_fact(self, fact_id: int) -> Fact:
        rows = self._query(
            f"SELECT {_FACT_COLUMNS} FROM facts f JOIN agents a ON a.id = f.agent_id "
            "WHERE f.id = ?",
            (fact_id,),
        )
        if not rows:
            raise KeyError(fact_id)
        return self._fact(rows[0])

    def facts(self, agent: str, *, include_history: bool = False) -> list[Fact]:
        condition = "" if include_history else "AND f.invalidated_at IS NULL"
        rows = self._query(
            f"SELECT {_FACT_COLUMNS} FROM facts f JOIN agents a ON a.id = f.agent_id "
            f"WHERE f.agent_id = ? {condition} ORDER BY f.id",
            (self.agent_id(agent),),
        )
        return [self._fact(row) for row in rows]

    def facts_by_ids(self, ids: Sequence[int]) -> dict[int, Fact]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._query(
            f"SELECT {_FACT_COLUMNS} FROM facts f JOIN agents a ON a.id = f.agent_id "
            f"WHERE f.id IN ({marks})",
            list(ids),
        )
        return {row[0]: self._fact(row) for row in rows}

    def recent_facts(self, agent: str, limit: int) -> list[Fact]:
        rows = self._query(
            f"SELECT {_FACT_COLUMNS} FROM facts f JOIN agents a ON a.id = f.agent_id "
            "WHERE f.agent_id = ? AND f.invalidated_at IS NULL ORDER BY f.id DESC LIMIT ?",
            (self.agent_id(agent), limit),
        )
        return [self._fact(row) for row in rows]

    def count_facts(self, agent: str) -> int:
        rows = self._query(
            "SELECT COUNT(*) FROM facts WHERE agent_id = ? AND invalidated_at IS NULL",
            (self.agent_id(agent),),
        )
        return int(rows[0][0])

    def set_user_score(self, fact_id: int, score: int | None) -> None:
        if score is not None and not 0 <= score <= 10:
            raise StoreError("user score must be between 0 and 10")
        with self._transaction() as conn:
            conn.execute("UPDATE facts SET user_score = ? WHERE id = ?", (score, fact_id))

    def search_facts(self, agent: str, query: Vector, k: int) -> list[ScoredFact]:
        """Current facts nearest to `query` (cosine), best first, via the in-memory index."""
        hits = self._require_index().search(self.agent_id(agent), query, k)
        return self._scored(hits)

    def search_facts_sqlite(self, agent: str, query: Vector, k: int) -> list[ScoredFact]:
        """The same search done by sqlite-vec's vec0 scan (the store of record)."""
        rows = self._query(
            "SELECT fact_id, distance FROM fact_vectors "
            "WHERE embedding MATCH ? AND k = ? AND agent_id = ? ORDER BY distance",
            (vector_blob(query), k, self.agent_id(agent)),
        )
        return self._scored([(int(r[0]), 1.0 - float(r[1])) for r in rows])

    def _scored(self, hits: Sequence[tuple[int, float]]) -> list[ScoredFact]:
        facts = self.facts_by_ids([fact_id for fact_id, _ in hits])
        return [ScoredFact(facts[i], score) for i, score in hits if i in facts]

    @staticmethod
    def _fact(row: Sequence[Any]) -> Fact:
        return Fact(
            id=row[0],
            agent=row[1],
            content=row[2],
            fact_type=row[3],
            subject=row[4],
            relation=row[5],
            object=row[6],
            time_span=row[7],
            confidence=float(row[8]),
            user_score=row[9],
            source_message_ids=tuple(json.loads(row[10])),
            created_at=row[11],
            valid_from=row[12],
            invalidated_at=row[13],
            superseded_by=row[14],
        )
