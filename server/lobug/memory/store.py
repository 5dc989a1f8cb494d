"""All SQL lives here: one SQLite file (WAL), numbered migrations, and sqlite-vec for vectors.

Tables: agents (memory namespaces), conversation_log, facts (with history: superseded facts are
invalidated and linked, never deleted), summaries, base_memory, memory_blocks and
memory_block_history (always-in-context blocks and every change to them), store_meta (embedding
model and dimension) and schema_migrations. `fact_vectors` (the *current* facts) and
`message_vectors` (logged messages that were embedded) are vec0 tables; their dimension comes from
the embedding model, so they are created by `bind_embedding`, not by a migration. An in-memory
`VectorIndex` mirrors `fact_vectors` for fast exact search.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import sys
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

log = logging.getLogger(__name__)

Vector = npt.NDArray[np.float32]
Clock = Callable[[], float]
FACT_TYPES = ("personal", "preference", "knowledge", "event")


class StoreError(RuntimeError):
    pass


class EmbeddingMismatch(StoreError):
    """The database was embedded with another model or dimension than the one configured."""


class StorageUnavailable(StoreError):
    """The database cannot be read or written now: disk full, read-only, I/O error, or locked
    for longer than the busy timeout. Nothing committed before is affected."""


class BlockExists(StoreError):
    """The agent already has a memory block with this label."""


class BlockNotFound(StoreError):
    """The agent has no memory block with this label."""


class BlockReadOnly(StoreError):
    """The memory block is read-only."""


class BlockTooLong(StoreError):
    """The value is longer than the block's character limit."""


@dataclass(frozen=True)
class Agent:
    id: int
    name: str
    created_at: float
    metadata: dict[str, Any] | None


@dataclass(frozen=True)
class Message:
    id: int
    agent: str
    device_id: str
    role: str
    content: str
    created_at: float
    summarized: bool
    metadata: dict[str, Any] | None = None
    agent_id: int = 0


@dataclass(frozen=True)
class QueuedExchange:
    """An answered exchange whose memory work has not finished (see `learning_queue`)."""

    user: Message
    assistant: Message
    attempts: int


@dataclass(frozen=True)
class ScoredMessage:
    message: Message
    similarity: float


