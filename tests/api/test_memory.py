from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app, create_memory_app
from lobug.backends import Backends
from lobug.config import ConfigError, Settings
from tests.fakes import FakeChat, FakeEmbedder
from tests.polling import memory_work_done

pytestmark = pytest.mark.both_engines


def agent(client: TestClient, name: str = "alpha", prefix: str = "/memory") -> dict[str, Any]:
    response = client.post(f"{prefix}/agents", json={"name": name})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def post_message(
    client: TestClient, content: str, name: str = "alpha", role: str = "user"
) -> dict[str, Any]:
    response = client.post(
        "/memory/messages", json={"agent_name": name, "role": role, "content": content}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def post_block(client: TestClient, **fields: Any) -> Any:
    return client.post("/memory/memory-blocks", json={"agent_name": "alpha", **fields})


def test_health_reports_the_embedder_and_database(client: TestClient) -> None:
    body = client.get("/memory/health").json()
    assert body["status"] == "ok"
    assert body["embedding_backend"] == "fake"
    assert body["embedding_dimension"] == 64
    assert body["database_path"].endswith("memory.db")


def test_agents_are_created_once_and_keep_their_first_metadata(client: TestClient) -> None:
    first = client.post("/memory/agents", json={"name": "alpha", "metadata": {"k": 1}}).json()
    again = client.post("/memory/agents", json={"name": "alpha", "metadata": {"k": 2}}).json()
    assert first == again
    assert first["name"] == "alpha" and first["metadata"] == {"k": 1}
    assert first["id"].isdigit() and first["created_at"].endswith("Z")
    assert client.get("/memory/agents/alpha").json() == first


def test_unknown_agent_is_404(client: TestClient) -> None:
    response = client.get("/memory/agents/nobody")
    assert response.status_code == 404
    assert response.json()["error"] == "agent_not_found"
    for path, body in (
        ("/memory/messages", {"agent_name": "nobody", "role": "user", "content": "hi"}),
        ("/memory/messages/search", {"agent_name": "nobody", "query": "hi"}),
        ("/memory/memory-blocks", {"agent_name": "nobody", "label": "human", "value": ""}),
        ("/memory/context/nobody", {"query": "hi"}),
    ):
        assert client.post(path, json=body).status_code == 404, path
    assert client.get("/memory/messages/nobody").status_code == 404
    assert client.get("/memory/memory-blocks/nobody").status_code == 404


def test_messages_are_stored_with_metadata_and_listed_newest_first(client: TestClient) -> None:
    created = agent(client)
    first = client.post(
        "/memory/messages",
        json={"agent_name": "alpha", "role": "system", "content": "be brief", "metadata": {"a": 1}},
    ).json()
    assert first["agent_id"] == created["id"]
    assert first["role"] == "system" and first["metadata"] == {"a": 1}
    assert first["similarity"] is None
    post_message(client, "second")
    post_message(client, "third", role="assistant")
    listed = client.get("/memory/messages/alpha").json()
    assert [m["content"] for m in listed] == ["third", "second", "be brief"]
    limited = client.get("/memory/messages/alpha", params={"limit": 2}).json()
    assert [m["content"] for m in limited] == ["third", "second"]


def test_invalid_messages_are_422(client: TestClient) -> None:
    agent(client)
    bad_role = {"agent_name": "alpha", "role": "tool", "content": "x"}
    response = client.post("/memory/messages", json=bad_role)
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"
    empty = {"agent_name": "alpha", "role": "user", "content": ""}
    assert client.post("/memory/messages", json=empty).status_code == 422
    assert client.get("/memory/messages/alpha", params={"limit": 0}).status_code == 422


def test_search_ranks_by_similarity_and_respects_limits(client: TestClient) -> None:
    agent(client)
    for text in ("my favourite colour is blue", "the cat sleeps", "rain in Boston", "a", "b", "c"):
        post_message(client, text)
    hits = client.post(
        "/memory/messages/search", json={"agent_name": "alpha", "query": "the cat sleeps"}
    ).json()
    assert len(hits) == 5
    assert hits[0]["content"] == "the cat sleeps"
    assert hits[0]["similarity"] == pytest.approx(1.0, abs=1e-4)
    similarities = [h["similarity"] for h in hits]
    assert similarities == sorted(similarities, reverse=True)
    two = client.post(
        "/memory/messages/search", json={"agent_name": "alpha", "query": "cat", "limit": 2}
    )
    assert len(two.json()) == 2
    too_many = client.post(
        "/memory/messages/search", json={"agent_name": "alpha", "query": "cat", "limit": 21}
    )
    assert too_many.status_code == 422
    assert too_many.json()["error"] == "limit_too_large"


def test_agents_are_isolated(client: TestClient) -> None:
    agent(client, "alpha")
    agent(client, "beta")
    post_message(client, "alpha secret", name="alpha")
    post_message(client, "beta secret", name="beta")
    assert post_block(client, label="human", value="Alpha").status_code == 200
    search = {"agent_name": "beta", "query": "alpha secret", "limit": 20}
    assert [m["content"] for m in client.post("/memory/messages/search", json=search).json()] == [
        "beta secret"
    ]
    assert [m["content"] for m in client.get("/memory/messages/beta").json()] == ["beta secret"]
    assert client.get("/memory/memory-blocks/beta").json() == []
    assert client.get("/memory/memory-blocks/beta/human").status_code == 404


def test_device_messages_are_listed_and_found_by_words_and_meaning(
    client: TestClient, fake_chat: FakeChat
) -> None:
    agent(client, "lobug")
    fake_chat.enqueue("Hi!")
    assert client.post("/chat/text", json={"text": "hello there"}).status_code == 200
    listed = client.get("/memory/messages/lobug").json()
    assert [m["content"] for m in listed] == ["Hi!", "hello there"]
    by_words = {"agent_name": "lobug", "query": "hello there", "mode": "keyword"}
    found = client.post("/memory/messages/search", json=by_words).json()
    assert [m["content"] for m in found] == ["hello there"]
    memory_work_done(client)  # the message is embedded by the memory work after the reply
    by_meaning = {"agent_name": "lobug", "query": "hello there", "mode": "vector"}
    found = client.post("/memory/messages/search", json=by_meaning).json()
    assert found[0]["content"] == "hello there"


def test_memory_block_lifecycle_and_history(client: TestClient) -> None:
    agent(client)
    created = post_block(
        client, label="human", value="Name: Alice", description="About the user", limit=40
    )
    assert created.status_code == 200
    block = created.json()
    assert block["label"] == "human" and block["value"] == "Name: Alice"
    assert block["description"] == "About the user" and block["limit"] == 40
    assert block["read_only"] is False
    assert client.get("/memory/memory-blocks/alpha/human").json() == block

    updated = client.put(
        "/memory/memory-blocks/alpha/human", json={"value": "Name: Alice\nCity: Boston"}
    ).json()
    assert updated["value"] == "Name: Alice\nCity: Boston"
    assert updated["id"] == block["id"]
    assert [b["label"] for b in client.get("/memory/memory-blocks/alpha").json()] == ["human"]

    history = client.get("/memory/memory-blocks/alpha/human/history").json()
    assert [(h["old_value"], h["new_value"], h["changed_by"]) for h in history] == [
        (None, "Name: Alice", "api"),
        ("Name: Alice", "Name: Alice\nCity: Boston", "api"),
    ]
    assert all(h["block_id"] == block["id"] and h["changed_at"].endswith("Z") for h in history)


def test_duplicate_label_is_409(client: TestClient) -> None:
    agent(client)
    assert post_block(client, label="human", value="a").status_code == 200
    response = post_block(client, label="human", value="b")
    assert response.status_code == 409
    assert response.json()["error"] == "block_exists"


def test_a_value_over_the_limit_is_422_and_never_cut(client: TestClient) -> None:
    agent(client)
    over = post_block(client, label="short", value="x" * 11, limit=10)
    assert over.status_code == 422
    assert over.json()["error"] == "block_too_long"
    assert post_block(client, label="short", value="x" * 10, limit=10).status_code == 200
    response = client.put("/memory/memory-blocks/alpha/short", json={"value": "y"})
    assert response.status_code == 200
    too_long = client.put("/memory/memory-blocks/alpha/short", json={"value": "z" * 11})
    assert too_long.status_code == 422
    assert client.get("/memory/memory-blocks/alpha/short").json()["value"] == "y"
    assert len(client.get("/memory/memory-blocks/alpha/short/history").json()) == 2


def test_read_only_blocks_refuse_writes_with_403(client: TestClient) -> None:
    agent(client)
    assert post_block(client, label="persona", value="I am kind", read_only=True).status_code == 200
    response = client.put("/memory/memory-blocks/alpha/persona", json={"value": "I am rude"})
    assert response.status_code == 403
    assert response.json()["error"] == "block_read_only"
    assert client.get("/memory/memory-blocks/alpha/persona").json()["value"] == "I am kind"


def test_missing_block_is_404_everywhere(client: TestClient) -> None:
    agent(client)
    assert client.get("/memory/memory-blocks/alpha/none").status_code == 404
    put = client.put("/memory/memory-blocks/alpha/none", json={"value": "x"})
    assert put.status_code == 404
    assert put.json()["error"] == "block_not_found"
    assert client.get("/memory/memory-blocks/alpha/none/history").status_code == 404


def test_context_returns_blocks_and_relevant_messages(client: TestClient) -> None:
    agent(client)
    post_block(client, label="human", value="Name: Alice")
    post_message(client, "I love blue")
    post_message(client, "It rains")
    body = client.post("/memory/context/alpha", json={"query": "I love blue"}).json()
    assert [b["label"] for b in body["memory_blocks"]] == ["human"]
    assert body["relevant_messages"][0]["content"] == "I love blue"
    assert body["relevant_messages"][0]["similarity"] == pytest.approx(1.0, abs=1e-4)
    mismatch = client.post("/memory/context/alpha", json={"query": "x", "agent_name": "beta"})
    assert mismatch.status_code == 422


def test_device_blocks_appear_in_the_system_prompt(client: TestClient, fake_chat: FakeChat) -> None:
    agent(client, "lobug")
    block = {"agent_name": "lobug", "label": "human", "value": "Name: Alice"}
    assert client.post("/memory/memory-blocks", json=block).status_code == 200
    client.post("/chat/text", json={"text": "hello"})
    system = fake_chat.chat_requests()[-1][0]["content"]
    assert "[Memory blocks]" in system and '\n"human": "Name: Alice"' in system


def test_memory_routes_need_a_token_when_tokens_are_set(
    settings: Settings, backends: Backends
) -> None:
    guarded = settings.with_overrides(device_tokens=("s3cret-Tok3n-Mw8q",))
    with TestClient(create_app(guarded, backends)) as client:
        assert client.get("/memory/health").status_code == 200
        response = client.post("/memory/agents", json={"name": "alpha"})
        assert response.status_code == 401
        assert response.json()["error"] == "unauthorized"
        assert client.get("/memory/messages/alpha").status_code == 401
        ok = client.post(
            "/memory/agents",
            json={"name": "alpha"},
            headers={"Authorization": "Bearer s3cret-Tok3n-Mw8q"},
        )
        assert ok.status_code == 200


@pytest.fixture
def memory_client(settings: Settings) -> Iterator[TestClient]:
    app = create_memory_app(settings, Backends(FakeChat(), FakeEmbedder()))
    with TestClient(app) as client:
        yield client


def test_memory_server_serves_the_api_at_the_root(memory_client: TestClient) -> None:
    assert memory_client.get("/health").json()["status"] == "ok"
    agent(memory_client, prefix="")
    message = {"agent_name": "alpha", "role": "user", "content": "I like tea"}
    assert memory_client.post("/messages", json=message).status_code == 200
    hits = memory_client.post("/messages/search", json={"agent_name": "alpha", "query": "tea"})
    assert [h["content"] for h in hits.json()] == ["I like tea"]
    assert memory_client.get("/chat/text").status_code == 404
    assert memory_client.get("/memory/health").status_code == 404


def test_memory_server_embeds_later_what_it_stored_while_the_embedder_failed(
    settings: Settings,
) -> None:
    embedder = FakeEmbedder()
    with TestClient(create_memory_app(settings, Backends(FakeChat(), embedder))) as client:
        agent(client, prefix="")
        embedder.fail_with = RuntimeError("embedder down")
        message = {"agent_name": "alpha", "role": "user", "content": "I paddle a red kayak"}
        assert client.post("/messages", json=message).headers["X-Lobug-Embedded"] == "0"
        embedder.fail_with = None
        assert client.app.state.maintenance.run_once() == {  # type: ignore[attr-defined]
            "re-embedded messages": 1,
            "resumed exchanges": 0,  # the message waits out its quiet period
        }
        hits = client.post("/messages/search", json={"agent_name": "alpha", "query": "kayak"})
    assert hits.json()[0]["similarity"] > 0


def test_memory_server_refuses_exposure_without_tokens(tmp_path: Path) -> None:
    exposed = Settings(db_path=tmp_path / "m.db", host="0.0.0.0")
    with pytest.raises(ConfigError):
        create_memory_app(exposed, Backends(FakeChat(), FakeEmbedder()))
