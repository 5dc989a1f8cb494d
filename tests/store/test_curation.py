"""Curation in both stores: versions, flags, forgetting, purging, the audit log."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lobug.store.errors import FactNotCurrent, FactNotFound, SourcesForgotten
from lobug.store.models import FactFlags, FactQuery, NewFact
from lobug.store.protocol import Store
from tests.engines import stored_bytes
from tests.fakes import FakeEmbedder

pytestmark = pytest.mark.both_engines

SECRET = "Quaxilotl"


def fact_in(store: Store, embedder: FakeEmbedder, text: str, sources=()) -> int:  # type: ignore[no-untyped-def]
    added = store.add_fact_superseding_duplicate(
        "a",
        NewFact(text, source_message_ids=tuple(sources), origin="device:desk"),
        embedder.embed(text),
        duplicate_distance=0.05,
    )
    return added.fact.id


@pytest.fixture
def file_bytes(database_url: str) -> Callable[[Store], bytes]:
    """What the test's database holds (`store` opened it at `database_url` when not SQLite;
    the SQLite store fixture uses its own file)."""

    def read(store: Store) -> bytes:
        path = getattr(store, "path", None)
        return stored_bytes(f"sqlite:///{path}" if path else database_url)

    return read


def test_a_correction_is_a_new_version_and_the_chain_holds_both(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    old = fact_in(store, fake_embedder, "The user's car is red")
    store.set_fact_flags("a", old, FactFlags(pinned=True, user_score=7), actor="manual")
    new = store.correct_fact(
        "a", old, NewFact("The user's car is blue"), fake_embedder.embed("blue"), actor="manual"
    )
    assert (new.pinned, new.user_score) == (True, 7)
    versions = store.fact_versions("a", old)
    assert [v.id for v in versions] == [old, new.id]
    assert versions[0].superseded_by == new.id and not versions[0].is_current
    assert store.fact_versions("a", new.id) == versions
    with pytest.raises(FactNotCurrent):
        store.correct_fact("a", old, NewFact("x"), fake_embedder.embed("x"), actor="manual")
    with pytest.raises(FactNotFound):
        store.agent_fact("someone-else", new.id)


def test_listing_pages_filters_and_counts(store: Store, fake_embedder: FakeEmbedder) -> None:
    ids = [fact_in(store, fake_embedder, f"fact number {word}") for word in "abcde"]
    store.set_fact_flags("a", ids[1], FactFlags(pinned=True), actor="manual")
    page, total = store.list_facts("a", FactQuery(limit=2, offset=1))
    assert total == 5 and [f.id for f in page] == [ids[3], ids[2]]
    pinned, count = store.list_facts("a", FactQuery(pinned=True))
    assert count == 1 and pinned[0].id == ids[1]
    assert [f.id for f in store.pinned_facts("a")] == [ids[1]]


def test_forget_takes_a_fact_out_of_every_search_and_purge_erases_its_bytes(
    store: Store, fake_embedder: FakeEmbedder, file_bytes: Callable[[Store], bytes]
) -> None:
    first = fact_in(store, fake_embedder, f"The user's dog is called {SECRET}")
    second = store.correct_fact(
        "a", first, NewFact(f"The dog {SECRET} is nine"), fake_embedder.embed("dog"), actor="api"
    ).id
    store.forget_fact("a", second, actor="manual")
    assert store.search_facts("a", fake_embedder.embed("dog"), 5) == []
    assert store.keyword_fact_hits("a", SECRET, 5) == []
    assert store.pinned_facts("a") == [] and store.list_facts("a", FactQuery())[1] == 0
    assert all(f.forgotten_at for f in store.fact_versions("a", first))
    store.forget_fact("a", first, actor="manual", purge=True)
    versions = store.fact_versions("a", first)
    assert [v.content for v in versions] == ["", ""] and all(v.purged_at for v in versions)
    assert all(e.before is None and e.after is None for e in store.audit_entries("a", 50))
    assert SECRET.encode() not in file_bytes(store)


def test_forgetting_messages_cascades_into_facts_summaries_and_the_queue(
    store: Store, fake_embedder: FakeEmbedder, file_bytes: Callable[[Store], bytes]
) -> None:
    said = store.append_message("a", "desk", "user", f"My cat is {SECRET}")
    reply = store.append_reply_for_memory_work("a", "desk", "Nice cat", said)
    other = store.append_message("a", "desk", "user", "I like tea")
    only_forgotten = fact_in(store, fake_embedder, f"The cat is {SECRET}", [said.id, reply.id])
    mixed = fact_in(store, fake_embedder, "The user likes tea and cats", [said.id, other.id])
    summary = store.add_summary("a", f"Talked about {SECRET} and tea", [said, reply, other])
    store.distill_base_memory("a", "User Profile", [summary])
    forgotten = store.forget_messages("a", [said.id, reply.id], actor="voice")
    assert forgotten.messages == (said.id, reply.id)
    assert forgotten.facts == (only_forgotten,) and forgotten.summaries == (summary.id,)
    assert store.get_fact(mixed).is_current and store.get_fact(only_forgotten).content == ""
    assert store.summaries("a") == [] and store.base_memory_is_stale("a")
    assert [m.id for m in store.unsummarized_messages("a")] == [other.id]
    assert store.count_queued_exchanges() == 0
    assert store.keyword_messages("a", SECRET, 5) == []
    assert SECRET.encode() not in file_bytes(store)
    entry = store.audit_entries("a", 1)[0]
    assert (entry.action, entry.actor, entry.target_ids) == ("forget", "voice", (said.id, reply.id))
    assert entry.detail == {"messages": 2, "facts": 1, "summaries": 1}


def test_nothing_learned_from_forgotten_messages_is_stored_afterwards(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    said = store.append_message("a", "desk", "user", "My cat is Tom")
    store.forget_messages("a", [said.id], actor="manual")
    with pytest.raises(SourcesForgotten):
        fact_in(store, fake_embedder, "The cat is Tom", [said.id])
    with pytest.raises(SourcesForgotten):
        store.add_summary("a", "About Tom", [said])
    assert store.list_facts("a", FactQuery(include_history=True))[1] == 0


def test_a_message_forgotten_before_its_vector_came_gets_none(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    """The memory work embeds a turn after the reply: a forget in between must leave no
    vector of the forgotten words, and the others' vectors still land."""
    secret = store.append_embedded_message("a", "desk", "user", f"My cat is {SECRET}", None)
    kept = store.append_embedded_message("a", "desk", "user", "I like tea", None)
    read = store.messages_to_embed(10)
    store.forget_messages("a", [secret.id], actor="voice")
    store.add_message_vectors([(m, fake_embedder.embed(m.content)) for m in read])
    found = store.search_messages("a", fake_embedder.embed(f"My cat is {SECRET}"), 5)
    assert [hit.message.id for hit in found] == [kept.id]
    assert store.message_similarities([secret.id, kept.id], fake_embedder.embed("tea")).keys() == {
        kept.id
    }


