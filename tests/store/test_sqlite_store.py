from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from lobug.store.errors import EmbeddingMismatch, StoreError
from lobug.store.models import FactFlags, FactQuery, NewFact
from lobug.store.sqlite.database import open_connection
from lobug.store.sqlite.engine import SQLiteStore
from lobug.store.sqlite.schema import MIGRATIONS
from tests.fakes import FakeEmbedder


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_blank_database_is_migrated_to_the_latest_version(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "blank.db")
    assert store.schema_version() == MIGRATIONS[-1].version
    assert {
        "agents",
        "conversation_log",
        "facts",
        "summaries",
        "base_memory",
        "store_meta",
        "schema_migrations",
    } <= store.table_names()
    store.close()


def test_migrations_are_recorded_and_not_applied_twice(tmp_path: Path) -> None:
    path = tmp_path / "twice.db"
    SQLiteStore(path).close()
    reopened = SQLiteStore(path)
    assert reopened.migrate() == []
    reopened.close()
    conn = open_connection(path)
    rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    conn.close()
    assert rows == [(m.version, m.name) for m in MIGRATIONS]


def test_database_uses_wal_and_creates_parent_folders(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "memory.db"
    store = SQLiteStore(path)
    store.close()
    for folder in (tmp_path / "deep", tmp_path / "deep" / "er"):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    conn = open_connection(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


@pytest.mark.both_engines
def test_messages_are_kept_per_device_oldest_first(store: SQLiteStore) -> None:
    for i in range(5):
        store.append_message("lobug", "kitchen", "user", f"kitchen {i}")
        store.append_message("lobug", "desk", "user", f"desk {i}")
    recent = store.recent_messages("lobug", "kitchen", 3)
    assert [m.content for m in recent] == ["kitchen 2", "kitchen 3", "kitchen 4"]
    assert store.count_unsummarized("lobug") == 10


def test_messages_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "persist.db"
    first = SQLiteStore(path)
    first.append_message("lobug", "default", "user", "remember me")
    first.close()
    second = SQLiteStore(path)
    assert [m.content for m in second.recent_messages("lobug", "default", 20)] == ["remember me"]
    second.close()


@pytest.mark.both_engines
def test_agents_are_separate_namespaces(store: SQLiteStore) -> None:
    store.add_fact("alex", NewFact("Alex likes tea"), unit(1, 0, *[0] * 62))
    assert store.facts("lobug") == []
    assert store.search_facts("lobug", unit(1, 0, *[0] * 62), 5) == []
    assert [f.content for f in store.facts("alex")] == ["Alex likes tea"]


def test_superseded_fact_becomes_linked_history(store: SQLiteStore) -> None:
    old = store.add_fact(
        "lobug", NewFact("The user lives in Portland", "identity"), unit(1, 0, *[0] * 62)
    )
    added = store.add_fact_superseding_duplicate(
        "lobug",
        NewFact("The user lives in Seattle", "identity"),
        unit(1, 0.1, *[0] * 62),
        duplicate_distance=0.1,
    )
    new = added.fact
    assert added.superseded == (old.id,)
    history = {f.id: f for f in store.list_facts("lobug", FactQuery(include_history=True))[0][::-1]}
    assert history[old.id].invalidated_at is not None
    assert history[old.id].superseded_by == new.id
    assert [f.id for f in store.facts("lobug")] == [new.id]
    hits = store.search_facts("lobug", unit(1, 0, *[0] * 62), 5)
    assert [h.fact.id for h in hits] == [new.id]
    assert [h.fact.id for h in store.search_facts_sqlite("lobug", unit(1, 0, *[0] * 62), 5)] == [
        new.id
    ]


@pytest.mark.both_engines
def test_fact_fields_round_trip(store: SQLiteStore) -> None:
    fact = NewFact(
        content="The user has a dentist appointment on Friday",
        fact_type="event",
        subject="user",
        relation="has appointment",
        object="dentist",
        time_span="Friday",
        confidence=0.8,
        source_message_ids=(3, 4),
    )
    stored = store.add_fact("lobug", fact, unit(0, 1, *[0] * 62))
    assert (stored.subject, stored.relation, stored.object, stored.time_span) == (
        "user",
        "has appointment",
        "dentist",
        "Friday",
    )
    assert stored.source_message_ids == (3, 4)
    assert stored.confidence == pytest.approx(0.8)
    assert stored.valid_from == stored.created_at
    store.set_fact_flags("lobug", stored.id, FactFlags(user_score=9), actor="manual")
    assert store.get_fact(stored.id).user_score == 9
    with pytest.raises(StoreError):
        store.set_fact_flags("lobug", stored.id, FactFlags(user_score=11), actor="manual")


def test_fast_index_agrees_with_sqlite_vec(store: SQLiteStore) -> None:
    rng = np.random.default_rng(7)
    rows = []
    for i in range(300):
        vector = rng.normal(size=64).astype(np.float32)
        rows.append((NewFact(f"fact {i}"), vector / np.linalg.norm(vector)))
    store.add_facts_bulk("lobug", rows)
    for _ in range(10):
        query = rng.normal(size=64).astype(np.float32)
        query /= np.linalg.norm(query)
        fast = store.search_facts("lobug", query, 5)
        exact = store.search_facts_sqlite("lobug", query, 5)
        assert [h.fact.id for h in fast] == [h.fact.id for h in exact]
        assert [h.similarity for h in fast] == pytest.approx(
            [h.similarity for h in exact], abs=1e-5
        )


def test_index_is_rebuilt_from_the_store_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    first = SQLiteStore(path)
    first.bind_embedding("m", 64)
    kept = first.add_fact("lobug", NewFact("kept"), unit(1, *[0] * 63))
    first.add_fact("lobug", NewFact("replacement"), unit(0, 1, *[0] * 62))
    first.close()
    second = SQLiteStore(path)
    second.bind_embedding("m", 64)
    assert second.index is not None and len(second.index) == 2
    assert second.search_facts("lobug", unit(1, *[0] * 63), 1)[0].fact.id == kept.id
    second.close()


def test_other_embedding_model_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "mismatch.db"
    first = SQLiteStore(path)
    first.bind_embedding("model-a", 64)
    first.close()
    second = SQLiteStore(path)
    with pytest.raises(EmbeddingMismatch, match="lobug reindex"):
        second.bind_embedding("model-b", 128)
    second.close()


def test_reindex_switches_model_and_dimension(tmp_path: Path) -> None:
    path = tmp_path / "reindex.db"
    old = SQLiteStore(path)
    old.bind_embedding("model-a", 4)
    old.add_fact("lobug", NewFact("The user likes green tea"), unit(1, 0, 0, 0))
    superseded = old.add_fact("lobug", NewFact("The user lives in Oslo"), unit(0, 1, 0, 0))
    added = old.add_fact_superseding_duplicate(
        "lobug", NewFact("The user lives in Bergen"), unit(0, 1, 0.1, 0), duplicate_distance=0.1
    )
    assert added.superseded == (superseded.id,)
    old.close()

    embedder = FakeEmbedder(dim=32)
    store = SQLiteStore(path)
    assert store.reindex(embedder.model, 32, embedder.embed_batch) == 2
    store.close()
    store = SQLiteStore(path)
    store.bind_embedding(embedder.model, 32)
    hits = store.search_facts("lobug", embedder.embed("green tea"), 1)
    assert hits[0].fact.content == "The user likes green tea"
    store.close()


@pytest.mark.both_engines
def test_summary_marks_its_messages(store: SQLiteStore) -> None:
    messages = [store.append_message("lobug", "d", "user", f"m{i}") for i in range(4)]
    summary = store.add_summary("lobug", "they talked", messages[:3])
    assert (summary.source_from_id, summary.source_to_id) == (messages[0].id, messages[2].id)
    assert [m.id for m in store.unsummarized_messages("lobug")] == [messages[3].id]
    store.distill_base_memory("lobug", "User Profile:\n- talks", [summary])
    assert store.base_memory("lobug") == "User Profile:\n- talks"
    assert store.count_unincorporated("lobug") == 0


def test_vectors_need_a_bound_embedding(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "unbound.db")
    with pytest.raises(StoreError):
        store.add_fact("lobug", NewFact("x"), unit(1, 0))
    store.close()


def test_new_database_is_private_to_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "private" / "memory.db"
    store = SQLiteStore(path)
    store.append_message("lobug", "d", "user", "secret")
    assert path.parent.stat().st_mode & 0o777 == 0o700
    for created in (path, path.with_name("memory.db-wal")):
        assert created.stat().st_mode & 0o077 == 0, created
    store.close()


def test_two_processes_sharing_the_file_never_see_database_is_locked(tmp_path: Path) -> None:
    """`lobug serve` and `lobug memory-server` may share one file: writers wait their turn."""
    path = tmp_path / "shared.db"
    stores = [SQLiteStore(path), SQLiteStore(path)]
    stores[0].ensure_agent("a")

    def write(store: SQLiteStore, writer: int) -> None:
        for n in range(40):
            store.append_message("a", f"w{writer}", "user", f"writer {writer} message {n}")

    try:
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(write, [stores[i % 2] for i in range(6)], range(6)))
        contents = {m.content for m in stores[1].agent_messages("a", 1000)}
        assert len(contents) == 240
    finally:
        for store in stores:
            store.close()


@pytest.mark.both_engines
def test_facts_stored_at_once_never_duplicate(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    vector = fake_embedder.embed("The user likes tea")

    def add(_: int) -> tuple[int, ...]:
        added = store.add_fact_superseding_duplicate(
            "lobug", NewFact("The user likes tea"), vector, duplicate_distance=0.1
        )
        return added.superseded

    with ThreadPoolExecutor(8) as pool:
        superseded = list(pool.map(add, range(32)))
    assert [f.content for f in store.facts("lobug")] == ["The user likes tea"]
    assert sorted(len(ids) for ids in superseded) == [0] + [1] * 31
    assert store.search_facts("lobug", vector, 5)[0].fact.id == store.facts("lobug")[0].id
