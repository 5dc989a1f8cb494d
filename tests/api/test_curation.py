"""The curation API over real HTTP: facts, base memory, summaries, forgetting, agents, the audit
log, and who may call what."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from typing import Any, get_args

import pytest
from fastapi.testclient import TestClient

from lobug.api.facts import FactTypeName
from lobug.app import create_app, create_memory_app
from lobug.backends import Backends
from lobug.backends.base import ChatMessage, JsonSchema
from lobug.config import MemoryConfig, Settings
from lobug.store.models import FACT_TYPES
from tests.engines import stored_bytes
from tests.fakes import FakeChat, FakeEmbedder, unreachable
from tests.polling import memory_work_done

SECRET = "Quaxilotl"
DEVICE_TOKEN = "device-tok-3Jw9-Rb"
ADMIN_TOKEN = "admin-tok-8Kd2-Ms"

pytestmark = pytest.mark.both_engines


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def error_of(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    code: str = response.json()["error"]
    return code


def add_fact(client: TestClient, content: str, agent: str = "lobug", **fields: Any) -> Any:
    return ok(client.post(f"/memory/facts/{agent}", json={"content": content, **fields}), 201)


def say(client: TestClient, text: str, device: str = "desk") -> None:
    ok(client.post("/chat/text", json={"text": text}, headers={"X-Device-Id": device}))
    memory_work_done(client)


def last_prompt(chat: FakeChat) -> str:
    return chat.chat_requests()[-1][0]["content"]


def database_bytes(settings: Settings) -> bytes:
    return stored_bytes(settings.store_url)


@pytest.fixture
def lobug(client: TestClient) -> TestClient:
    """The client, with the device's own agent created."""
    ok(client.post("/memory/agents", json={"name": "lobug"}))
    return client


# ---------------------------------------------------------------------- facts


def test_a_correction_is_a_new_version_that_supersedes_the_old(lobug: TestClient) -> None:
    old = add_fact(lobug, "The user's car is red", type="identity")
    assert (old["origin"], old["type"], old["superseded"]) == ("manual", "identity", [])
    new = ok(lobug.put(f"/memory/facts/lobug/{old['id']}", json={"content": "The car is blue"}))
    assert new["content"] == "The car is blue" and new["type"] == "identity"
    assert [v["id"] for v in new["versions"]] == [old["id"], new["id"]]
    assert new["versions"][0]["superseded_by"] == new["id"]
    assert new["versions"][0]["invalidated_at"] is not None
    assert ok(lobug.get(f"/memory/facts/lobug/{old['id']}"))["versions"] == new["versions"]
    current = ok(lobug.get("/memory/facts/lobug"))
    assert [f["id"] for f in current["facts"]] == [new["id"]] and current["total"] == 1
    history = ok(lobug.get("/memory/facts/lobug", params={"include_history": True}))
    assert history["total"] == 2
    stale = lobug.put(f"/memory/facts/lobug/{old['id']}", json={"content": "green"})
    assert error_of(stale, 409) == "fact_not_current"


def test_a_near_duplicate_becomes_a_new_version_and_the_answer_says_so(
    lobug: TestClient,
) -> None:
    first = add_fact(lobug, "The user likes green tea")
    again = add_fact(lobug, "The user likes green tea")
    assert again["superseded"] == [first["id"]]
    assert ok(lobug.get("/memory/facts/lobug"))["total"] == 1


def test_facts_are_paged_filtered_and_searched(lobug: TestClient) -> None:
    ids = [add_fact(lobug, f"fact about {word}")["id"] for word in ("apples", "boats", "cars")]
    add_fact(lobug, "The user was born in Lisbon", type="identity")
    page = ok(lobug.get("/memory/facts/lobug", params={"limit": 2, "offset": 1}))
    assert (page["total"], page["limit"], page["offset"]) == (4, 2, 1)
    assert [f["id"] for f in page["facts"]] == [ids[2], ids[1]]
    identity = ok(lobug.get("/memory/facts/lobug", params={"type": "identity"}))["facts"]
    assert [f["content"] for f in identity] == ["The user was born in Lisbon"]
    found = ok(lobug.get("/memory/facts/lobug", params={"q": "boats"}))["facts"]
    assert found[0]["id"] == ids[1]
    scores = [f["score"] for f in found]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    assert {f["score"] for f in page["facts"]} == {None}
    by_words = {"q": "boats", "mode": "keyword"}
    worded = ok(lobug.get("/memory/facts/lobug", params=by_words))["facts"]
    assert [f["id"] for f in worded] == [ids[1]]  # keywords alone: no near meaning
    bad = lobug.get("/memory/facts/lobug", params={"q": "boats", "mode": "psychic"})
    assert bad.status_code == 422


