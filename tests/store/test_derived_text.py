"""How derived text was made, in the store (SQLite migration 11, PostgreSQL migration 6):
`made_by` and `dropped_sentences` kept with summaries, base memory versions and topics, and
the notes older versions wrote into the text ("Extractive summary (the user's own words; the
model's summary failed): ...") taken out of it into the field."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from lobug.store.engines import open_database, sqlite_path
from lobug.store.models import DreamChange, NewFact, TopicDraft, TopicMember
from lobug.store.postgres.schema import MIGRATIONS as POSTGRES_MIGRATIONS
from lobug.store.protocol import Store
from lobug.store.sqlite.schema import MIGRATIONS as SQLITE_MIGRATIONS
from lobug.store.sqlite.schema import OLD_EXTRACTIVE_BASE, OLD_EXTRACTIVE_SUMMARY
from tests.fakes import FakeEmbedder

pytestmark = pytest.mark.both_engines

OLD_SUMMARY = f"{OLD_EXTRACTIVE_SUMMARY} The user has a dog called Biscuit."
OLD_BASE = f"{OLD_EXTRACTIVE_BASE}\n- The user has a dog called Biscuit."


def before(migrations: tuple[Any, ...]) -> tuple[Any, ...]:
    """The migrations before this one."""
    names = [m.name for m in migrations]
    return migrations[: names.index("derived_text")]


def insert_old_rows(execute: Callable[..., Any], mark: str) -> None:
    """What older versions wrote, through either engine's `execute(sql, params)`."""
    values = lambda n: ", ".join([mark] * n)  # noqa: E731
    execute("INSERT INTO agents(id, name, created_at) VALUES (1, 'lobug', 1.0)", ())
    execute(
        "INSERT INTO conversation_log(id, agent_id, device_id, role, content, created_at) "
        "VALUES (1, 1, 'desk', 'user', 'I have a dog called Biscuit', 1.0)",
        (),
    )
    for summary_id, content in ((1, OLD_SUMMARY), (2, "The user talked about Biscuit.")):
        execute(
            "INSERT INTO summaries(id, agent_id, content, source_from_id, source_to_id, "
            f"created_at) VALUES ({values(3)}, 1, 1, 2.0)",
            (summary_id, 1, content),
        )
    for version_id, content, writer in (
        (1, "The user has a dog.", "cascade"),
        (2, "My own notes.", "manual"),
        (3, OLD_BASE, "cascade"),
    ):
        execute(
            "INSERT INTO base_memory_versions(id, agent_id, content, written_by, created_at) "
            f"VALUES ({values(4)}, 3.0)",
            (version_id, 1, content, writer),
        )
    execute(
        f"INSERT INTO base_memory(agent_id, content, updated_at) VALUES (1, {mark}, 3.0)",
        (OLD_BASE,),
    )
    execute(
        "INSERT INTO dreams(id, agent_id, started_at, finished_at, diary, base_memory_before, "
        f"watermark) VALUES (1, 1, 4.0, 4.0, 'diary', {mark}, 'w')",
        (OLD_BASE,),
    )
    execute(
        "INSERT INTO topics(id, agent_id, position, name, summary, written_by, built_at, size, "
        f"last_active_at) VALUES (1, 1, 0, 'Biscuit', {mark}, 'extractive', 5.0, 2, 5.0)",
        (f"The user likes walks. {OLD_SUMMARY}",),
    )


def sqlite_before(url: str) -> None:
    path = sqlite_path(url)
    assert path is not None
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at REAL NOT NULL)"
    )
    for migration in before(SQLITE_MIGRATIONS):
        for statement in migration.statements:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, 0)", (migration.version, migration.name)
        )
    insert_old_rows(conn.execute, "?")
    conn.commit()
    conn.close()


def postgres_before(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")  # a clone of a migrated database
        conn.execute("CREATE SCHEMA public")
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at DOUBLE PRECISION NOT NULL)"
        )
        for migration in before(POSTGRES_MIGRATIONS):
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations VALUES (%s, %s, 0)",
                (migration.version, migration.name),
            )
        insert_old_rows(conn.execute, "%s")


def test_the_migration_takes_the_notes_out_of_the_text_into_made_by(
    database_url: str, engine: str
) -> None:
    (sqlite_before if engine == "sqlite" else postgres_before)(database_url)
    store = open_database(database_url)
    try:
        summaries = [(s.content, s.made_by) for s in store.summaries("lobug")]
        versions = [
            (v.content, v.written_by, v.made_by) for v in store.base_memory_history("lobug")
        ]
        base = store.base_memory("lobug")
        dream_before = store.dream("lobug", 1).base_memory_before
        (topic,) = store.topics("lobug")
    finally:
        store.close()
    assert summaries == [
        ("The user has a dog called Biscuit.", "extractive"),
        ("The user talked about Biscuit.", "model"),
    ]
    assert versions == [
        ("- The user has a dog called Biscuit.", "cascade", "extractive"),
        ("My own notes.", "manual", "person"),
        ("The user has a dog.", "cascade", "model"),
    ]
    assert base == dream_before == "- The user has a dog called Biscuit."
    assert topic.summary == "The user likes walks. The user has a dog called Biscuit."
    assert topic.dropped_sentences == 0


def test_how_a_text_was_made_is_kept_with_it(store: Store, fake_embedder: FakeEmbedder) -> None:
    said = store.append_message("lobug", "desk", "user", "I have a dog called Biscuit")
    summary = store.add_summary(
        "lobug", "The user has a dog.", [said], made_by="model", dropped_sentences=2
    )
    assert (summary.made_by, summary.dropped_sentences) == ("model", 2)
    assert store.summaries("lobug")[0] == summary
    store.distill_base_memory("lobug", "- Biscuit", [summary], made_by="extractive")
    store.write_base_memory("lobug", "My notes", actor="manual")
    fact = store.add_fact("lobug", NewFact("The user has a dog"), fake_embedder.embed("dog"))
    change = DreamChange("retire", fact.id, None, "test")
    dream = store.apply_dream(
        "lobug",
        [change],
        "The user has a dog.",
        "diary",
        started_at=1.0,
        made_by="model",
        dropped_sentences=1,
    )
    history = [
        (v.written_by, v.made_by, v.dropped_sentences) for v in store.base_memory_history("lobug")
    ]
    assert history == [("dream", "model", 1), ("manual", "person", 0), ("cascade", "extractive", 0)]
    store.undo_dream("lobug", dream.id, actor="cli")
    restored = store.base_memory_history("lobug")[0]
    assert (restored.content, restored.written_by, restored.made_by) == (
        "My notes",
        "cli",
        "person",
    )
    member = TopicMember("fact", fact.id, 1.0)
    other = store.add_fact("lobug", NewFact("The user walks"), fake_embedder.embed("walks"))
    draft = TopicDraft(
        "Dog",
        "The user has a dog.",
        (),
        (),
        (member, TopicMember("fact", other.id, 1.0)),
        "model",
        dropped_sentences=3,
    )
    (topic,) = store.replace_topics("lobug", [draft])
    assert topic.dropped_sentences == 3
