"""Topics on a fixture memory: planted related facts grouped, the same memory giving the same
topics, the model's text stored when it passes the checks and the fallback when it babbles,
forgetting leaving no text in topics, the global memory, and the dream rebuilding them."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest

from lobug.backends.base import ChatMessage, JsonSchema
from lobug.memory.dream import Dreamer
from lobug.memory.global_memory import (
    ACTIVE_DAYS,
    DAY_S,
    active_topic_lines,
    global_memory,
    most_active,
)
from lobug.memory.topics import EXTRACTIVE, MODEL, TopicBuilder, clusters
from lobug.store.models import FactFlags, NewFact, Topic, TopicDraft, TopicMember
from lobug.store.protocol import Store
from tests.engines import stored_bytes
from tests.fakes import FakeChat, FakeEmbedder

pytestmark = pytest.mark.both_engines

TRIP = (
    "The user plans a Kyoto trip in April",
    "The user booked a Kyoto trip flight for April",
    "The user wants Kyoto trip temples",
)
GARDEN = (
    "The user grows garden tomatoes",
    "The user waters garden tomatoes every morning",
    "The user built garden tomatoes a raised bed",
)
ALONE = ("The user has a dog called Rex",)


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    """Wider than the default, so unrelated words rarely share a dimension."""
    return FakeEmbedder(dim=512)


def plant(store: Store, embedder: FakeEmbedder, texts: Sequence[str], **fields: str) -> list[int]:
    return [store.add_fact("lobug", NewFact(t, **fields), embedder.embed(t)).id for t in texts]


@pytest.fixture
def planted(store: Store, fake_embedder: FakeEmbedder) -> dict[str, list[int]]:
    return {
        "trip": plant(store, fake_embedder, TRIP),
        "garden": plant(store, fake_embedder, GARDEN),
        "alone": plant(store, fake_embedder, ALONE),
    }


def namer(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
    """A model that names a topic from its notes' words, as a good one would."""
    notes = messages[-1]["content"]
    if schema is None:  # the dream's base memory
        return "The user plans a Kyoto trip and grows garden tomatoes."
    if "Kyoto" in notes:
        return json.dumps(
            {
                "name": "Kyoto trip",
                "summary": "The user plans a Kyoto trip in April and booked the flight.",
                "open_questions": ["Where will the user stay in Kyoto?", "no question mark"],
                "next_actions": ["Book a hotel near the temples"],
            }
        )
    return json.dumps(
        {
            "name": "Garden tomatoes",
            "summary": "The user grows garden tomatoes in a raised bed.",
            "open_questions": [],
            "next_actions": [],
        }
    )


def fact_groups(topics: Sequence[Topic]) -> list[set[int]]:
    return [set(t.member_ids("fact")) for t in topics]


def shape(topics: Sequence[Topic]) -> list[tuple[object, ...]]:
    """A topic without its id and build time: what a rebuild must reproduce."""
    return [
        (t.position, t.name, t.summary, t.open_questions, t.next_actions, t.members, t.written_by)
        for t in topics
    ]


def test_clusters_group_rows_by_centroid_in_row_order() -> None:
    vectors = np.array([[1, 0], [0, 1], [0.9, 0.1], [0.1, 0.9], [-1, 0]], dtype=np.float32)
    assert clusters(vectors, 0.9) == [[0, 2], [1, 3], [4]]


def test_a_rebuild_groups_the_planted_related_facts(
    store: Store, planted: dict[str, list[int]]
) -> None:
    topics = TopicBuilder(store, None).rebuild("lobug")
    assert fact_groups(topics) == [set(planted["trip"]), set(planted["garden"])]
    assert [t.position for t in topics] == [0, 1]
    assert all(t.written_by == EXTRACTIVE for t in topics)
    assert "Kyoto" in topics[0].name and "Trip" in topics[0].name
    assert topics[0].summary.startswith("The user plans a Kyoto trip in April.")
    assert store.topics("lobug") == topics
    assert store.topic("lobug", topics[1].id) == topics[1]


def test_the_same_memory_gives_the_same_topics(store: Store, planted: dict[str, list[int]]) -> None:
    chat = FakeChat(responder=namer)
    first = TopicBuilder(store, chat).rebuild("lobug")
    asked = len(chat.requests)
    again = TopicBuilder(store, chat).rebuild("lobug")
    assert shape(again) == shape(first)
    assert len(chat.requests) == asked  # unchanged topics keep their text: no new request
    fresh = TopicBuilder(store, FakeChat(responder=namer)).drafts("lobug")
    assert [(d.name, d.summary, d.members) for d in fresh] == [
        (t.name, t.summary, t.members) for t in first
    ]


def test_the_model_names_and_describes_each_topic_at_background_priority(
    store: Store, planted: dict[str, list[int]]
) -> None:
    chat = FakeChat(responder=namer)
    trip, garden = TopicBuilder(store, chat).rebuild("lobug")
    assert (trip.name, trip.written_by) == ("Kyoto trip", MODEL)
    assert trip.open_questions == ("Where will the user stay in Kyoto?",)
    assert trip.next_actions == ("Book a hotel near the temples",)
    assert garden.name == "Garden tomatoes"
    assert chat.priorities == [True, True]


