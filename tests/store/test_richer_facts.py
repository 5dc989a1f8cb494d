"""Richer facts in the store (SQLite migration 8, PostgreSQL migration 3): the old types
mapped, free-text time spans cleared, a commitment's due time kept, facts listed by type."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from lobug.config import MemoryConfig
from lobug.memory.curation import Curation
from lobug.store.engines import open_database, sqlite_path
from lobug.store.models import FACT_TYPES, FactQuery, NewFact
from lobug.store.postgres.schema import MIGRATIONS as POSTGRES_MIGRATIONS
from lobug.store.protocol import Store
from lobug.store.sqlite.schema import MIGRATIONS as SQLITE_MIGRATIONS
from tests.fakes import FakeEmbedder

pytestmark = pytest.mark.both_engines

# (id, old type, old time_span) -> (new type, new time_span)
OLD_FACTS = {
    1: (("personal", None), ("identity", None)),
    2: (("knowledge", "last year"), ("trait", None)),
    3: (("preference", "long_term"), ("preference", "long_term")),
    4: (("event", "2023"), ("event", None)),
    5: (("gossip", None), ("trait", None)),
}


def sqlite_before_richer_facts(url: str) -> None:
    path = sqlite_path(url)
    assert path is not None
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at REAL NOT NULL)"
    )
    for migration in SQLITE_MIGRATIONS[:7]:
        for statement in migration.statements:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, 0)", (migration.version, migration.name)
        )
    insert_old_facts(conn.execute, "?")
    conn.commit()
    conn.close()


def postgres_before_richer_facts(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        # The test database is a clone of a migrated one: start again from nothing.
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at DOUBLE PRECISION NOT NULL)"
        )
        for migration in POSTGRES_MIGRATIONS[:2]:
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations VALUES (%s, %s, 0)",
                (migration.version, migration.name),
            )
        insert_old_facts(conn.execute, "%s")


def insert_old_facts(execute: Callable[..., Any], mark: str) -> None:
    """Facts of the old types, through either engine's `execute(sql, params)`."""
    execute("INSERT INTO agents(id, name, created_at) VALUES (1, 'lobug', 1.0)", ())
    for fact_id, ((kind, span), _) in OLD_FACTS.items():
        execute(
            "INSERT INTO facts(id, agent_id, content, fact_type, time_span, created_at, "
            f"valid_from) VALUES ({mark}, 1, {mark}, {mark}, {mark}, 1.0, 1.0)",
            (fact_id, f"fact {fact_id}", kind, span),
        )


def test_the_migration_maps_old_types_and_clears_free_text_time_spans(
    database_url: str, engine: str, fake_embedder: FakeEmbedder
) -> None:
    if engine == "sqlite":
        sqlite_before_richer_facts(database_url)
    else:
        postgres_before_richer_facts(database_url)
    store = open_database(database_url)
    try:
        found = {
            f.id: (f.fact_type, f.time_span, f.due_at)
            for f in store.list_facts("lobug", FactQuery(include_history=True))[0]
        }
    finally:
        store.close()
    assert found == {i: (*new, None) for i, (_, new) in OLD_FACTS.items()}


def test_facts_keep_type_time_span_and_due_time(store: Store, fake_embedder: FakeEmbedder) -> None:
    promise = NewFact(
        "The user will call Anna on Friday", "commitment", time_span="future", due_at=1710460800.0
    )
    stored = store.add_fact("lobug", promise, fake_embedder.embed(promise.content))
    assert (stored.fact_type, stored.time_span, stored.due_at) == (
        "commitment",
        "future",
        1710460800.0,
    )
    store.add_fact(
        "lobug", NewFact("The user is vegan", "constraint"), fake_embedder.embed("vegan")
    )
    listed, total = store.list_facts("lobug", FactQuery(fact_type="commitment"))
    assert total == 1 and listed[0].due_at == 1710460800.0
    assert {f.fact_type for f in store.facts("lobug")} <= set(FACT_TYPES)


def test_a_correction_keeps_the_due_time(store: Store, fake_embedder: FakeEmbedder) -> None:
    promise = NewFact("The user will call Anna", "commitment", due_at=100.0)
    old = store.add_fact("lobug", promise, fake_embedder.embed(promise.content))
    curation = Curation(store, fake_embedder, MemoryConfig())
    new = curation.correct_fact("lobug", old.id, "The user will call Anna and Ben", actor="cli")
    assert (new.fact_type, new.due_at) == ("commitment", 100.0)
