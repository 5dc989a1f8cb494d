"""The dream on a fixture memory: planted duplicates merged, a contradiction settled, the
cap held, pinned facts kept, the diary written, the audit log filled, and undo restoring."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from datetime import time as dt_time
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from lobug.memory.dream import Dreamer, pair_change, similar_pairs
from lobug.store.errors import DreamUndone
from lobug.store.models import Fact, FactFlags, NewFact
from lobug.store.protocol import Store
from tests.fakes import FakeChat, FakeEmbedder

pytestmark = pytest.mark.both_engines


def plant(store: Store, embedder: FakeEmbedder, text: str, **fields: object) -> int:
    fact = NewFact(text, **fields)  # type: ignore[arg-type]
    return store.add_fact("lobug", fact, embedder.embed(text)).id


@pytest.fixture
def planted(store: Store, fake_embedder: FakeEmbedder) -> dict[str, int]:
    ids = {
        "nasa": plant(store, fake_embedder, "The user works at NASA"),
        "nasa_houston": plant(store, fake_embedder, "The user works at NASA in Houston"),
        "dog": plant(store, fake_embedder, "The user has a dog called Rex"),
        "pinned_tea": plant(store, fake_embedder, "The user likes green tea"),
        "tea": plant(store, fake_embedder, "The user likes green tea a lot"),
        "lives_paris": plant(
            store,
            fake_embedder,
            "The user lives in Paris",
            subject="user",
            relation="lives in",
            object="Paris",
        ),
        "lives_rome": plant(
            store,
            fake_embedder,
            "The user moved to Rome",
            subject="user",
            relation="lives in",
            object="Rome",
        ),
    }
    store.set_fact_flags("lobug", ids["pinned_tea"], FactFlags(pinned=True), actor="test")
    return ids


def dreamer(store: Store, chat: FakeChat, max_facts: int = 5000) -> Dreamer:
    return Dreamer(store, chat, max_facts=max_facts)


def current_ids(store: Store) -> set[int]:
    return {f.id for f in store.facts("lobug")}


def test_a_dream_merges_duplicates_settles_contradictions_and_keeps_pinned_facts(
    store: Store, fake_chat: FakeChat, planted: dict[str, int]
) -> None:
    fake_chat.enqueue("The user works at NASA in Houston and lives in Rome.")
    result = dreamer(store, fake_chat).dream("lobug")
    assert result.dream is not None
    retired = {(c.action, c.fact_id, c.kept_id) for c in result.dream.changes}
    assert retired == {
        ("merge", planted["nasa"], planted["nasa_houston"]),
        ("merge", planted["tea"], planted["pinned_tea"]),
        ("settle", planted["lives_paris"], planted["lives_rome"]),
    }
    assert planted["pinned_tea"] in current_ids(store)
    assert planted["dog"] in current_ids(store)
    assert store.base_memory("lobug") == "The user works at NASA in Houston and lives in Rome."
    assert store.get_fact(planted["nasa"]).superseded_by == planted["nasa_houston"]
    assert fake_chat.priorities == [True]  # the rewrite ran at background priority
    diary = result.dream.diary
    assert "## Merged near-duplicates (2)" in diary
    assert f"- fact #{planted['lives_paris']} by fact #{planted['lives_rome']}" in diary
    assert "Paris" not in diary  # facts are named by id: a purge leaves no text in a diary
    actions = [(e.actor, e.action) for e in store.audit_entries("lobug", 20)]
    assert ("dream", "merge") in actions and ("dream", "settle") in actions
    assert ("dream", "write") in actions  # the base memory


def test_undo_restores_the_facts_and_the_base_memory(
    store: Store, fake_chat: FakeChat, fake_embedder: FakeEmbedder, planted: dict[str, int]
) -> None:
    store.write_base_memory("lobug", "Before the dream.", actor="test")
    before = current_ids(store)
    fake_chat.enqueue("After the dream.")
    dream = dreamer(store, fake_chat).dream("lobug").dream
    assert dream is not None and current_ids(store) != before
    undone = dreamer(store, fake_chat).undo("lobug", dream.id, actor="test")
    assert undone.undone_at is not None
    assert current_ids(store) == before
    assert store.base_memory("lobug") == "Before the dream."
    found = store.search_facts("lobug", fake_embedder.embed("The user works at NASA"), 1)
    assert found[0].fact.id == planted["nasa"]  # its vector is back in the index
    with pytest.raises(DreamUndone):
        store.undo_dream("lobug", dream.id, actor="test")


def test_purging_a_retired_fact_drops_the_vector_its_dream_kept(
    store: Store, fake_chat: FakeChat, planted: dict[str, int]
) -> None:
    dream = dreamer(store, fake_chat).dream("lobug").dream
    assert dream is not None
    kept = "SELECT COUNT(*) AS n FROM dream_vectors"  # the same SQL on both engines
    assert store._count(kept) == 3  # type: ignore[attr-defined]
    store.forget_fact("lobug", planted["nasa"], actor="test", purge=True)
    assert store._count(kept) == 2  # type: ignore[attr-defined]
    store.undo_dream("lobug", dream.id, actor="test")
    assert planted["nasa"] not in current_ids(store) and planted["tea"] in current_ids(store)


def test_a_dry_run_changes_nothing(
    store: Store, fake_chat: FakeChat, planted: dict[str, int]
) -> None:
    before = current_ids(store)
    result = dreamer(store, fake_chat).dream("lobug", dry_run=True)
    assert result.dream is None and len(result.plan.changes) == 3
    assert "Merged near-duplicates" in result.plan.diary
    assert current_ids(store) == before
    assert store.dreams("lobug") == [] and fake_chat.requests == []


def test_the_cap_retires_the_least_valuable_facts_never_pinned_or_high_scored(
    store: Store, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    texts = ["apples", "bicycles", "cameras", "dolphins", "engines", "forests"]
    ids = [plant(store, fake_embedder, f"The user mentions {t}", confidence=0.5) for t in texts]
    store.set_fact_flags("lobug", ids[0], FactFlags(pinned=True), actor="test")
    store.set_fact_flags("lobug", ids[1], FactFlags(user_score=9), actor="test")
    result = dreamer(store, fake_chat, max_facts=3).dream("lobug")
    assert result.dream is not None
    assert [c.fact_id for c in result.dream.changes] == ids[2:5]  # oldest low-value first
    assert current_ids(store) == {ids[0], ids[1], ids[5]}


def test_an_unchanged_memory_is_not_dreamed_again(
    store: Store, fake_chat: FakeChat, planted: dict[str, int]
) -> None:
    memory = dreamer(store, fake_chat)
    assert memory.dream("lobug", only_if_changed=True).dream is not None
    assert memory.dream("lobug", only_if_changed=True).skipped
    plant(store, FakeEmbedder(), "The user plays chess")
    assert memory.dream("lobug", only_if_changed=True).dream is not None


def test_the_nightly_dream_runs_once_after_its_time(
    store: Store, fake_chat: FakeChat, planted: dict[str, int]
) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    memory = dreamer(store, fake_chat)
    at = dt_time(3, 30)
    never = lambda: False  # noqa: E731
    assert memory.nightly(["lobug"], datetime(2099, 1, 1, 3, 0, tzinfo=berlin), at, never) == 0
    # Dreams are stamped with the real clock, so "today" is now in these checks.
    now = datetime.now(berlin).replace(hour=23, minute=59)
    assert memory.nightly(["lobug"], now, at, never) == 1
    assert memory.nightly(["lobug"], now, at, never) == 0  # already dreamed today


def said(text: str) -> Fact:
    return Fact(
        1, "lobug", text, "identity", None, None, None, None, 0.5, None, (), 1.0, 1.0, None, None
    )


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("The user's cat is called Tom", "The user's cat is named Tom", True),
        ("The user works at NASA", "The user works at NASA in Houston", True),
        ("The user met Anna Weber at a party", "The user met Anna Kruger at a party", False),
        ("The user's dentist is on Monday", "The user's dentist is on Friday", False),
        ("The user's PIN is 1234", "The user's PIN is 4321", False),
        ("My sister Ana lives in Porto", "My sister Ana lives in Lyon", False),
        (
            "The user sees the dentist in the morning",
            "The user sees the dentist in the evening",
            False,
        ),
        ("The user has two cats", "The user has three cats", False),
        ("The user trains on monday", "The user trains on friday", False),
        ("The user jogs daily", "The user jogs daily in the park", True),
        ("The user has a dog", "The user does not have a dog", False),
        ("The user doesn't eat meat", "The user doesnt eat any meat", True),
        ("The user went to the market", "The user went to the market on foot", True),
    ],
)
def test_facts_naming_different_people_days_or_numbers_are_never_one(
    first: str, second: str, same: bool
) -> None:
    """Sentence embedders score each of these pairs 0.89-0.97: as close as true duplicates.
    A fact and its negation are no duplicate either: the wordier one would win, not the
    newer."""
    change = pair_change(said(first), said(second), 0.95)
    assert (change is not None and change.action == "merge") is same


@pytest.mark.parametrize("negation_first", [True, False])
def test_a_fact_and_its_negation_are_settled_by_the_newer(negation_first: bool) -> None:
    """Not merged (the wordier "has a dog named Rex" would win whatever its age): the
    newer of the two wins, as with any contradiction; a pinned one is never retired."""
    positive, negative = said("The user has a dog named Rex"), said("The user has no dog")
    older, newer = (negative, positive) if negation_first else (positive, negative)
    older, newer = dataclasses.replace(older, id=1), dataclasses.replace(newer, id=2)
    change = pair_change(older, newer, 0.85)
    assert change is not None
    assert (change.action, change.fact_id, change.kept_id) == ("settle", 1, 2)
    assert pair_change(dataclasses.replace(older, pinned=True), newer, 0.85) is None


def test_similar_pairs_match_the_whole_matrix() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(1200, 8)).astype(np.float32)
    unit = vectors / np.linalg.norm(vectors, axis=1)[:, None]
    full = unit @ unit.T
    expected = {(i, j) for i, j in zip(*np.nonzero(full >= 0.9), strict=True) if j > i}
    assert {(i, j) for i, j, _ in similar_pairs(vectors, 0.9)} == expected