def test_pin_score_and_clearing_the_score(lobug: TestClient) -> None:
    fact = add_fact(lobug, "The user is allergic to peanuts")
    path = f"/memory/facts/lobug/{fact['id']}"
    flagged = ok(lobug.patch(path, json={"pinned": True, "user_score": 9}))
    assert (flagged["pinned"], flagged["user_score"]) == (True, 9)
    assert ok(lobug.patch(path, json={"pinned": False}))["user_score"] == 9
    assert ok(lobug.patch(path, json={"user_score": None}))["user_score"] is None
    pinned = ok(lobug.get("/memory/facts/lobug", params={"pinned": False}))["facts"]
    assert [f["id"] for f in pinned] == [fact["id"]]
    for body in ({}, {"pinned": None}, {"user_score": 11}, {"user_score": -1}):
        assert error_of(lobug.patch(path, json=body), 422) == "invalid_request", body


def test_forgetting_a_fact_takes_it_out_of_the_next_prompt(
    lobug: TestClient, fake_chat: FakeChat
) -> None:
    fact = add_fact(lobug, f"The user's dog is called {SECRET}")
    say(lobug, "Tell me about my dog.")
    assert SECRET in last_prompt(fake_chat)
    forgotten = ok(lobug.delete(f"/memory/facts/lobug/{fact['id']}"))
    assert forgotten["forgotten_at"] and forgotten["purged_at"] is None
    assert forgotten["content"] == fact["content"]  # forgotten, not purged: the text stays
    say(lobug, "Tell me about my dog.")
    assert SECRET not in last_prompt(fake_chat)
    assert ok(lobug.get("/memory/facts/lobug"))["total"] == 0
    assert ok(lobug.get("/memory/facts/lobug", params={"q": "dog"}))["facts"] == []


def test_a_purge_leaves_no_bytes_of_any_version(lobug: TestClient, settings: Settings) -> None:
    fact = add_fact(lobug, f"The user's dog is called {SECRET}")
    newer = ok(
        lobug.put(f"/memory/facts/lobug/{fact['id']}", json={"content": f"{SECRET} is nine"})
    )
    assert SECRET.encode() in database_bytes(settings)
    purged = ok(lobug.delete(f"/memory/facts/lobug/{newer['id']}", params={"purge": True}))
    assert purged["content"] == "" and purged["purged_at"]
    versions = ok(lobug.get(f"/memory/facts/lobug/{fact['id']}"))["versions"]
    assert [v["content"] for v in versions] == ["", ""]
    assert SECRET.encode() not in database_bytes(settings)