@dataclass(frozen=True)
class MemoryBlock:
    id: int
    agent_id: int
    label: str
    value: str
    description: str | None
    char_limit: int | None
    read_only: bool
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class BlockChange:
    id: int
    block_id: int
    old_value: str | None
    new_value: str
    changed_by: str
    changed_at: float


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
    Migration(
        2,
        "memory_api",
        (
            "ALTER TABLE agents ADD COLUMN metadata TEXT",
            # SQLite cannot alter a CHECK constraint: rebuild the log with the same ids.
            """CREATE TABLE conversation_log_v2 (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                device_id TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
                content TEXT NOT NULL,
                created_at REAL NOT NULL,
                summarized INTEGER NOT NULL DEFAULT 0,
                metadata TEXT
            )""",
            "INSERT INTO conversation_log_v2(id, agent_id, device_id, role, content, created_at, "
            "summarized) SELECT id, agent_id, device_id, role, content, created_at, summarized "
            "FROM conversation_log",
            "INSERT INTO sqlite_sequence(name, seq) SELECT 'conversation_log_v2', seq "
            "FROM sqlite_sequence WHERE name = 'conversation_log' AND NOT EXISTS "
            "(SELECT 1 FROM sqlite_sequence WHERE name = 'conversation_log_v2')",
            "UPDATE sqlite_sequence SET seq = MAX(seq, COALESCE((SELECT seq FROM sqlite_sequence "
            "WHERE name = 'conversation_log'), 0)) WHERE name = 'conversation_log_v2'",
            "DROP TABLE conversation_log",
            "ALTER TABLE conversation_log_v2 RENAME TO conversation_log",
            "CREATE INDEX conversation_log_by_device ON conversation_log(agent_id, device_id, id)",
            "CREATE INDEX conversation_log_unsummarized "
            "ON conversation_log(agent_id, summarized, id)",
            "CREATE INDEX conversation_log_by_agent ON conversation_log(agent_id, id)",
            """CREATE TABLE memory_blocks (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                agent_id INTEGER NOT NULL REFERENCES agents(id),
                label TEXT NOT NULL,
                value TEXT NOT NULL,
                description TEXT,
                char_limit INTEGER CHECK (char_limit IS NULL OR char_limit > 0),
                read_only INTEGER NOT NULL DEFAULT 0,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                UNIQUE (agent_id, label)
            )""",
            """CREATE TABLE memory_block_history (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                block_id INTEGER NOT NULL REFERENCES memory_blocks(id),
                old_value TEXT,
                new_value TEXT NOT NULL,
                changed_by TEXT NOT NULL,
                changed_at REAL NOT NULL
            )""",
            "CREATE INDEX memory_block_history_by_block ON memory_block_history(block_id, id)",
        ),
    ),
    Migration(
        3,
        "full_text_search",
        (
            "CREATE VIRTUAL TABLE messages_fts USING fts5("
            "content, content='conversation_log', content_rowid='id', tokenize='porter unicode61')",
            "CREATE TRIGGER messages_fts_insert AFTER INSERT ON conversation_log BEGIN "
            "INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END",
            "CREATE TRIGGER messages_fts_delete AFTER DELETE ON conversation_log BEGIN "
            "INSERT INTO messages_fts(messages_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); END",
            "CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON conversation_log BEGIN "
            "INSERT INTO messages_fts(messages_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); "
            "INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END",
            "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
            "CREATE VIRTUAL TABLE facts_fts USING fts5("
            "content, content='facts', content_rowid='id', tokenize='porter unicode61')",
            "CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN "
            "INSERT INTO facts_fts(rowid, content) VALUES (new.id, new.content); END",
            "CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN "
            "INSERT INTO facts_fts(facts_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); END",
            "CREATE TRIGGER facts_fts_update AFTER UPDATE OF content ON facts BEGIN "
            "INSERT INTO facts_fts(facts_fts, rowid, content) "
            "VALUES ('delete', old.id, old.content); "
            "INSERT INTO facts_fts(rowid, content) VALUES (new.id, new.content); END",
            "INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')",
        ),
    ),
    Migration(
        4,
        "learning_queue",
        (
            # Answered exchanges whose memory work (facts, cascades) has not finished: written
            # with the reply in one transaction, removed when the work is done, so a crash
            # never loses it.
            """CREATE TABLE learning_queue (
                assistant_message_id INTEGER PRIMARY KEY REFERENCES conversation_log(id),
                user_message_id INTEGER NOT NULL REFERENCES conversation_log(id),
                attempts INTEGER NOT NULL DEFAULT 0,
                queued_at REAL NOT NULL
            )""",
            # Messages meant to have a vector that were stored while the embedder failed.
            """CREATE TABLE embedding_backlog (
                message_id INTEGER PRIMARY KEY REFERENCES conversation_log(id)
            )""",
        ),
    ),
)

FTS_TABLES = ("messages_fts", "facts_fts")

_BLOCK_COLUMNS = (
    "id, agent_id, label, value, description, char_limit, read_only, created_at, updated_at"
)

_FACT_COLUMNS = (
    "f.id, a.name, f.content, f.fact_type, f.subject, f.relation, f.object, f.time_span, "
    "f.confidence, f.user_score, f.source_message_ids, f.created_at, f.valid_from, "
    "f.invalidated_at, f.superseded_by"
)


_MESSAGE_COLUMNS = "id, device_id, role, content, created_at, summarized, metadata, agent_id"
_MESSAGE_COLUMNS_L = ", ".join(f"l.{c.strip()}" for c in _MESSAGE_COLUMNS.split(","))
_MESSAGE_COLUMNS_U = ", ".join(f"u.{c.strip()}" for c in _MESSAGE_COLUMNS.split(","))
_FTS_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str:
    """An FTS5 query matching any word of `text` but common English function words (unless
    there is nothing else); every word quoted, so no user text is read as FTS syntax.

    Function words add little to BM25 but match most rows: on 100k facts they made a keyword
    search several times slower."""
    words = dict.fromkeys(w.lower() for w in _FTS_WORD.findall(text) if len(w) > 1)
    content = [w for w in words if w not in STOP_WORDS] or list(words)
    return " OR ".join(f'"{w}"' for w in content[:64])


STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    im ive youre whats thats dont didnt""".split()
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


@contextmanager
def storage_errors() -> Iterator[None]:
    """SQLite's operational failures (full, read-only, I/O, locked, damaged) as
    StorageUnavailable; constraint errors and programming errors stay what they are."""
    try:
        yield
    except Exception as exc:
        if is_storage_failure(exc):
            raise StorageUnavailable(f"the database is unavailable: {exc}") from exc
        raise


def is_storage_failure(exc: Exception) -> bool:
    sqlite3 = sys.modules["pysqlite3.dbapi2"]  # imported by connect() before any query
    bugs = (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError)
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, bugs)


def prepare_private_file(path: Path) -> None:
    """The memory is personal: new folders are the owner's only (0700) and the database is
    created readable and writable by the owner only (0600; SQLite gives its -wal and -shm
    files the same mode). Existing folders are left as they are."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def vector_blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def _embed_all(embed_batch: Callable[[list[str]], list[Vector]], texts: list[str]) -> list[Vector]:
    vectors: list[Vector] = []
    for start in range(0, len(texts), 256):
        vectors.extend(embed_batch(texts[start : start + 256]))
    return vectors


def _json_or_none(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value)


def _agent(row: Sequence[Any]) -> Agent:
    metadata = json.loads(row[3]) if row[3] is not None else None
    return Agent(int(row[0]), str(row[1]), float(row[2]), metadata)


def _block(row: Sequence[Any]) -> MemoryBlock:
    return MemoryBlock(
        id=row[0],
        agent_id=row[1],
        label=row[2],
        value=row[3],
        description=row[4],
        char_limit=row[5],
        read_only=bool(row[6]),
        created_at=row[7],
        updated_at=row[8],
    )


