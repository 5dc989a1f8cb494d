"""Messages posted to the memory API are learned from like device turns; /context answers
under a token budget; both through the durable queue and the one budgeted assembly."""

from __future__ import annotations

from fastapi.testclient import TestClient

from lobug.config import Settings
from lobug.tokens import estimate_tokens
from tests.fakes import FakeChat
from tests.memory.test_manager import facts_reply
from tests.polling import memory_work_done


def post(client: TestClient, role: str, content: str, **extra: object) -> dict[str, object]:
    body = {"agent_name": "alpha", "role": role, "content": content, **extra}
    response = client.post("/memory/messages", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["X-Lobug-Learning"] == (
        "off" if extra.get("learn") is False else "queued"
    )
    return dict(response.json())


def facts(client: TestClient, agent: str = "alpha") -> list[str]:
    return [f["content"] for f in client.get(f"/memory/facts/{agent}").json()["facts"]]


def test_a_user_message_and_its_answer_are_learned_from(
    client: TestClient, fake_chat: FakeChat
) -> None:
    client.post("/memory/agents", json={"name": "alpha"})
    fake_chat.enqueue(facts_reply("The user lives in Lisbon"))
    post(client, "user", "I live in Lisbon")
    assert fake_chat.extraction_requests() == []  # a lone message waits for its answer
    post(client, "assistant", "Lisbon is lovely.")
    memory_work_done(client)
    assert facts(client) == ["The user lives in Lisbon"]
    assert (
        "User: I live in Lisbon\nAssistant: Lisbon is lovely."
        in (fake_chat.extraction_requests()[0][-1]["content"])
    )
    services = client.app.state.services  # type: ignore[attr-defined]
    assert services.store.count_queued_exchanges() == 0


def test_a_lone_message_is_learned_from_by_the_maintenance_pass(
    client: TestClient, fake_chat: FakeChat
) -> None:
    client.post("/memory/agents", json={"name": "alpha"})
    post(client, "user", "I have a dog called Rex")
    work = client.app.state.services.memory_work  # type: ignore[attr-defined]
    assert work.resume() == 0  # inside its quiet period
    fake_chat.enqueue(facts_reply("The user has a dog called Rex"))
    assert work.resume(queued_before=float("inf")) == 1
    assert facts(client) == ["The user has a dog called Rex"]


def test_learning_is_off_per_message_and_per_agent(client: TestClient, fake_chat: FakeChat) -> None:
    client.post("/memory/agents", json={"name": "alpha"})
    client.post("/memory/agents", json={"name": "quiet", "metadata": {"learn": False}})
    post(client, "user", "my pin is 1234", learn=False)
    response = client.post(
        "/memory/messages", json={"agent_name": "quiet", "role": "user", "content": "I like tea"}
    )
    assert response.headers["X-Lobug-Learning"] == "off"
    work = client.app.state.services.memory_work  # type: ignore[attr-defined]
    assert work.flush() == 0 and fake_chat.extraction_requests() == []


def test_context_is_budgeted_with_sections_and_a_prompt(client: TestClient) -> None:
    client.post("/memory/agents", json={"name": "alpha"})
    client.post("/memory/facts/alpha", json={"content": "Alice plays the cello in spring"})
    client.post(
        "/memory/memory-blocks", json={"agent_name": "alpha", "label": "human", "value": "Alice"}
    )
    post(client, "user", "We talked about the cello", learn=False)
    body = client.post("/memory/context/alpha", json={"query": "cello"}).json()
    assert body["max_tokens"] == 1500
    assert [s["name"] for s in body["sections"]] == [
        "pinned",
        "base_memory",
        "blocks",
        "skills",
        "facts",
        "summaries",
        "messages",
        "topics",
    ]
    assert body["facts"][0]["content"] == "Alice plays the cello in spring"
    assert body["memory_blocks"][0]["value"] == "Alice"
    assert body["relevant_messages"][0]["content"] == "We talked about the cello"
    assert body["prompt"].startswith("What you remember about this user:")
    assert body["tokens"] == estimate_tokens(body["prompt"]) <= 1500
    tiny = client.post("/memory/context/alpha", json={"query": "cello", "max_tokens": 40}).json()
    assert tiny["tokens"] <= 40 and tiny["relevant_messages"] == []
    refused = client.post("/memory/context/alpha", json={"query": "cello", "max_tokens": 0})
    assert refused.status_code == 422


def test_openai_api_key_is_the_fallback_key() -> None:
    assert Settings.from_env({"OPENAI_API_KEY": "sk-a"}).llm_api_key == "sk-a"
    both = {"OPENAI_API_KEY": "sk-a", "LOBUG_LLM_API_KEY": "own"}
    assert Settings.from_env(both).llm_api_key == "own"
    assert Settings.from_env({}).llm_api_key is None
