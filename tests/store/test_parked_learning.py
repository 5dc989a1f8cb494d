"""Parked learning in the store (SQLite migration 10, PostgreSQL migration 5): an exchange
whose memory work failed too often leaves the passes' retries with its last error, stays
listed until retried, and goes with its messages when they are forgotten."""

from __future__ import annotations

import sqlite3

import pytest

from lobug.store.engines import open_database, sqlite_path
from lobug.store.models import Message
from lobug.store.postgres.schema import MIGRATIONS as POSTGRES_MIGRATIONS
from lobug.store.protocol import Store
from lobug.store.sqlite.schema import MIGRATIONS as SQLITE_MIGRATIONS

pytestmark = pytest.mark.both_engines

NOW = float("inf")


def answered(store: Store, said: str) -> tuple[Message, Message]:
    asked = store.append_message("lobug", "kitchen", "user", said)
    return asked, store.append_reply_for_memory_work("lobug", "kitchen", "Noted.", asked)


def test_a_parked_exchange_leaves_the_retries_and_keeps_its_error(store: Store) -> None:
    asked, reply = answered(store, "My sister is Ana")
    _, other = answered(store, "I like tea")
    assert store.count_failed_attempt(reply.id, "unreadable output") == 1
    assert store.count_failed_attempt(reply.id, "the model is down") == 2
    store.park_exchange(reply.id)
    store.count_failed_attempt(other.id)  # failed once: any process may take it (PostgreSQL)

    assert [q.assistant.id for q in store.queued_exchanges(10, NOW)] == [other.id]
    assert (store.count_queued_exchanges(), store.count_parked_exchanges()) == (1, 1)
    [parked] = store.parked_exchanges(10)
    assert (parked.user.id, parked.assistant.id, parked.user.content) == (
        asked.id,
        reply.id,
        "My sister is Ana",
    )
    assert (parked.attempts, parked.error, parked.user.agent) == (2, "the model is down", "lobug")
    assert parked.parked_at > 0
    assert store.parked_exchanges(10, [other.id]) == []
    assert store.parked_exchanges(10, []) == []
    assert [p.assistant.id for p in store.parked_exchanges(10, [reply.id])] == [reply.id]

    store.dequeue_exchange(reply.id)  # learned from at last
    assert (store.count_queued_exchanges(), store.count_parked_exchanges()) == (1, 0)


def test_forgetting_the_messages_takes_their_parked_exchange_along(store: Store) -> None:
    asked, reply = answered(store, "My sister is Ana")
    store.count_failed_attempt(reply.id, "unreadable output")
    store.park_exchange(reply.id)
    store.forget_messages("lobug", [asked.id, reply.id], actor="test")
    assert store.parked_exchanges(10) == [] and store.count_parked_exchanges() == 0


def queue_before_parking(url: str, engine: str) -> None:
    """A database at the migration before parking, with one exchange waiting."""
    rows = (
        "INSERT INTO agents(id, name, created_at) VALUES (1, 'lobug', 1.0)",
        "INSERT INTO conversation_log(id, agent_id, device_id, role, content, created_at) "
        "VALUES (1, 1, 'kitchen', 'user', 'I like tea', 1.0)",
        "INSERT INTO conversation_log(id, agent_id, device_id, role, content, created_at) "
        "VALUES (2, 1, 'kitchen', 'assistant', 'Tea it is.', 2.0)",
        "INSERT INTO learning_queue(assistant_message_id, user_message_id, attempts, queued_at) "
        "VALUES (2, 1, 2, 2.0)",
    )
    if engine == "sqlite":
        path = sqlite_path(url)
        assert path is not None
        conn = sqlite3.connect(path)
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at REAL NOT NULL)"
        )
        for migration in SQLITE_MIGRATIONS[:9]:
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, 0)",
                (migration.version, migration.name),
            )
        for row in rows:
            conn.execute(row)
        conn.commit()
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        pg.execute("DROP SCHEMA public CASCADE")  # a clone of a migrated database
        pg.execute("CREATE SCHEMA public")
        pg.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at DOUBLE PRECISION NOT NULL)"
        )
        for migration in POSTGRES_MIGRATIONS[:4]:
            for statement in migration.statements:
                pg.execute(statement)
            pg.execute(
                "INSERT INTO schema_migrations VALUES (%s, %s, 0)",
                (migration.version, migration.name),
            )
        for row in rows:
            pg.execute(row)


def test_an_exchange_queued_before_the_migration_still_waits_unparked(
    database_url: str, engine: str
) -> None:
    queue_before_parking(database_url, engine)
    store = open_database(database_url)
    try:
        [waiting] = store.queued_exchanges(10, NOW)
        assert (waiting.assistant.id, waiting.attempts) == (2, 2)
        assert store.count_parked_exchanges() == 0
        assert store.count_failed_attempt(2, "unreadable output") == 3
        store.park_exchange(2)
        assert [p.error for p in store.parked_exchanges(10)] == ["unreadable output"]
    finally:
        store.close()
