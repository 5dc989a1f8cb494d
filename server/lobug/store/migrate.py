"""`lobug migrate-db --from sqlite:///a.db --to postgresql://...`: copy a SQLite memory into
PostgreSQL, vectors included, table by table in batches, with the same ids.

Re-running is safe: rows already in the target are left as they are (`ON CONFLICT DO
NOTHING`), so an interrupted copy is finished by running it again. It ends by comparing the
row counts of every table and a SHA-256 of the message texts (id and content, in id order)
on both sides; `MigrationReport.ok` says whether they agree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from lobug.store.engines import is_postgres, redacted, sqlite_path
from lobug.store.errors import StoreError

# (table, key columns, columns) in an order that satisfies the foreign keys; facts are copied
# without `superseded_by` (it points at later rows), which a second pass fills in. The key
# columns come first in `columns`: the copy pages through the source by them.
TABLES: tuple[tuple[str, str, str], ...] = (
    ("agents", "id", "id, name, created_at, metadata"),
    ("people", "id", "id, agent_id, name, name_key, created_at"),
    ("device_people", "agent_id, device_id", "agent_id, device_id, person_id"),
    ("voice_profiles", "id", "id, person_id, embedding, model, created_at"),
    (
        "conversation_log",
        "id",
        "id, agent_id, device_id, role, content, created_at, summarized, metadata, person_id, "
        "speaker_source, speaker_confidence",
    ),
    (
        "facts",
        "id",
        "id, agent_id, content, fact_type, subject, relation, object, time_span, confidence, "
        "user_score, source_message_ids, created_at, valid_from, invalidated_at, origin, "
        "pinned, forgotten_at, purged_at, due_at, owner_person_id, scope, shareable",
    ),
    (
        "summaries",
        "id",
        "id, agent_id, content, source_from_id, source_to_id, created_at, incorporated, "
        "started_at, ended_at, made_by, dropped_sentences",
    ),
    ("base_memory", "agent_id", "agent_id, content, updated_at, stale"),
    (
        "base_memory_versions",
        "id",
        "id, agent_id, content, written_by, created_at, made_by, dropped_sentences",
    ),
    (
        "memory_blocks",
        "id",
        "id, agent_id, label, value, description, char_limit, read_only, created_at, updated_at",
    ),
    (
        "memory_block_history",
        "id",
        "id, block_id, old_value, new_value, changed_by, changed_at",
    ),
    (
        "learning_queue",
        "assistant_message_id",
        "assistant_message_id, user_message_id, attempts, queued_at, parked_at, last_error",
    ),
    ("embedding_backlog", "message_id", "message_id"),
    (
        "audit_log",
        "id",
        "id, agent_id, at, actor, action, target, target_ids, before, after, detail",
    ),
    (
        "dreams",
        "id",
        "id, agent_id, started_at, finished_at, diary, changes, base_memory_before, watermark, "
        "undone_at",
    ),
    ("dream_vectors", "dream_id, fact_id", "dream_id, fact_id, embedding"),
    (
        "topics",
        "id",
        "id, agent_id, position, name, summary, open_questions, next_actions, written_by, "
        "built_at, size, last_active_at, dropped_sentences",
    ),
    ("topic_members", "topic_id, kind, member_id", "topic_id, kind, member_id, at"),
    (
        "reminders",
        "id",
        "id, agent_id, device_id, what, ring_at, created_at, said_at, said_on, cancelled_at",
    ),
    ("fact_vectors", "fact_id", "fact_id, agent_id, embedding"),
    ("message_vectors", "message_id", "message_id, agent_id, embedding"),
    ("summary_vectors", "summary_id", "summary_id, agent_id, embedding"),
)
# What SQLite's tables lack of PostgreSQL's: an episode's vector is keyed by the agent there too.
SOURCES = {
    "summary_vectors": "SELECT v.summary_id, s.agent_id, v.embedding FROM summary_vectors v "
    "JOIN summaries s ON s.id = v.summary_id",
}
IDENTITY_TABLES = (
    "agents",
    "people",
    "voice_profiles",
    "conversation_log",
    "facts",
    "summaries",
    "base_memory_versions",
    "memory_blocks",
    "memory_block_history",
    "audit_log",
    "dreams",
    "topics",
    "reminders",
)
Progress = Callable[[str, int, int], None]  # table, rows copied so far, rows in the source


@dataclass(frozen=True)
class MigrationReport:
    source_counts: dict[str, int]
    target_counts: dict[str, int]
    source_checksum: str
    target_checksum: str

    @property
    def ok(self) -> bool:
        return (
            self.source_counts == self.target_counts
            and self.source_checksum == self.target_checksum
        )


def migrate_database(
    source_url: str, target_url: str, *, batch: int = 1000, progress: Progress | None = None
) -> MigrationReport:
    """Copy everything from the SQLite memory at `source_url` into the PostgreSQL database at
    `target_url` (migrated and bound to the source's embedding model first)."""
    path = sqlite_path(source_url)
    if path is None or not path.exists() or not is_postgres(target_url):
        raise StoreError(
            f"migrate-db copies an existing sqlite:/// file into postgresql://, not "
            f"{redacted(source_url)} into {redacted(target_url)}"
        )
    from lobug.store.postgres.database import connect, register_vector_type
    from lobug.store.postgres.vectors import create_vector_indexes, drop_vector_indexes
    from lobug.store.sqlite.database import open_connection

    source = open_connection(path)
    source.row_factory = None
    try:
        bound = _prepare_target(source, target_url)
        target = connect(target_url)
        try:
            register_vector_type(target)
            if bound:
                drop_vector_indexes(target)  # built once at the end: far faster than row by row
            for table, key, columns in _present(source):
                _copy_table(source, target, table, key, columns, batch, progress or _quiet)
            _link_superseded(source, target, batch)
            _advance_sequences(target)
            if bound:
                create_vector_indexes(target)
            target.execute("ANALYZE")  # the planner's statistics, for the HNSW indexes' use
            return _compare(source, target)
        finally:
            target.close()
    finally:
        source.close()


def _quiet(table: str, done: int, total: int) -> None:
    """No progress shown."""


def _prepare_target(source: Any, target_url: str) -> bool:
    """Migrate the target and bind it to the source's embedding model (refused, with
    EmbeddingMismatch, when it is bound to another one); whether the source was bound."""
    from lobug.store.postgres.engine import PostgresStore

    meta = dict(source.execute("SELECT key, value FROM store_meta").fetchall())
    store = PostgresStore(target_url, pool_size=1)
    try:
        if "embedding_model" in meta:
            store.bind_embedding(meta["embedding_model"], int(meta["embedding_dim"]))
    finally:
        store.close()
    return "embedding_model" in meta


def _present(source: Any) -> Iterator[tuple[str, str, str]]:
    """The tables to copy that the source has (vector tables exist once it was bound; the
    target's `summary_vectors` too, which SQLite's schema always has)."""
    names = {row[0] for row in source.execute("SELECT name FROM sqlite_master")}
    if "fact_vectors" not in names:
        names.discard("summary_vectors")
    yield ("store_meta", "key", "key, value")
    yield from (t for t in TABLES if t[0] in names)


def _copy_table(
    source: Any, target: Any, table: str, key: str, columns: str, batch: int, progress: Progress
) -> None:
    total = source.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    rows = SOURCES.get(table, f"SELECT {columns} FROM {table}")
    width = len(key.split(","))
    done, last = 0, ()
    progress(table, 0, total)
    while True:
        after = f"WHERE ({key}) > ({', '.join('?' * width)})" if last else ""
        found = source.execute(
            f"SELECT * FROM ({rows}) {after} ORDER BY {key} LIMIT ?", (*last, batch)
        ).fetchall()
        if not found:
            return
        _insert(target, table, key, columns, found)
        done, last = done + len(found), tuple(found[-1][:width])
        progress(table, done, total)


def _insert(target: Any, table: str, key: str, columns: str, found: list[Any]) -> None:
    if table.endswith("_vectors"):  # the embedding last
        found = [(*row[:-1], _vector(row[-1])) for row in found]
    marks = ", ".join(["%s"] * len(found[0]))
    with target.transaction(), target.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} ({columns}) VALUES ({marks}) ON CONFLICT ({key}) DO NOTHING",
            found,
        )