def test_a_babbling_model_gets_the_fallback_name_and_summary(
    store: Store, planted: dict[str, list[int]]
) -> None:
    babble = json.dumps(
        {
            "name": "Oo oo oo oo oo oo",
            "summary": "I think you should ask me? " * 3,
            "open_questions": ["oo oo oo oo oo oo oo oo oo oo?"],
            "next_actions": [],
        }
    )
    chat = FakeChat()
    chat.enqueue(babble, "not JSON at all")
    trip, garden = TopicBuilder(store, chat).rebuild("lobug")
    assert trip.written_by == garden.written_by == EXTRACTIVE
    assert trip.name.split(" · ")[0] == "Kyoto"
    assert "Garden" in garden.name and "Tomatoes" in garden.name
    assert trip.summary.startswith("The user plans a Kyoto trip")
    assert trip.open_questions == ()


def test_a_topic_without_the_model_lists_its_commitments_as_next_actions(
    store: Store, fake_embedder: FakeEmbedder
) -> None:
    plant(
        store, fake_embedder, ("The user will repaint the kitchen walls",), fact_type="commitment"
    )
    plant(store, fake_embedder, ("The user repaints kitchen walls blue",))
    (topic,) = TopicBuilder(store, None).rebuild("lobug")
    assert topic.next_actions == ("The user will repaint the kitchen walls",)


def test_forgetting_a_fact_leaves_no_text_of_it_in_topics(
    store: Store, fake_embedder: FakeEmbedder, planted: dict[str, list[int]], database_url: str
) -> None:
    (zanzibar,) = plant(store, fake_embedder, ("The user wants Kyoto trip Zanzibar tea",))
    topics = TopicBuilder(store, None).rebuild("lobug")
    assert any("Zanzibar" in t.summary for t in topics)
    store.forget_fact("lobug", zanzibar, actor="test", purge=True)
    assert fact_groups(store.topics("lobug")) == [set(planted["garden"])]
    path = getattr(store, "path", None)
    assert b"Zanzibar" not in stored_bytes(f"sqlite:///{path}" if path else database_url)
    rebuilt = TopicBuilder(store, None).rebuild("lobug")
    assert not any("zanzibar" in repr(t).lower() for t in rebuilt)
    assert fact_groups(rebuilt) == [set(planted["trip"]), set(planted["garden"])]


def test_topics_whose_member_was_forgotten_while_building_are_not_stored(
    store: Store, planted: dict[str, list[int]]
) -> None:
    builder = TopicBuilder(store, None)
    drafts = builder.drafts("lobug")
    store.forget_fact("lobug", planted["garden"][0], actor="test")
    assert fact_groups(store.replace_topics("lobug", drafts)) == [set(planted["trip"])]


def test_the_global_memory_holds_pinned_facts_and_the_most_active_topics(
    store: Store, planted: dict[str, list[int]]
) -> None:
    store.set_fact_flags("lobug", planted["alone"][0], FactFlags(pinned=True), actor="test")
    TopicBuilder(store, None).rebuild("lobug")
    found = global_memory(store, "lobug", now=store.get_fact(planted["alone"][0]).created_at)
    assert [f.id for f in found.pinned] == planted["alone"]
    assert [a.activity for a in found.active_topics] == [3, 3]
    later = global_memory(store, "lobug", now=found.pinned[0].created_at + 30 * DAY_S)
    assert [a.activity for a in later.active_topics] == [0, 0]


def test_the_most_active_topic_comes_first(store: Store, planted: dict[str, list[int]]) -> None:
    now = store.get_fact(planted["alone"][0]).created_at
    old, recent = now - (ACTIVE_DAYS + 1) * DAY_S, now - DAY_S
    trip, garden = planted["trip"], planted["garden"]

    def draft(name: str, members: Sequence[tuple[int, float]]) -> TopicDraft:
        held = tuple(TopicMember("fact", i, at) for i, at in members)
        return TopicDraft(name, f"About {name}.", (), (), held, EXTRACTIVE)

    store.replace_topics(
        "lobug",
        [
            draft("quiet", [(i, old) for i in trip]),
            draft("lively", [(garden[0], recent), (garden[1], old)]),
            draft("older", [(garden[2], old - DAY_S)]),
        ],
    )
    ranked = most_active(store, "lobug", now)
    assert [(a.name, a.activity, a.size) for a in ranked] == [
        ("lively", 1, 2),
        ("quiet", 0, 3),
        ("older", 0, 1),
    ]
    assert active_topic_lines(store, "lobug", now)[0] == "lively: About lively."


def test_a_dream_rebuilds_the_topics(store: Store, planted: dict[str, list[int]]) -> None:
    chat = FakeChat(responder=namer)
    dreamer = Dreamer(store, chat, max_facts=5000, topics=TopicBuilder(store, chat))
    result = dreamer.dream("lobug")
    assert result.dream is not None and "## Topics" in result.dream.diary
    assert [t.name for t in result.topics] == ["Kyoto trip", "Garden tomatoes"]
    assert store.topics("lobug") == list(result.topics)
