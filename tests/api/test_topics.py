"""Topics and the global memory over HTTP: rebuilt on demand, listed, read by id, the global
memory with pinned facts and active topics, the active topics in the budgeted context, and a
purged fact's words gone from every topic."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lobug.backends.base import ChatMessage, JsonSchema
from tests.fakes import FakeChat, FakeEmbedder

pytestmark = pytest.mark.both_engines

FACTS = (
    "The user plans a Kyoto trip in April",
    "The user booked a Kyoto trip flight for April",
    "The user wants Kyoto trip Zanzibar temples",
    "The user grows garden tomatoes",
    "The user waters garden tomatoes every morning",
)


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder(dim=512)


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def namer(messages: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
    """Names the trip from its notes (its summary is their words), babbles about the rest."""
    notes = messages[-1]["content"]
    if "Kyoto" not in notes:
        return "Oo, oo, oo, oo, oo, oo, oo, oo."  # the fallback names this one
    return json.dumps(
        {
            "name": "Kyoto trip",
            "summary": "; ".join(line[2:] for line in notes.splitlines()[1:]) + ".",
            "open_questions": ["Which temples will the user visit?"],
            "next_actions": ["Book a hotel in Kyoto"],
        }
    )


@pytest.fixture
def lobug(client: TestClient, fake_chat: FakeChat) -> dict[str, str]:
    fake_chat.responder = namer
    ok(client.post("/memory/agents", json={"name": "lobug"}))
    return {
        text: ok(client.post("/memory/facts/lobug", json={"content": text}), 201)["id"]
        for text in FACTS
    }


def test_topics_are_rebuilt_listed_and_read_by_id(
    client: TestClient, lobug: dict[str, str]
) -> None:
    assert ok(client.get("/memory/agents/lobug/topics")) == []
    built = ok(client.post("/memory/agents/lobug/topics/rebuild"))
    assert [t["name"] for t in built] == ["Kyoto trip", "Garden · Tomatoes · Grows"]
    trip, garden = built
    assert set(trip["fact_ids"]) == {lobug[text] for text in FACTS[:3]}
    assert (trip["written_by"], garden["written_by"]) == ("model", "extractive")
    assert trip["open_questions"] == ["Which temples will the user visit?"]
    assert ok(client.get("/memory/agents/lobug/topics")) == built
    assert ok(client.get(f"/memory/agents/lobug/topics/{garden['id']}")) == garden
    missing = client.get("/memory/agents/lobug/topics/999999")
    assert missing.status_code == 404 and missing.json()["error"] == "topic_not_found"
    nobody = client.get("/memory/agents/nobody/topics")
    assert nobody.status_code == 404 and nobody.json()["error"] == "agent_not_found"


def test_the_global_memory_and_the_context_show_the_active_topics(
    client: TestClient, lobug: dict[str, str]
) -> None:
    pinned = lobug[FACTS[3]]
    ok(client.patch(f"/memory/facts/lobug/{pinned}", json={"pinned": True}))
    ok(client.post("/memory/agents/lobug/topics/rebuild"))
    found = ok(client.get("/memory/agents/lobug/global"))
    assert [f["id"] for f in found["pinned"]] == [pinned]
    active = [(t["name"], t["activity"]) for t in found["active_topics"]]
    assert active == [("Kyoto trip", 3), ("Garden · Tomatoes · Grows", 2)]
    context = ok(client.post("/memory/context/lobug", json={"query": "what about Kyoto?"}))
    assert context["active_topics"][0].startswith("Kyoto trip: The user plans")
    assert "[Active topics]" in context["prompt"]
    assert context["sections"][-1]["name"] == "topics"
    tight = ok(
        client.post("/memory/context/lobug", json={"query": "what about Kyoto?", "max_tokens": 60})
    )
    assert tight["active_topics"] == [] and "[Active topics]" not in tight["prompt"]


def test_a_purged_fact_leaves_no_word_in_any_topic(
    client: TestClient, lobug: dict[str, str]
) -> None:
    ok(client.post("/memory/agents/lobug/topics/rebuild"))
    assert "Zanzibar" in json.dumps(ok(client.get("/memory/agents/lobug/topics")))
    ok(client.delete(f"/memory/facts/lobug/{lobug[FACTS[2]]}", params={"purge": True}))
    assert "Zanzibar" not in json.dumps(ok(client.get("/memory/agents/lobug/topics")))
    rebuilt = ok(client.post("/memory/agents/lobug/topics/rebuild"))
    assert "Zanzibar" not in json.dumps(rebuilt)
    assert "Zanzibar" not in json.dumps(ok(client.get("/memory/agents/lobug/global")))