def _check_limit(value: str, char_limit: int | None) -> None:
    if char_limit is not None and len(value) > char_limit:
        raise BlockTooLong(
            f"the value has {len(value)} characters; the block's limit is {char_limit}"
        )


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
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._agent_ids: dict[str, int] = {}
        self.index: VectorIndex | None = None
        self.migrate()
        self.repair_full_text_search()

    # ------------------------------------------------------------------ plumbing

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._lock, storage_errors():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._rollback()
                raise
            try:
                self._conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock, storage_errors():
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

    def repair_full_text_search(self) -> list[str]:
        """Rebuild any full-text index that fails its integrity check (derived data: the
        tables it indexes are the truth). Returns the names of the rebuilt indexes."""
        rebuilt = []
        with self._lock:
            for name in FTS_TABLES:
                try:
                    self._conn.execute(f"INSERT INTO {name}({name}) VALUES ('integrity-check')")
                except Exception as exc:
                    log.warning("full-text index %s is damaged (%s); rebuilding it", name, exc)
                    self._conn.execute(f"INSERT INTO {name}({name}) VALUES ('rebuild')")
                    rebuilt.append(name)
        return rebuilt

    def keyword_messages(self, agent: str, query: str, k: int) -> list[tuple[Message, float]]:
        """The agent's messages matching any word of `query`, best BM25 first (score > 0)."""
        match = fts_query(query)
        if not match:
            return []
        rows = self._query(
            f"SELECT {_MESSAGE_COLUMNS_L}, -bm25(messages_fts) FROM messages_fts "
            "JOIN conversation_log l ON l.id = messages_fts.rowid "
            "WHERE messages_fts MATCH ? AND l.agent_id = ? ORDER BY bm25(messages_fts) LIMIT ?",
            (match, self.agent_id(agent), k),
        )
        return [(self._message(agent, row[:-1]), float(row[-1])) for row in rows]

    def keyword_facts(self, agent: str, query: str, k: int) -> list[tuple[Fact, float]]:
        """The agent's current facts matching any word of `query`, best BM25 first."""
        match = fts_query(query)
        if not match:
            return []
        rows = self._query(
            f"SELECT {_FACT_COLUMNS}, -bm25(facts_fts) FROM facts_fts "
            "JOIN facts f ON f.id = facts_fts.rowid JOIN agents a ON a.id = f.agent_id "
            "WHERE facts_fts MATCH ? AND f.agent_id = ? AND f.invalidated_at IS NULL "
            "ORDER BY bm25(facts_fts) LIMIT ?",
            (match, self.agent_id(agent), k),
        )
        return [(self._fact(row[:-1]), float(row[-1])) for row in rows]

    def similarities(self, kind: str, ids: Sequence[int], query: Vector) -> dict[int, float]:
        """Cosine similarity of `query` to the stored vectors of these facts or messages
        (those without a vector are left out)."""
        if not ids:
            return {}
        if kind == "fact":  # the index mirrors fact_vectors; vec0 looks ids up slowly
            return self._require_index().similarities(ids, query)
        marks = ",".join("?" * len(ids))
        rows = self._query(
            f"SELECT message_id, embedding FROM message_vectors WHERE message_id IN ({marks})",
            list(ids),
        )
        q = np.asarray(query, dtype=np.float32)
        return {int(i): float(np.frombuffer(blob, dtype=np.float32) @ q) for i, blob in rows}

    def messages_by_ids(self, agent: str, ids: Sequence[int]) -> dict[int, Message]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._query(
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_log WHERE id IN ({marks})", list(ids)
        )
        return {row[0]: self._message(agent, row) for row in rows}

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
                self._create_vector_tables(conn, dim)
        elif signature == (model, dim):
            # Databases bound before message vectors existed gain their table here.
            with self._transaction() as conn:
                self._create_vector_tables(conn, dim)
        else:
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
        """Re-embed every current fact, and every message that had a vector, with a new model;
        return how many facts and messages were embedded."""
        facts = self._query(
            "SELECT id, agent_id, content FROM facts WHERE invalidated_at IS NULL ORDER BY id"
        )
        messages = self._embedded_messages()
        fact_vectors = _embed_all(embed_batch, [row[2] for row in facts])
        message_vectors = _embed_all(embed_batch, [row[2] for row in messages])
        with self._transaction() as conn:
            conn.execute("DROP TABLE IF EXISTS fact_vectors")
            conn.execute("DROP TABLE IF EXISTS message_vectors")
            self._create_vector_tables(conn, dim)
            conn.executemany(
                "INSERT INTO fact_vectors(fact_id, agent_id, embedding) VALUES (?,?,?)",
                [(r[0], r[1], vector_blob(v)) for r, v in zip(facts, fact_vectors, strict=True)],
            )
            conn.executemany(
                "INSERT INTO message_vectors(message_id, agent_id, embedding) VALUES (?,?,?)",
                [
                    (r[0], r[1], vector_blob(v))
                    for r, v in zip(messages, message_vectors, strict=True)
                ],
            )
            self._write_signature(conn, model, dim)
        self._load_index(dim)
        return len(facts) + len(messages)

    def _embedded_messages(self) -> list[Any]:
        if "message_vectors" not in self.table_names():
            return []
        return self._query(
            "SELECT c.id, c.agent_id, c.content FROM conversation_log c "
            "JOIN message_vectors v ON v.message_id = c.id ORDER BY c.id"
        )

    @staticmethod
    def _write_signature(conn: Any, model: str, dim: int) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO store_meta(key, value) VALUES (?, ?)",
            [("embedding_model", model), ("embedding_dim", str(dim))],
        )

    @staticmethod
    def _create_vector_tables(conn: Any, dim: int) -> None:
        for table, key in (("fact_vectors", "fact_id"), ("message_vectors", "message_id")):
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
                f"{key} INTEGER PRIMARY KEY, agent_id INTEGER PARTITION KEY, "
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

    def find_agent(self, name: str) -> Agent | None:
        """The namespace called `name`, or None (never creates one)."""
        rows = self._query(
            "SELECT id, name, created_at, metadata FROM agents WHERE name = ?", (name,)
        )
        return _agent(rows[0]) if rows else None

    def ensure_agent(self, name: str, metadata: dict[str, Any] | None = None) -> Agent:
        """Create the namespace with `metadata`, or return the existing one unchanged."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO agents(name, created_at, metadata) VALUES (?, ?, ?)",
                (name, self._clock(), _json_or_none(metadata)),
            )
            row = conn.execute(
                "SELECT id, name, created_at, metadata FROM agents WHERE name = ?", (name,)
            ).fetchone()
        agent = _agent(row)
        self._agent_ids[name] = agent.id
        return agent

    # ------------------------------------------------------------------ conversation log

    def append_message(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        *,
        metadata: dict[str, Any] | None = None,
        vector: Vector | None = None,
        embed_later: bool = False,
        learn_from: Message | None = None,
    ) -> Message:
        """Log a message; with `vector`, it becomes searchable by `search_messages` (with
        `embed_later` instead, it waits in the embedding backlog); with `learn_from` (the user
        message it answers), the exchange joins the learning queue. One transaction."""
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO conversation_log(agent_id, device_id, role, content, created_at, "
                "metadata) VALUES (?, ?, ?, ?, ?, ?)",
                (agent_id, device_id, role, content, now, _json_or_none(metadata)),
            )
            message_id = int(cursor.lastrowid)
            if vector is not None:
                conn.execute(
                    "INSERT INTO message_vectors(message_id, agent_id, embedding) VALUES (?,?,?)",
                    (message_id, agent_id, vector_blob(vector)),
                )
            elif embed_later:
                conn.execute("INSERT INTO embedding_backlog(message_id) VALUES (?)", (message_id,))
            if learn_from is not None:
                conn.execute(
                    "INSERT INTO learning_queue(assistant_message_id, user_message_id, "
                    "queued_at) VALUES (?, ?, ?)",
                    (message_id, learn_from.id, now),
                )
        return Message(message_id, agent, device_id, role, content, now, False, metadata, agent_id)

    def messages_to_embed(self, limit: int) -> list[Message]:
        """Messages of the embedding backlog (stored while the embedder failed), oldest first."""
        rows = self._query(
            f"SELECT {_MESSAGE_COLUMNS_L}, a.name FROM embedding_backlog b "
            "JOIN conversation_log l ON l.id = b.message_id JOIN agents a ON a.id = l.agent_id "
            "ORDER BY b.message_id LIMIT ?",
            (limit,),
        )
        return [self._message(row[-1], row) for row in rows]

    def add_message_vectors(self, rows: Sequence[tuple[Message, Vector]]) -> None:
        """Store the vectors of backlog messages and take them off the backlog."""
        with self._transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO message_vectors(message_id, agent_id, embedding) "
                "VALUES (?,?,?)",
                [(m.id, m.agent_id, vector_blob(v)) for m, v in rows],
            )
            conn.executemany(
                "DELETE FROM embedding_backlog WHERE message_id = ?", [(m.id,) for m, _ in rows]
            )

    # ------------------------------------------------------------------ learning queue

    def queued_exchanges(
        self, limit: int, queued_before: float, after_id: int = 0
    ) -> list[QueuedExchange]:
        """Exchanges still waiting for their memory work, oldest first, from the one whose
        reply comes after message `after_id`."""
        rows = self._query(
            f"SELECT q.attempts, a.name, {_MESSAGE_COLUMNS_U}, {_MESSAGE_COLUMNS_L} "
            "FROM learning_queue q "
            "JOIN conversation_log u ON u.id = q.user_message_id "
            "JOIN conversation_log l ON l.id = q.assistant_message_id "
            "JOIN agents a ON a.id = l.agent_id "
            "WHERE q.queued_at < ? AND q.assistant_message_id > ? "
            "ORDER BY q.assistant_message_id LIMIT ?",
            (queued_before, after_id, limit),
        )
        width = len(_MESSAGE_COLUMNS.split(","))
        return [
            QueuedExchange(
                self._message(row[1], row[2 : 2 + width]),
                self._message(row[1], row[2 + width :]),
                int(row[0]),
            )
            for row in rows
        ]

    def count_queued_exchanges(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM learning_queue")[0][0])

    def dequeue_exchange(self, assistant_message_id: int) -> None:
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM learning_queue WHERE assistant_message_id = ?",
                (assistant_message_id,),
            )

    def count_failed_attempt(self, assistant_message_id: int) -> int:
        """Record one more failed attempt at the exchange's memory work; return the total."""
        with self._transaction() as conn:
            conn.execute(
                "UPDATE learning_queue SET attempts = attempts + 1 WHERE assistant_message_id = ?",
                (assistant_message_id,),
            )
            row = conn.execute(
                "SELECT attempts FROM learning_queue WHERE assistant_message_id = ?",
                (assistant_message_id,),
            ).fetchone()
        return int(row[0]) if row else 0

    def agent_messages(self, agent: str, limit: int) -> list[Message]:
        """The agent's last `limit` messages from every device, newest first."""
        rows = self._query(
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_log "
            "WHERE agent_id = ? ORDER BY id DESC LIMIT ?",
            (self.agent_id(agent), limit),
        )
        return [self._message(agent, row) for row in rows]

    def search_messages(self, agent: str, query: Vector, k: int) -> list[ScoredMessage]:
        """The agent's embedded messages nearest to `query` (cosine), best first."""
        hits = self._query(
            "SELECT message_id, distance FROM message_vectors "
            "WHERE embedding MATCH ? AND k = ? AND agent_id = ? ORDER BY distance",
            (vector_blob(query), k, self.agent_id(agent)),
        )
        if not hits:
            return []
        marks = ",".join("?" * len(hits))
        rows = self._query(
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_log WHERE id IN ({marks})",
            [int(hit[0]) for hit in hits],
        )
        by_id = {row[0]: self._message(agent, row) for row in rows}
        return [
            ScoredMessage(by_id[int(i)], 1.0 - float(distance))
            for i, distance in hits
            # A zero vector has no cosine distance: it matches nothing.
            if int(i) in by_id and distance is not None
        ]

    def recent_messages(self, agent: str, device_id: str, limit: int) -> list[Message]:
        """The device's last `limit` messages, oldest first."""
        rows = self._query(
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_log "
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
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_log "
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
        metadata = json.loads(row[6]) if row[6] is not None else None
        return Message(
            row[0], agent, row[1], row[2], row[3], row[4], bool(row[5]), metadata, row[7]
        )

    # ------------------------------------------------------------------ memory blocks

    def create_block(
        self,
        agent: str,
        label: str,
        value: str,
        *,
        description: str | None = None,
        char_limit: int | None = None,
        read_only: bool = False,
        changed_by: str = "system",
    ) -> MemoryBlock:
        """A new block, its creation recorded in the history. Raises BlockExists or
        BlockTooLong."""
        _check_limit(value, char_limit)
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            taken = conn.execute(
                "SELECT 1 FROM memory_blocks WHERE agent_id = ? AND label = ?", (agent_id, label)
            ).fetchone()
            if taken:
                raise BlockExists(f"agent {agent!r} already has a block labelled {label!r}")
            cursor = conn.execute(
                "INSERT INTO memory_blocks(agent_id, label, value, description, char_limit, "
                "read_only, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (agent_id, label, value, description, char_limit, int(read_only), now, now),
            )
            block_id = int(cursor.lastrowid)
            self._record_change(conn, block_id, None, value, changed_by, now)
        return MemoryBlock(
            block_id, agent_id, label, value, description, char_limit, read_only, now, now
        )

    def update_block(
        self, agent: str, label: str, value: str, *, changed_by: str = "system"
    ) -> MemoryBlock:
        """Replace a block's value and record the change. Raises BlockNotFound, BlockReadOnly
        or BlockTooLong; a value over the limit is refused, never cut."""
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            row = conn.execute(
                f"SELECT {_BLOCK_COLUMNS} FROM memory_blocks WHERE agent_id = ? AND label = ?",
                (agent_id, label),
            ).fetchone()
            if row is None:
                raise BlockNotFound(f"agent {agent!r} has no block labelled {label!r}")
            block = _block(row)
            if block.read_only:
                raise BlockReadOnly(f"block {label!r} of agent {agent!r} is read-only")
            _check_limit(value, block.char_limit)
            conn.execute(
                "UPDATE memory_blocks SET value = ?, updated_at = ? WHERE id = ?",
                (value, now, block.id),
            )
            self._record_change(conn, block.id, block.value, value, changed_by, now)
        return dataclasses.replace(block, value=value, updated_at=now)

    def block(self, agent: str, label: str) -> MemoryBlock | None:
        rows = self._query(
            f"SELECT {_BLOCK_COLUMNS} FROM memory_blocks WHERE agent_id = ? AND label = ?",
            (self.agent_id(agent), label),
        )
        return _block(rows[0]) if rows else None

    def blocks(self, agent: str) -> list[MemoryBlock]:
        """The agent's blocks in creation order."""
        rows = self._query(
            f"SELECT {_BLOCK_COLUMNS} FROM memory_blocks WHERE agent_id = ? ORDER BY id",
            (self.agent_id(agent),),
        )
        return [_block(row) for row in rows]

    def block_history(self, agent: str, label: str) -> list[BlockChange]:
        """Every change to one block, oldest first. Raises BlockNotFound."""
        block = self.block(agent, label)
        if block is None:
            raise BlockNotFound(f"agent {agent!r} has no block labelled {label!r}")
        rows = self._query(
            "SELECT id, block_id, old_value, new_value, changed_by, changed_at "
            "FROM memory_block_history WHERE block_id = ? ORDER BY id",
            (block.id,),
        )
        return [BlockChange(*row) for row in rows]

    @staticmethod
    def _record_change(
        conn: Any, block_id: int, old: str | None, new: str, changed_by: str, at: float
    ) -> None:
        conn.execute(
            "INSERT INTO memory_block_history(block_id, old_value, new_value, changed_by, "
            "changed_at) VALUES (?, ?, ?, ?, ?)",
            (block_id, old, new, changed_by, at),
        )

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