def test_a_learned_fact_shows_its_sources_until_they_are_forgotten(
    lobug: TestClient, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue(
        "Nice!", json.dumps({"facts": [{"fact": "The user works at NASA", "type": "identity"}]})
    )
    say(lobug, "I work at NASA")
    fact = ok(lobug.get("/memory/facts/lobug"))["facts"][0]
    assert len(fact["source_message_ids"]) == 2
    detail = ok(lobug.get(f"/memory/facts/lobug/{fact['id']}"))
    assert [m["content"] for m in detail["sources"]] == ["I work at NASA", "Nice!"]
    said = fact["source_message_ids"][0]
    forgotten = ok(lobug.delete(f"/memory/messages/lobug/{said}"))
    assert (forgotten["messages"], forgotten["facts"]) == (1, 0)  # the reply still sources it
    detail = ok(lobug.get(f"/memory/facts/lobug/{fact['id']}"))
    assert [m["content"] for m in detail["sources"]] == ["Nice!"]
    again = lobug.delete(f"/memory/messages/lobug/{said}")
    assert error_of(again, 404) == "message_not_found"


def test_without_embeddings_facts_are_searched_by_words_and_not_written(
    lobug: TestClient, fake_embedder: FakeEmbedder
) -> None:
    fact = add_fact(lobug, "The user owns a kayak")
    fake_embedder.fail_with = unreachable()
    found = ok(lobug.get("/memory/facts/lobug", params={"q": "kayak"}))["facts"]
    assert [f["id"] for f in found] == [fact["id"]]
    refused = lobug.post("/memory/facts/lobug", json={"content": "The user owns a tent"})
    assert error_of(refused, 503) == "llm_unavailable"
    assert ok(lobug.delete(f"/memory/facts/lobug/{fact['id']}"))["forgotten_at"]


def test_the_old_type_names_are_read_as_the_migration_maps_them(lobug: TestClient) -> None:
    added = add_fact(lobug, "Alex was born in Lisbon", type="personal")
    assert added["type"] == "identity"
    listed = ok(lobug.get("/memory/facts/lobug", params={"type": "knowledge"}))
    assert listed["total"] == 0
    assert error_of(lobug.post("/memory/facts/lobug", json={"content": "x", "type": "gossip"}), 422)


def test_the_api_fact_types_are_the_stores() -> None:
    assert get_args(FactTypeName) == FACT_TYPES


# ---------------------------------------------------------------------- forgetting spans


def talk_and_summarize(message: Sequence[ChatMessage], schema: JsonSchema | None) -> str:
    """Replies, extraction (a fact naming SECRET when the exchange does) and summaries."""
    text = " ".join(m["content"] for m in message)
    if schema is not None:
        facts = [{"fact": f"The user's dog is {SECRET}", "type": "identity"}]
        return json.dumps({"facts": facts if SECRET in text else []})
    if message[0]["content"].startswith("You are Lo-Bug"):
        return "Okay."
    return f"The user talked about their dog {SECRET}."


@pytest.fixture
def summarizing(settings: Settings, fake_embedder: FakeEmbedder) -> Iterator[TestClient]:
    """A device server that summarizes every 4 messages, keeping 1."""
    quick = settings.with_overrides(memory=MemoryConfig(short_term_threshold=4, short_term_keep=1))
    chat = FakeChat(responder=talk_and_summarize)
    with TestClient(create_app(quick, Backends(chat, fake_embedder))) as client:
        yield client


def test_forgetting_a_span_cascades_into_facts_summaries_and_working_memory(
    summarizing: TestClient, settings: Settings
) -> None:
    client = summarizing
    say(client, f"My dog is {SECRET}", device="kitchen")
    say(client, "He is nine", device="kitchen")
    assert ok(client.get("/memory/summaries/lobug"))[0]["content"].endswith(f"{SECRET}.")
    assert ok(client.get("/memory/facts/lobug"))["total"] == 1
    forgotten = ok(client.post("/memory/forget", json={"agent": "lobug", "device": "kitchen"}))
    assert (forgotten["messages"], forgotten["facts"], forgotten["summaries"]) == (4, 1, 1)
    assert len(forgotten["message_ids"]) == 4
    assert ok(client.get("/memory/summaries/lobug")) == []
    assert ok(client.get("/memory/facts/lobug"))["total"] == 0
    assert ok(client.get("/memory/messages/lobug")) == []
    assert SECRET.encode() not in database_bytes(settings)
    working = ok(client.get("/context/working-memory", headers={"X-Device-Id": "kitchen"}))
    assert working["messages"] == []


def test_a_span_is_bounded_by_time(lobug: TestClient) -> None:
    say(lobug, "a message of today")
    for outside in ({"since": "2999-01-01T00:00:00Z"}, {"until": "2000-01-01T00:00:00+02:00"}):
        assert ok(lobug.post("/memory/forget", json={"agent": "lobug", **outside}))["messages"] == 0
    span = {"agent": "lobug", "since": "2000-01-01T00:00:00", "until": "2999-01-01T00:00:00Z"}
    assert ok(lobug.post("/memory/forget", json=span))["messages"] == 2
    assert ok(lobug.get("/memory/messages/lobug")) == []


def test_forgetting_while_a_fact_is_being_learned_leaves_nothing_behind(
    lobug: TestClient, fake_chat: FakeChat, settings: Settings
) -> None:
    learned = [{"fact": f"The user's dog is called {SECRET}", "type": "identity"}]
    fake_chat.enqueue("Nice dog!", json.dumps({"facts": learned}))
    fake_chat.extraction_gate = threading.Event()
    said = {"text": f"My dog is called {SECRET}"}
    ok(lobug.post("/chat/text", json=said, headers={"X-Device-Id": "desk"}))
    assert fake_chat.extraction_started.wait(10)
    forgotten = ok(lobug.post("/memory/forget", json={"agent": "lobug", "device": "desk"}))
    assert forgotten["messages"] == 2
    fake_chat.extraction_gate.set()
    memory_work_done(lobug)
    everything = ok(lobug.get("/memory/facts/lobug", params={"include_history": True}))
    assert everything["total"] == 0
    assert SECRET.encode() not in database_bytes(settings)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"agent": "lobug"}, 422, "span_required"),
        (
            {"agent": "lobug", "since": "2024-02-01T00:00Z", "until": "2024-01-01T00:00Z"},
            422,
            "invalid_span",
        ),
        ({"agent": "lobug", "since": "yesterday"}, 422, "invalid_request"),
        ({"agent": "lobug", "device": "a b"}, 422, "invalid_request"),
        ({"agent": "nobody", "device": "desk"}, 404, "agent_not_found"),
    ],
)
def test_a_forget_needs_a_valid_bounded_span(
    lobug: TestClient, body: dict[str, str], status: int, code: str
) -> None:
    assert error_of(lobug.post("/memory/forget", json=body), status) == code