def _vector(blob: bytes) -> Any:
    from pgvector import Vector

    return Vector(np.frombuffer(blob, dtype=np.float32))


def _link_superseded(source: Any, target: Any, batch: int) -> None:
    found = source.execute(
        "SELECT id, superseded_by FROM facts WHERE superseded_by IS NOT NULL ORDER BY id"
    ).fetchall()
    for start in range(0, len(found), batch):
        with target.transaction(), target.cursor() as cursor:
            cursor.executemany(
                "UPDATE facts SET superseded_by = %s WHERE id = %s",
                [(new, old) for old, new in found[start : start + batch]],
            )


def _advance_sequences(target: Any) -> None:
    """New rows in the target get ids after the copied ones."""
    for table in IDENTITY_TABLES:
        target.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
            f"GREATEST((SELECT MAX(id) FROM {table}), 1))"
        )


def _compare(source: Any, target: Any) -> MigrationReport:
    tables = [table for table, _, _ in _present(source)]
    source_counts = {t: source.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
    target_counts = {
        t: target.execute(f"SELECT COUNT(*) AS n FROM {t}").fetchone()["n"] for t in tables
    }
    return MigrationReport(
        source_counts,
        target_counts,
        _checksum(source.execute("SELECT id, content FROM conversation_log ORDER BY id")),
        _checksum(
            (row["id"], row["content"])
            for row in target.execute("SELECT id, content FROM conversation_log ORDER BY id")
        ),
    )


def _checksum(rows: Any) -> str:
    digest = hashlib.sha256()
    for message_id, content in rows:
        digest.update(f"{message_id}\t{content}\n".encode())
    return digest.hexdigest()
