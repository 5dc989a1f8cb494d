"""A household in the store (SQLite migration 13, PostgreSQL migration 8): people, who said
each message, whose each fact is, and the one visibility rule every fact query takes. Each
test tries to cross a boundary: one person's private fact reaching another person or a
guest, through every read a prompt, a search or a listing makes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lobug.store import errors
from lobug.store.household import EVERYONE, GUEST_VIEWER, HOUSEHOLD, PRIVATE, Speaker, Viewer
from lobug.store.models import FactQuery, NewFact
from lobug.store.protocol import Store
from lobug.store.sqlite.schema import MIGRATIONS
from tests.fakes import FakeEmbedder

pytestmark = pytest.mark.both_engines

AGENT = "home"


def household(store: Store) -> tuple[int, int]:
    store.ensure_agent(AGENT)
    jordan = store.add_person(AGENT, "Jordan", actor="test").id
    sam = store.add_person(AGENT, "Sam", actor="test").id
    return jordan, sam


def remember(
    store: Store,
    text: str,
    owner: int | None,
    scope: str,
    *,
    shareable: bool = False,
    pinned: bool = False,
) -> int:
    embedder = FakeEmbedder()
    fact = NewFact(text, owner_person_id=owner, scope=scope, shareable=shareable)
    added = store.add_fact(AGENT, fact, embedder.embed(text), actor="test")
    if pinned:
        from lobug.store.models import FactFlags

        store.set_fact_flags(AGENT, added.id, FactFlags(pinned=True), actor="test")
    return added.id


def seen(store: Store, viewer: Viewer, words: str) -> set[str]:
    """Every fact text `viewer` meets for `words`: nearest, keywords, rows, pins, lists."""
    vector = FakeEmbedder().embed(words)
    texts = {f.fact.content for f in store.search_facts(AGENT, vector, 10, viewer)}
    hits = [h.id for h in store.nearest_fact_hits(AGENT, vector, 10, viewer)]
    hits += [h.id for h in store.keyword_fact_hits(AGENT, words, 10, viewer)]
    texts |= {f.content for f in store.facts_by_ids(hits, viewer).values()}
    texts |= {f.content for f in store.pinned_facts(AGENT, viewer)}
    texts |= {f.content for f in store.list_facts(AGENT, FactQuery(viewer=viewer))[0]}
    return texts


def test_no_private_fact_crosses_to_another_person_or_a_guest(store: Store) -> None:
    jordan, sam = household(store)
    remember(store, "Jordan's dog Biscuit has a vet visit", jordan, PRIVATE, pinned=True)
    remember(store, "Sam's dog Rex hates the vet", sam, PRIVATE)
    remember(store, "The household dog food is in the pantry", None, HOUSEHOLD)
    remember(store, "The dog walker comes on Monday", None, HOUSEHOLD, shareable=True)
    words = "dog vet Biscuit Rex pantry walker"

    assert seen(store, Viewer.person(jordan), words) == {
        "Jordan's dog Biscuit has a vet visit",
        "The household dog food is in the pantry",
        "The dog walker comes on Monday",
    }
    assert seen(store, Viewer.person(sam), words) == {
        "Sam's dog Rex hates the vet",
        "The household dog food is in the pantry",
        "The dog walker comes on Monday",
    }
    assert seen(store, GUEST_VIEWER, words) == {"The dog walker comes on Monday"}
    assert len(seen(store, EVERYONE, words)) == 4


def test_a_near_duplicate_never_replaces_another_persons_fact(store: Store) -> None:
    jordan, sam = household(store)
    embedder = FakeEmbedder()
    text = "My favourite colour is green"
    store.add_fact(
        AGENT, NewFact(text, owner_person_id=jordan, scope=PRIVATE), embedder.embed(text)
    )
    added = store.add_fact_superseding_duplicate(
        AGENT,
        NewFact(text, owner_person_id=sam, scope=PRIVATE),
        embedder.embed(text),
        duplicate_distance=0.5,
    )
    assert added.superseded == ()
    assert len(store.facts(AGENT)) == 2


def test_messages_record_who_said_them(store: Store) -> None:
    jordan, _ = household(store)
    asked = store.append_message(
        AGENT, "kitchen", "user", "I'm Jordan", speaker=Speaker(jordan, "claim", 0.8)
    )
    reply = store.append_reply_for_memory_work(AGENT, "kitchen", "Hi Jordan.", asked)
    guest = store.append_message(AGENT, "kitchen", "user", "Hello")
    [a, r, g] = store.messages_by_id(AGENT, [asked.id, reply.id, guest.id])
    assert (a.person_id, a.speaker_source, a.speaker_confidence) == (jordan, "claim", 0.8)
    assert (r.person_id, r.speaker_source) == (jordan, "assistant")
    assert (g.person_id, g.speaker_source, g.speaker_confidence) == (None, "guest", None)


def test_people_devices_and_names(store: Store) -> None:
    jordan, sam = household(store)
    with pytest.raises(errors.PersonExists):
        store.add_person(AGENT, " jordan ", actor="test")
    store.set_device_person(AGENT, "kitchen", jordan, actor="test")
    store.set_device_person(AGENT, "office", jordan, actor="test")
    assert store.device_person(AGENT, "kitchen") == jordan
    assert store.device_person(AGENT, "hall") is None
    assert [(p.name, p.devices) for p in store.people(AGENT)] == [
        ("Jordan", ("kitchen", "office")),
        ("Sam", ()),
    ]
    assert store.find_person(AGENT, "SAM") is not None and store.find_person(AGENT, "Al") is None
    with pytest.raises(errors.PersonNotFound):
        store.set_device_person(AGENT, "kitchen", sam + 100, actor="test")


def test_moving_a_fact_between_private_and_household(store: Store) -> None:
    jordan, sam = household(store)
    fact = remember(store, "The spare key is under the blue pot", jordan, PRIVATE)
    assert "The spare key is under the blue pot" not in seen(store, Viewer.person(sam), "key")
    store.set_fact_scope(AGENT, fact, HOUSEHOLD, shareable=False, actor="test")
    assert "The spare key is under the blue pot" in seen(store, Viewer.person(sam), "key")
    assert "The spare key is under the blue pot" not in seen(store, GUEST_VIEWER, "key")
    store.set_fact_scope(AGENT, fact, PRIVATE, shareable=True, actor="test")
    moved = store.get_fact(fact)
    assert (moved.scope, moved.shareable) == (PRIVATE, False)
    ours = remember(store, "Our wifi password is plum42", None, HOUSEHOLD)
    with pytest.raises(errors.FactHasNoOwner):
        store.set_fact_scope(AGENT, ours, PRIVATE, shareable=False, actor="test")


def test_forgetting_a_person_purges_their_private_memory_only(store: Store) -> None:
    jordan, sam = household(store)
    said = store.append_message(
        AGENT, "kitchen", "user", "My secret is zanzibar", speaker=Speaker(jordan, "voice", 0.9)
    )
    store.append_reply_for_memory_work(AGENT, "kitchen", "Noted.", said)
    embedder = FakeEmbedder()
    secret = store.add_fact(
        AGENT,
        NewFact(
            "Jordan's secret is zanzibar",
            owner_person_id=jordan,
            scope=PRIVATE,
            source_message_ids=(said.id,),
        ),
        embedder.embed("zanzibar"),
    )
    wifi = store.add_fact(
        AGENT,
        NewFact(
            "The wifi password is plum42",
            owner_person_id=jordan,
            scope=HOUSEHOLD,
            source_message_ids=(said.id,),
        ),
        embedder.embed("wifi"),
    )
    sams = remember(store, "Sam's secret is kumquat", sam, PRIVATE)

    counts = store.forget_person_memory(AGENT, jordan, actor="test")

    assert counts["messages"] == 2 and counts["facts"] >= 1
    assert store.get_fact(secret.id).content == "" and store.get_fact(secret.id).purged_at
    assert store.get_fact(wifi.id).content == "The wifi password is plum42"
    assert store.get_fact(sams).content == "Sam's secret is kumquat"
    assert store.agent_messages(AGENT, 10) == []
    store.delete_person(AGENT, jordan, actor="test")
    assert [p.name for p in store.people(AGENT)] == ["Sam"]


def test_old_rows_become_a_guests_words_and_household_facts(tmp_path: Path) -> None:
    """Migration 13 on a file written at migration 12: user rows a guest's, facts the
    household's and not shareable."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for migration in MIGRATIONS[:12]:
        for statement in migration.statements:
            conn.execute(statement)
    conn.execute("INSERT INTO agents(name, created_at) VALUES ('home', 0)")
    conn.execute(
        "INSERT INTO conversation_log(agent_id, device_id, role, content, created_at) "
        "VALUES (1, 'k', 'user', 'hi', 0), (1, 'k', 'assistant', 'hello', 0)"
    )
    conn.execute(
        "INSERT INTO facts(agent_id, content, fact_type, created_at, valid_from) "
        "VALUES (1, 'The user likes tea', 'preference', 0, 0)"
    )
    for statement in MIGRATIONS[12].statements:
        conn.execute(statement)
    conn.row_factory = sqlite3.Row
    assert [
        tuple(r)
        for r in conn.execute("SELECT speaker_source, person_id FROM conversation_log ORDER BY id")
    ] == [("guest", None), ("assistant", None)]
    assert tuple(
        conn.execute("SELECT scope, shareable, owner_person_id FROM facts").fetchone()
    ) == ("household", 0, None)


def test_deleting_the_agent_takes_its_people_along(store: Store) -> None:
    jordan, _ = household(store)
    store.set_device_person(AGENT, "kitchen", jordan, actor="test")
    store.append_message(AGENT, "kitchen", "user", "hi", speaker=Speaker(jordan, "voice", 0.9))
    remember(store, "Jordan's secret is kumquat", jordan, PRIVATE)
    deleted = store.delete_agent(AGENT, actor="test")
    assert (deleted["people"], deleted["device_people"]) == (2, 1)
    store.ensure_agent(AGENT)
    assert store.people(AGENT) == [] and store.device_person(AGENT, "kitchen") is None