# ---------------------------------------------------------------------- base memory, agents


def test_base_memory_is_written_by_hand_and_keeps_every_version(lobug: TestClient) -> None:
    empty = ok(lobug.get("/memory/base-memory/lobug"))
    assert empty == {
        "content": "",
        "updated_at": None,
        "written_by": None,
        "stale": False,
        "made_by": None,
        "dropped_sentences": 0,
    }
    ok(lobug.put("/memory/base-memory/lobug", json={"content": "first"}))
    written = ok(lobug.put("/memory/base-memory/lobug", json={"content": "second"}))
    assert (written["content"], written["written_by"], written["stale"], written["made_by"]) == (
        "second",
        "manual",
        False,
        "person",
    )
    assert written["updated_at"].endswith("Z")
    history = ok(lobug.get("/memory/base-memory/lobug/history"))
    assert [(v["content"], v["written_by"]) for v in history] == [
        ("second", "manual"),
        ("first", "manual"),
    ]
    too_long = lobug.put("/memory/base-memory/lobug", json={"content": "x" * 20_001})
    assert error_of(too_long, 422) == "invalid_request"


def test_forgetting_a_message_marks_the_base_memory_stale(lobug: TestClient) -> None:
    ok(lobug.put("/memory/base-memory/lobug", json={"content": "The user rows"}))
    say(lobug, "hello")
    said = ok(lobug.get("/memory/messages/lobug"))[-1]
    ok(lobug.delete(f"/memory/messages/lobug/{said['id']}"))
    assert ok(lobug.get("/memory/base-memory/lobug"))["stale"] is True


def test_agents_are_listed_with_counts_and_deleted_only_when_confirmed(
    lobug: TestClient,
) -> None:
    ok(lobug.post("/memory/agents", json={"name": "other"}))
    ok(
        lobug.post(
            "/memory/messages", json={"agent_name": "other", "role": "user", "content": "hi"}
        )
    )
    add_fact(lobug, "The user likes rain", agent="other")
    say(lobug, "hello")
    listed = {a["name"]: a for a in ok(lobug.get("/memory/agents"))}
    assert (listed["lobug"]["messages"], listed["lobug"]["facts"]) == (2, 0)
    assert (listed["other"]["messages"], listed["other"]["facts"]) == (1, 1)
    assert listed["other"]["summaries"] == 0 and listed["other"]["id"].isdigit()
    for confirm in ({}, {"confirm": "othe"}):
        refused = lobug.delete("/memory/agents/other", params=confirm)
        assert error_of(refused, 422) == "confirmation_required"
    deleted = ok(lobug.delete("/memory/agents/other", params={"confirm": "other"}))
    assert deleted["agent"] == "other" and deleted["deleted"]["messages"] == 1
    assert deleted["deleted"]["facts"] == 1
    assert [a["name"] for a in ok(lobug.get("/memory/agents"))] == ["lobug"]
    assert error_of(lobug.get("/memory/facts/other"), 404) == "agent_not_found"