def test_base_memory_keeps_every_version(store: Store) -> None:
    store.write_base_memory("a", "first", actor="manual")
    store.distill_base_memory("a", "second", [])
    history = store.base_memory_history("a")
    assert [(v.content, v.written_by) for v in history] == [
        ("second", "cascade"),
        ("first", "manual"),
    ]
    assert store.base_memory("a") == "second"
    entries = store.audit_entries("a", 10)
    assert [(e.target, e.before, e.after) for e in entries][:2] == [
        ("base_memory", "first", "second"),
        ("base_memory", None, "first"),
    ]


def test_deleting_an_agent_erases_everything_of_it(
    store: Store, fake_embedder: FakeEmbedder, file_bytes: Callable[[Store], bytes]
) -> None:
    said = store.append_message("a", "desk", "user", f"Secret word {SECRET}")
    fact_in(store, fake_embedder, f"The word is {SECRET}", [said.id])
    store.create_block("a", "persona", f"{SECRET} block")
    store.write_base_memory("a", f"{SECRET} base", actor="manual")
    kept = store.append_message("b", "desk", "user", "other agent")
    counts = store.delete_agent("a", actor="manual")
    assert counts["messages"] == 1 and counts["facts"] == 1 and counts["blocks"] == 1
    assert [c.agent.name for c in store.agents_with_counts()] == ["b"]
    assert store.agent_messages("b", 5)[0].id == kept.id
    assert SECRET.encode() not in file_bytes(store)
    assert store.search_facts("a", fake_embedder.embed("word"), 5) == []


def test_forgetting_and_deleting_go_through_long_id_lists_in_batches(
    store: Store, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL takes at most 65535 parameters a statement: long id lists go in slices."""
    monkeypatch.setattr("lobug.store.sql.dialect.BATCH_IDS", 2)
    said = [store.append_message("a", "desk", "user", f"{SECRET} {i}") for i in range(5)]
    facts = [
        fact_in(store, fake_embedder, f"Fact {i} of {SECRET}", [m.id]) for i, m in enumerate(said)
    ]
    summary = store.add_summary("a", "Five messages", said[3:])
    forgotten = store.forget_messages("a", [m.id for m in reversed(said[:4])], actor="voice")
    assert forgotten.messages == tuple(m.id for m in said[:4])
    assert forgotten.facts == tuple(facts[:4]) and forgotten.summaries == (summary.id,)
    assert [m.id for m in store.unsummarized_messages("a")] == [said[4].id]
    more = [store.append_message("a", "desk", "user", f"more {i}") for i in range(4)]
    counts = store.delete_agent("a", actor="manual")
    assert counts["messages"] == 1 + len(more) and counts["facts"] == 5
    assert store.search_facts("a", fake_embedder.embed("Fact"), 5) == []
