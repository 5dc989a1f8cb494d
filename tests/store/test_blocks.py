"""Memory blocks, message vectors and migration 2 (memory API) in the store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lobug.store.errors import BlockExists, BlockNotFound, BlockReadOnly, BlockTooLong
from lobug.store.protocol import Store
from lobug.store.sqlite.database import open_connection
from lobug.store.sqlite.engine import SQLiteStore
from lobug.store.sqlite.schema import MIGRATIONS
from tests.engines import stored_bytes
from tests.fakes import FakeEmbedder

SECRET = "Quaxilotl"


def test_a_database_at_migration_1_is_upgraded_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = open_connection(path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at REAL NOT NULL)"
    )
    for statement in MIGRATIONS[0].statements:
        conn.execute(statement)
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'initial_schema', 0)")
    conn.execute("INSERT INTO agents(id, name, created_at) VALUES (7, 'lobug', 1.0)")
    conn.executemany(
        "INSERT INTO conversation_log(id, agent_id, device_id, role, content, created_at, "
        "summarized) VALUES (?, 7, 'desk', ?, ?, ?, ?)",
        [(3, "user", "hello", 2.0, 1), (9, "assistant", "hi", 3.0, 0)],
    )
    conn.execute("DELETE FROM conversation_log WHERE id = 9")
    conn.commit()
    conn.close()

    store = SQLiteStore(path)
    assert store.schema_version() == MIGRATIONS[-1].version
    assert {"memory_blocks", "memory_block_history"} <= store.table_names()
    agent = store.find_agent("lobug")
    assert agent is not None and agent.id == 7 and agent.metadata is None
    (kept,) = store.recent_messages("lobug", "desk", 10)
    assert (kept.id, kept.role, kept.content, kept.summarized) == (3, "user", "hello", True)
    # AUTOINCREMENT keeps counting past the deleted id 9: ids are never reused.
    assert store.append_message("lobug", "api", "system", "rules").id == 10
    store.close()


def test_bind_embedding_adds_message_vectors_to_a_bound_database(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    path = tmp_path / "bound.db"
    store = SQLiteStore(path)
    store.bind_embedding(embedder.model, embedder.dimension)
    store.close()
    conn = open_connection(path)
    conn.execute("DROP TABLE message_vectors")
    conn.close()
    reopened = SQLiteStore(path)
    reopened.bind_embedding(embedder.model, embedder.dimension)
    assert "message_vectors" in reopened.table_names()
    reopened.close()


@pytest.mark.both_engines
def test_blocks_enforce_limit_read_only_and_uniqueness(store: SQLiteStore) -> None:
    store.create_block("a", "human", "Alice", char_limit=10, changed_by="user")
    with pytest.raises(BlockExists):
        store.create_block("a", "human", "again")
    with pytest.raises(BlockTooLong):
        store.update_block("a", "human", "x" * 11)
    with pytest.raises(BlockTooLong):
        store.create_block("a", "other", "x" * 3, char_limit=2)
    store.create_block("a", "persona", "fixed", read_only=True)
    with pytest.raises(BlockReadOnly):
        store.update_block("a", "persona", "changed")
    with pytest.raises(BlockNotFound):
        store.update_block("a", "missing", "x")
    updated = store.update_block("a", "human", "Bob", changed_by="agent")
    assert updated.value == "Bob"
    assert [b.label for b in store.blocks("a")] == ["human", "persona"]
    assert [
        (c.old_value, c.new_value, c.changed_by) for c in store.block_history("a", "human")
    ] == [
        (None, "Alice", "user"),
        ("Alice", "Bob", "agent"),
    ]
    assert store.blocks("b") == []


@pytest.mark.both_engines
def test_reindex_re_embeds_messages_that_had_vectors(store: SQLiteStore) -> None:
    embedder = FakeEmbedder()
    store.append_embedded_message("a", "api", "user", "tea", embedder.embed("tea"))
    store.append_message("a", "desk", "user", "not embedded")
    ones = np.ones(8, dtype=np.float32)
    assert store.reindex("other-model", 8, lambda texts: [ones for _ in texts]) == 1
    (hit,) = store.search_messages("a", ones, 5)
    assert hit.message.content == "tea"
    assert hit.similarity == pytest.approx(1.0, abs=1e-5)


@pytest.mark.both_engines
def test_a_block_deleted_with_purge_leaves_no_text_in_the_audit_log(
    store: Store, database_url: str
) -> None:
    """Issue 29, finding 8: as a purged fact's, a purged block's texts leave no bytes."""
    store.create_block("a", "secret", f"The code is {SECRET}", changed_by="user")
    store.update_block("a", "secret", f"The code is still {SECRET}", changed_by="agent")
    store.create_block("a", "kept", "Plain words", changed_by="user")
    store.delete_block("a", "kept", actor="manual")
    store.delete_block("a", "secret", actor="manual", purge=True)
    assert store.blocks("a") == []
    entries = {(e.action, e.before, e.after) for e in store.audit_entries("a", 50)}
    assert entries == {
        ("create", None, None),
        ("update", None, None),
        ("purge", None, None),
        ("create", None, "Plain words"),
        ("delete", "Plain words", None),
    }
    path = getattr(store, "path", None)
    assert SECRET.encode() not in stored_bytes(f"sqlite:///{path}" if path else database_url)
    with pytest.raises(BlockNotFound):
        store.delete_block("a", "secret", actor="manual", purge=True)