# ---------------------------------------------------------------------- the audit log


def test_the_audit_log_records_each_action_newest_first(lobug: TestClient) -> None:
    fact = add_fact(lobug, "The user's car is red")
    new = ok(lobug.put(f"/memory/facts/lobug/{fact['id']}", json={"content": "The car is blue"}))
    ok(lobug.patch(f"/memory/facts/lobug/{new['id']}", json={"pinned": True}))
    ok(lobug.delete(f"/memory/facts/lobug/{new['id']}"))
    ok(lobug.put("/memory/base-memory/lobug", json={"content": "profile"}))
    say(lobug, "hello")
    ok(lobug.post("/memory/forget", json={"agent": "lobug", "device": "desk"}))
    log = ok(lobug.get("/memory/audit/lobug"))
    entries = log["entries"]
    assert [(e["action"], e["target"]) for e in entries] == [
        ("purge", "messages"),  # the purge job, finished: what it erased, counted
        ("forget", "messages"),
        ("write", "base_memory"),
        ("forget", "fact"),
        ("flag", "fact"),
        ("correct", "fact"),
        ("create", "fact"),
    ]
    assert log["total"] == 7 and {e["actor"] for e in entries} == {"manual"}
    correction = entries[5]
    assert correction["target_ids"] == [fact["id"], new["id"]]
    assert correction["before"] == fact["content"] and correction["after"] == new["content"]
    assert entries[1]["detail"] == {"messages": 2, "facts": 0, "summaries": 0}
    assert entries[0]["detail"]["messages"] == 2 and entries[0]["before"] is None
    page = ok(lobug.get("/memory/audit/lobug", params={"limit": 2, "offset": 1}))
    assert [e["id"] for e in page["entries"]] == [entries[1]["id"], entries[2]["id"]]


# ---------------------------------------------------------------------- who may do what


ADMIN_CALLS = [
    ("POST", "/memory/facts/lobug", {"content": "The user sings"}),
    ("PUT", "/memory/facts/lobug/1", {"content": "The user hums"}),
    ("PATCH", "/memory/facts/lobug/1", {"pinned": True}),
    ("DELETE", "/memory/facts/lobug/1?purge=true", None),
    ("PUT", "/memory/base-memory/lobug", {"content": "profile"}),
    ("DELETE", "/memory/messages/lobug/1", None),  # message 1 is the fixture's
    ("POST", "/memory/forget", {"agent": "lobug", "device": "desk"}),
    ("GET", "/memory/audit/lobug", None),
    ("POST", "/memory/dream/lobug?dry_run=true", None),
    ("DELETE", "/memory/agents/lobug?confirm=lobug", None),
]
OPEN_READS = [
    "/memory/facts/lobug",
    "/memory/facts/lobug/1",
    "/memory/base-memory/lobug",
    "/memory/base-memory/lobug/history",
    "/memory/summaries/lobug",
    "/memory/dreams/lobug",
    "/memory/agents",
]


