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

# (table, key columns) in an order that satisfies the foreign keys. The columns copied are the
# target's (`_columns`), the key columns first (the copy pages through the source by them);
# facts are copied without `superseded_by` (it points at later rows), which a second pass
# fills in.
TABLES: tuple[tuple[str, str], ...] = (
    ("agents", "id"),
    ("people", "id"),
    ("device_people", "agent_id, device_id"),
    ("voice_profiles", "id"),
    ("conversation_log", "id"),
    ("facts", "id"),
    ("summaries", "id"),
    ("base_memory", "agent_id"),
    ("base_memory_versions", "id"),
    ("memory_blocks", "id"),
    ("memory_block_history", "id"),
    ("learning_queue", "assistant_message_id"),
    ("embedding_backlog", "message_id"),
    ("audit_log", "id"),
    ("dreams", "id"),
    ("dream_vectors", "dream_id, fact_id"),
    ("topics", "id"),
    ("topic_members", "topic_id, kind, member_id"),
    ("reminders", "id"),
    ("fact_vectors", "fact_id"),
    ("message_vectors", "message_id"),
    ("summary_vectors", "summary_id"),
)
# The target's columns a copy leaves alone: facts' `superseded_by` (the second pass) and the
# work queue's claims (PostgreSQL's alone).
NOT_COPIED = frozenset({"superseded_by", "claimed_until"})
# What SQLite's tables lack of PostgreSQL's: an episode's vector is keyed by the agent there too.
SOURCES = {
    "summary_vectors": "SELECT v.summary_id, s.agent_id, v.embedding FROM summary_vectors v "
    "JOIN summaries s ON s.id = v.summary_id",
}
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
            for table, key in _present(source):
                columns = _columns(target, table, key)
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


def _present(source: Any) -> Iterator[tuple[str, str]]:
    """The tables to copy that the source has (vector tables exist once it was bound; the
    target's `summary_vectors` too, which SQLite's schema always has)."""
    names = {row[0] for row in source.execute("SELECT name FROM sqlite_master")}
    if "fact_vectors" not in names:
        names.discard("summary_vectors")
    yield ("store_meta", "key")
    yield from (t for t in TABLES if t[0] in names)


def _columns(target: Any, table: str, key: str) -> str:
    """The columns of `table` in the target that a copy writes (not generated ones, nor
    `NOT_COPIED`), the key columns first; a vector table's embedding stays last."""
    found = target.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = "
        "current_schema() AND table_name = %s AND is_generated = 'NEVER' ORDER BY ordinal_position",
        (table,),
    )
    keys = [name.strip() for name in key.split(",")]
    rest = [row["column_name"] for row in found if row["column_name"] not in keys]
    return ", ".join(keys + [name for name in rest if name not in NOT_COPIED])


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
    """New rows in the target get ids after the copied ones (the tables keyed by `id`)."""
    for table in (table for table, key in TABLES if key == "id"):
        target.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
            f"GREATEST((SELECT MAX(id) FROM {table}), 1))"
        )


def _compare(source: Any, target: Any) -> MigrationReport:
    tables = [table for table, _ in _present(source)]
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
