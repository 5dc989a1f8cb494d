"""What only the PostgreSQL engine does: several processes on one database (claimed work,
exclusive maintenance), storage errors, engine URLs, and copying a SQLite memory into it."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from lobug.store.engines import open_database, redacted, sqlite_path
from lobug.store.errors import StorageUnavailable, StoreError
from lobug.store.household import PRIVATE, Speaker
from lobug.store.migrate import migrate_database
from lobug.store.models import DreamChange, FactFlags, NewFact, TopicDraft, TopicMember
from lobug.store.protocol import Store
from lobug.store.sqlite.engine import SQLiteStore
from tests.engines import Databases
from tests.fakes import FakeClock, FakeEmbedder
from tests.store.test_protocol import protocol_methods, shape

pytest.importorskip("psycopg")

from lobug.store.postgres.engine import PostgresStore
from lobug.store.postgres.queue import CLAIM_LEASE_S


@pytest.fixture
def two(postgres: Databases) -> tuple[PostgresStore, PostgresStore, FakeClock]:
    """Two stores on one database, as two processes would hold them, sharing a clock."""
    url, clock = postgres.fresh(), FakeClock(1_000_000.0)
    first, second = PostgresStore(url, clock=clock), PostgresStore(url, clock=clock)
    for store in (first, second):
        store.bind_embedding("fake-embed", 64)
    yield first, second, clock
    first.close()
    second.close()


def test_postgres_store_takes_the_protocols_parameters() -> None:
    assert issubclass(PostgresStore, Store)
    for name in protocol_methods():
        expected = inspect.signature(getattr(Store, name))
        assert shape(inspect.signature(getattr(PostgresStore, name))) == shape(expected), name


def test_an_exchange_is_claimed_by_one_process_only(
    two: tuple[PostgresStore, PostgresStore, FakeClock],
) -> None:
    first, second, clock = two
    said = first.append_message("a", "desk", "user", "hello")
    reply = first.append_reply_for_memory_work("a", "desk", "hi", said)
    clock.now += 1
    assert second.queued_exchanges(10, clock.now) == []  # the writer holds it
    clock.now += CLAIM_LEASE_S + 1  # the writer died: its claim runs out
    with ThreadPoolExecutor(2) as pool:
        claims = list(pool.map(lambda s: s.queued_exchanges(10, clock.now), [first, second]))
    assert sorted(len(c) for c in claims) == [0, 1]
    (claimed,) = next(c for c in claims if c)
    assert (claimed.user.id, claimed.assistant.id, claimed.attempts) == (said.id, reply.id, 0)
    assert first.count_failed_attempt(reply.id) == 1  # gives the claim back
    assert [q.attempts for q in second.queued_exchanges(10, clock.now)] == [1]
    second.dequeue_exchange(reply.id)
    assert first.count_queued_exchanges() == 0


def test_maintenance_runs_in_one_process_at_a_time(
    two: tuple[PostgresStore, PostgresStore, FakeClock],
) -> None:
    first, second, _ = two
    with first.exclusively("maintenance:x") as held:
        assert held
        with second.exclusively("maintenance:x") as other:
            assert not other
        with second.exclusively("maintenance:y") as unrelated:
            assert unrelated
    with second.exclusively("maintenance:x") as after:
        assert after


def test_a_fact_changed_in_one_process_is_seen_by_the_other(
    two: tuple[PostgresStore, PostgresStore, FakeClock], fake_embedder: FakeEmbedder
) -> None:
    first, second, _ = two
    fact = first.add_fact("a", NewFact("The user likes tea"), fake_embedder.embed("tea"))
    second.set_fact_flags("a", fact.id, FactFlags(pinned=True), actor="manual")
    assert [f.id for f in first.pinned_facts("a")] == [fact.id]
    second.delete_agent("a", actor="manual")
    assert first.find_agent("a") is None
    assert first.append_message("a", "desk", "user", "again").content == "again"


def nearest_ids(vectors: np.ndarray, first_id: int, query: np.ndarray, k: int) -> list[int]:
    return [first_id + int(i) for i in np.argsort(-(vectors @ query))[:k]]


def test_vector_search_matches_exact_search_on_every_path(
    two: tuple[PostgresStore, PostgresStore, FakeClock],
) -> None:
    store, _, _ = two
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(330, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    big, small = vectors[:300], vectors[300:]
    store.add_facts_bulk("big", [(NewFact(f"b{i}"), v) for i, v in enumerate(big)])
    store.add_facts_bulk("small", [(NewFact(f"s{i}"), v) for i, v in enumerate(small)])
    store.exact_scan_rows = 100  # "small" is scanned, "big" goes through HNSW
    for query in rng.normal(size=(5, 64)).astype(np.float32):
        query /= np.linalg.norm(query)
        store.ef_search = 1000
        for agent, rows, first_id in (("big", big, 1), ("small", small, 301)):
            hits = store.search_facts(agent, query, 5)
            assert [h.fact.id for h in hits] == nearest_ids(rows, first_id, query, 5), agent
        store.exact_scan_rows, store.ef_search = 0, 5  # too few of "small" in HNSW's 5
        hits = store.search_facts("small", query, 5)
        assert [h.fact.id for h in hits] == nearest_ids(small, 301, query, 5)
        store.exact_scan_rows = 100


def test_a_database_that_is_down_is_storage_unavailable() -> None:
    with pytest.raises(StorageUnavailable):
        PostgresStore("postgresql://nobody@127.0.0.1:9/nothing")


def test_urls_name_the_engine(tmp_path: Path) -> None:
    assert sqlite_path(f"sqlite:///{tmp_path}/m.db") == tmp_path / "m.db"
    assert sqlite_path("postgresql://h/db") is None
    assert redacted("postgresql://u:secret@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redacted("postgresql://h/db") == "postgresql://h/db"
    with pytest.raises(StoreError):
        open_database("mysql://h/db")
    opened = open_database(f"sqlite:///{tmp_path}/m.db")
    assert isinstance(opened, SQLiteStore)
    opened.close()


TEA_MEMBERS = (TopicMember("fact", 2, 1.0), TopicMember("episode", 1, 2.0))


def filled_sqlite(path: Path, embedder: FakeEmbedder) -> None:
    store = SQLiteStore(path)
    store.bind_embedding(embedder.model, embedder.dimension)
    said = store.append_embedded_message("a", "desk", "user", "I like tea", embedder.embed("tea"))
    store.append_reply_for_memory_work("a", "desk", "Noted", said)
    old = store.add_fact("a", NewFact("The user likes tea"), embedder.embed("likes tea"))
    store.correct_fact(
        "a", old.id, NewFact("The user loves tea"), embedder.embed("loves tea"), actor="manual"
    )
    store.create_block("a", "human", "Alice")
    store.write_base_memory("a", "User Profile", actor="manual")
    store.add_summary("a", "tea talk", [said], vector=embedder.embed("tea talk"))
    cake = store.add_fact("a", NewFact("The user bakes cakes"), embedder.embed("cakes"))
    retired = DreamChange("retire", cake.id, None, "over the cap")
    store.apply_dream("a", [retired], "User Profile: tea", "diary", started_at=1.0)
    tea = TopicDraft("Tea", "Tea talk.", ("Which tea?",), (), TEA_MEMBERS, "model")
    store.replace_topics("a", [tea])
    store.add_reminder("a", "desk", "call Anna", 2_000_000_000.0, actor="manual")
    filled_household(store, embedder)
    store.close()


def filled_household(store: SQLiteStore, embedder: FakeEmbedder) -> None:
    """A household on agent `h`: a person, their device, a message they said, a private fact."""
    jo = store.add_person("h", "Jo", actor="test").id
    store.set_device_person("h", "desk", jo, actor="test")
    store.append_message("h", "desk", "user", "My code is 44", speaker=Speaker(jo, "voice", 0.9))
    secret = NewFact("Jo's code is 44", owner_person_id=jo, scope=PRIVATE)
    store.add_fact("h", secret, embedder.embed(secret.content))


def test_migrate_db_copies_everything_and_can_run_again(
    tmp_path: Path, postgres: Databases, fake_embedder: FakeEmbedder
) -> None:
    source, target = f"sqlite:///{tmp_path}/a.db", postgres.fresh()
    filled_sqlite(tmp_path / "a.db", fake_embedder)
    seen: list[tuple[str, int, int]] = []
    report = migrate_database(source, target, batch=1, progress=lambda *p: seen.append(p))
    assert report.ok and report.target_counts["conversation_log"] == 3
    assert ("facts", 4, 4) in seen and ("people", 1, 1) in seen
    for table in ("summary_vectors", "dreams", "dream_vectors", "topics", "reminders"):
        assert report.target_counts[table] == 1, table
    assert report.target_counts["topic_members"] == 2
    again = migrate_database(source, target)
    assert again.ok and again.target_counts == report.target_counts
    store = PostgresStore(target)
    store.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    (current,) = store.facts("a")
    assert current.content == "The user loves tea"
    (episode,) = store.summaries("a")
    assert episode.started_at is not None and episode.started_at == episode.ended_at
    assert store.search_summaries("a", fake_embedder.embed("tea talk"), 1)[0][0] == episode
    (dream,) = store.dreams("a")
    store.undo_dream("a", dream.id, actor="manual")  # the retired fact's vector came along
    assert store.search_facts("a", fake_embedder.embed("cakes"), 1)[0].fact.id == 3
    first_version = store.fact_versions("a", current.id)[0]
    assert first_version.content == "The user likes tea"
    assert store.search_facts("a", fake_embedder.embed("loves tea"), 1)[0].fact.id == current.id
    assert store.search_messages("a", fake_embedder.embed("tea"), 1)[0].message.content == (
        "I like tea"
    )
    assert store.append_message("a", "desk", "user", "new").id == 4  # ids continue
    assert store.apply_dream("a", [], None, "again", started_at=2.0).id == 2
    (reminder,) = store.waiting_reminders("a")
    assert (reminder.what, reminder.ring_at) == ("call Anna", 2_000_000_000.0)
    assert store.add_reminder("a", "desk", "later", 3.0, actor="manual").id == 2  # ids continue
    (topic,) = store.topics("a")
    assert (topic.name, topic.open_questions) == ("Tea", ("Which tea?",))
    assert set(topic.members) == set(TEA_MEMBERS)
    [jo] = store.people("h")  # the household came along: still private, still Jo's words
    assert (jo.name, jo.devices, store.device_person("h", "desk")) == ("Jo", ("desk",), jo.id)
    [code] = store.facts("h")
    assert (code.owner_person_id, code.scope) == (jo.id, PRIVATE)
    [said] = store.agent_messages("h", 1)
    assert (said.person_id, said.speaker_source, said.speaker_confidence) == (jo.id, "voice", 0.9)
    assert store.add_person("h", "Al", actor="test").id > jo.id  # ids continue
    store.close()


@pytest.mark.both_engines
def test_similarities_of_chosen_ids(store: Store, fake_embedder: FakeEmbedder) -> None:
    tea = store.add_fact("a", NewFact("tea"), fake_embedder.embed("tea"))
    said = store.append_embedded_message("a", "d", "user", "tea", fake_embedder.embed("tea"))
    query = fake_embedder.embed("tea")
    assert store.fact_similarities([tea.id, 999], query) == {tea.id: pytest.approx(1.0)}
    assert store.message_similarities([said.id], query) == {said.id: pytest.approx(1.0)}
    assert store.fact_similarities([], query) == {}


@pytest.mark.both_engines
def test_fact_hits_are_the_searches_without_the_rows(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    for text in ("green tea with Anna", "black tea at noon", "a walk with the dog"):
        store.add_fact("a", NewFact(text), fake_embedder.embed(text))
    scored = store.facts("a")[1]
    store.set_fact_flags("a", scored.id, FactFlags(user_score=8), actor="manual")
    query = fake_embedder.embed("tea")
    near = store.nearest_fact_hits("a", query, 2)
    assert [(h.id, h.score) for h in near] == [
        (hit.fact.id, pytest.approx(hit.similarity)) for hit in store.search_facts("a", query, 2)
    ]
    by_id = {fact.id: fact for fact in store.facts("a")}
    words = store.keyword_fact_hits("a", "tea and Anna", 5)
    assert [by_id[h.id].content for h in words] == ["green tea with Anna", "black tea at noon"]
    for hit in [*near, *words]:
        fact = by_id[hit.id]
        assert (hit.created_at, hit.user_score) == (fact.created_at, fact.user_score)
    assert store.keyword_fact_hits("b", "tea", 5) == []


@pytest.mark.both_engines
def test_fact_texts_containing_a_word_in_any_case(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    texts = ("The user's sister Nadia is a pilot", "REX barks", "100% cotton", "a_b", "Nadiaz")
    for text in texts:
        store.add_fact("a", NewFact(text), fake_embedder.embed(text))
    old = store.add_fact("a", NewFact("Rex is old"), fake_embedder.embed("Rex is old"))
    store.forget_fact("a", old.id, actor="manual")
    assert sorted(store.fact_texts_containing("a", ["nadia", "rex"])) == [
        "Nadiaz",
        "REX barks",
        "The user's sister Nadia is a pilot",
    ]
    assert sorted(store.fact_texts_containing("a", ["0%", "a_"])) == ["100% cotton", "a_b"]
    assert store.fact_texts_containing("a", ["%"]) == ["100% cotton"]
    assert store.fact_texts_containing("a", []) == []
    assert store.fact_texts_containing("b", ["rex"]) == []


@pytest.mark.both_engines
def test_lone_messages_pair_blocks_delete_and_activity_count(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    asked = store.append_message_to_learn("a", "api", "user", "hi", fake_embedder.embed("hi"))
    answered = store.append_message_to_learn("a", "api", "assistant", "hello", None)
    assert asked.user is None and answered.user == asked.message
    assert store.count_queued_exchanges() == 1
    store.create_block("a", "human", "Alice")
    store.delete_block("a", "human", actor="manual")
    assert store.blocks("a") == []
    (day,) = store.conversation_days("a", 10)
    assert (day.device_id, day.messages) == ("api", 2)
    assert [g.messages for g in store.growth_by_day("a", 0)] == [2]
    assert [d.replies for d in store.reply_latency_by_day("a", 0)] == [1]
    agent_id = store.agent_id("a")  # type: ignore[attr-defined]
    assert [r["content"] for r in store.export_records(agent_id, "messages")] == ["hi", "hello"]
    assert store.base_memory_row(agent_id) == ("", False)


def test_postgres_refuses_file_backup(
    two: tuple[PostgresStore, PostgresStore, FakeClock], tmp_path: Path
) -> None:
    first, _, _ = two
    first.append_message("a", "api", "user", "hi")
    assert first.content_keys("a") and first.content_keys("nobody") == set()
    assert first.import_agents([], {}, merge=False, actor="cli") == []
    with pytest.raises(StoreError, match="pg_dump"):
        first.backup(tmp_path / "copy.db")


def test_the_migrate_db_command_copies_and_reports(
    tmp_path: Path, postgres: Databases, fake_embedder: FakeEmbedder
) -> None:
    filled_sqlite(tmp_path / "a.db", fake_embedder)
    target = postgres.fresh()
    command = [sys.executable, "-m", "lobug", "migrate-db", "--from", f"sqlite:///{tmp_path}/a.db"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "server")}
    done = subprocess.run(
        [*command, "--to", target], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "message checksum: equal" in done.stdout
    assert re.search(r"conversation_log\s+3\s+3", done.stdout)


def test_an_index_build_is_given_memory_for_its_whole_graph() -> None:
    from lobug.store.postgres.vectors import (
        INDEX_BUILD_MAX_MB,
        INDEX_BUILD_MIN_MB,
        index_build_memory_mb,
    )

    assert index_build_memory_mb(0, 0) == INDEX_BUILD_MIN_MB
    million_vectors_mb = 1_000_000 * 384 * 4 / 2**20
    assert million_vectors_mb * 1.5 < index_build_memory_mb(1_000_000, 384) < INDEX_BUILD_MAX_MB
    assert index_build_memory_mb(100_000_000, 384) == INDEX_BUILD_MAX_MB