@pytest.fixture
def two_kinds(settings: Settings, backends: Backends) -> Iterator[TestClient]:
    """A server with device and admin tokens, the agent `lobug`, its fact 1 and message 1."""
    guarded = settings.with_overrides(device_tokens=(DEVICE_TOKEN,), admin_tokens=(ADMIN_TOKEN,))
    with TestClient(create_app(guarded, backends)) as client:
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        ok(client.post("/memory/agents", json={"name": "lobug"}, headers=admin))
        ok(
            client.post("/memory/facts/lobug", json={"content": "The user hums"}, headers=admin),
            201,
        )
        said = {"agent_name": "lobug", "role": "user", "content": "I hum"}
        ok(client.post("/memory/messages", json=said, headers=admin))
        yield client


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_CALLS)
def test_device_tokens_get_403_on_admin_routes_and_admin_tokens_pass(
    two_kinds: TestClient, method: str, path: str, body: dict[str, Any] | None
) -> None:
    device = two_kinds.request(
        method, path, json=body, headers={"Authorization": f"Bearer {DEVICE_TOKEN}"}
    )
    assert error_of(device, 403) == "admin_required"
    admin = two_kinds.request(
        method, path, json=body, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
    )
    assert admin.status_code in (200, 201), admin.text


@pytest.mark.parametrize("path", OPEN_READS)
def test_device_tokens_read_facts_summaries_base_memory_and_agents(
    two_kinds: TestClient, path: str
) -> None:
    ok(two_kinds.get(path, headers={"Authorization": f"Bearer {DEVICE_TOKEN}"}))


def test_admin_routes_document_their_error_codes(client: TestClient) -> None:
    schema = client.app.openapi()  # type: ignore[attr-defined]
    for method, path, _ in ADMIN_CALLS:
        templated = {
            "/memory/facts/lobug/1?purge=true": "/memory/facts/{agent_name}/{fact_id}",
            "/memory/facts/lobug/1": "/memory/facts/{agent_name}/{fact_id}",
            "/memory/facts/lobug": "/memory/facts/{agent_name}",
            "/memory/base-memory/lobug": "/memory/base-memory/{agent_name}",
            "/memory/messages/lobug/1": "/memory/messages/{agent_name}/{message_id}",
            "/memory/forget": "/memory/forget",
            "/memory/audit/lobug": "/memory/audit/{agent_name}",
            "/memory/dream/lobug?dry_run=true": "/memory/dream/{agent_name}",
            "/memory/agents/lobug?confirm=lobug": "/memory/agents/{agent_name}",
        }[path]
        responses = schema["paths"][templated][method.lower()]["responses"]
        assert "403" in responses and "admin_required" in responses["403"]["description"]
    fact_get = schema["paths"]["/memory/facts/{agent_name}/{fact_id}"]["get"]["responses"]
    assert "fact_not_found" in fact_get["404"]["description"]


# ---------------------------------------------------------------------- errors, memory server


def test_unknown_agents_facts_and_bad_bodies_have_stable_codes(lobug: TestClient) -> None:
    assert error_of(lobug.get("/memory/facts/nobody"), 404) == "agent_not_found"
    assert error_of(lobug.get("/memory/facts/lobug/999"), 404) == "fact_not_found"
    assert error_of(lobug.delete("/memory/facts/lobug/999"), 404) == "fact_not_found"
    assert error_of(lobug.get("/memory/summaries/nobody"), 404) == "agent_not_found"
    for body in ({"content": ""}, {"content": "   "}, {"content": "x", "type": "rumour"}):
        assert error_of(lobug.post("/memory/facts/lobug", json=body), 422) == "invalid_request"
    too_long = {"content": "x" * 2001}
    assert error_of(lobug.post("/memory/facts/lobug", json=too_long), 422) == "invalid_request"
    for params in ({"limit": 0}, {"limit": 1001}, {"offset": -1}, {"type": "rumour"}):
        assert lobug.get("/memory/facts/lobug", params=params).status_code == 422, params
    assert lobug.get("/memory/facts/lobug/0").status_code == 422
    assert lobug.get(f"/memory/facts/lobug/{2**63}").status_code == 422


def test_the_memory_server_serves_curation_at_the_root(
    settings: Settings, backends: Backends
) -> None:
    with TestClient(create_memory_app(settings, backends)) as client:
        ok(client.post("/agents", json={"name": "alpha"}))
        fact = ok(client.post("/facts/alpha", json={"content": "The user sails"}), 201)
        ok(client.delete(f"/facts/alpha/{fact['id']}", params={"purge": True}))
        assert ok(client.get("/facts/alpha"))["total"] == 0
        assert ok(client.get("/audit/alpha"))["total"] >= 2
