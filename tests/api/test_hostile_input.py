"""Hostile input, round 2 (issue 17): inputs that pass every size check must not break a
device or an agent. Each case failed before its fix."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from lobug.api.json_guard import MAX_JSON_DEPTH
from lobug.config import Settings
from lobug.tokens import estimate_tokens, prompt_budget_tokens
from tests.fakes import FakeChat

SURROGATE = b'"\\ud800"'
JSON_ROUTES = [
    ("/chat/text", b'{"text": %s}'),
    ("/context/sensors", b'{"orientation": %s}'),
    ("/v1/chat/completions", b'{"model": "x", "messages": [{"role": "user", "content": %s}]}'),
    ("/memory/agents", b'{"name": "a", "metadata": {"k": %s}}'),
    (
        "/memory/messages",
        b'{"agent_name": "lobug", "role": "user", "content": "hi", "metadata": {%s: 1}}',
    ),
    ("/memory/facts/lobug", b'{"content": %s}'),
]


def post(client: TestClient, path: str, body: bytes) -> tuple[int, str]:
    response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    return response.status_code, response.json()["error"] if response.status_code >= 400 else ""


@pytest.fixture
def lobug(client: TestClient) -> TestClient:
    assert client.post("/memory/agents", json={"name": "lobug"}).status_code == 200
    return client


@pytest.mark.parametrize(("path", "template"), JSON_ROUTES)
def test_a_lone_surrogate_is_refused_on_every_json_route(
    lobug: TestClient, path: str, template: bytes
) -> None:
    assert post(lobug, path, template % SURROGATE) == (400, "invalid_json")


@pytest.mark.parametrize(("path", "template"), JSON_ROUTES)
@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 20_000])
def test_deep_nesting_is_refused_on_every_json_route(
    lobug: TestClient, path: str, template: bytes, depth: int
) -> None:
    deep = b"[" * depth + b"]" * depth
    assert post(lobug, path, template % deep) == (400, "invalid_json")


@pytest.mark.parametrize(
    "content_type",
    [
        "application/merge-patch+json",
        "application/vnd.api+json; charset=utf-8",
        "Application/JSON ; q=1",
        "",
    ],
)
@pytest.mark.parametrize(("path", "template"), JSON_ROUTES)
def test_every_content_type_read_as_json_meets_the_guard(
    lobug: TestClient, path: str, template: bytes, content_type: str
) -> None:
    """FastAPI parses `application/*+json` (and a body without a type) as JSON too."""
    headers = {"Content-Type": content_type} if content_type else {}
    answer = lobug.post(path, content=template % SURROGATE, headers=headers)
    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_json")


@pytest.mark.parametrize("content_type", ["text/plain", "application/json, text/plain"])
def test_a_body_fastapi_does_not_read_as_json_reaches_no_route_as_json(
    lobug: TestClient, content_type: str
) -> None:
    body = b'{"name": "a", "metadata": {"k": %s}}' % SURROGATE
    answer = lobug.post("/memory/agents", content=body, headers={"Content-Type": content_type})
    assert answer.status_code in (415, 422)  # refused as cross-site, or not an object
    assert lobug.get("/memory/agents").status_code == 200


def test_a_lone_surrogate_in_a_key_is_refused(lobug: TestClient) -> None:
    body = b'{"agent_name": "lobug", "role": "user", "content": "hi", "metadata": {%s: 1}}'
    assert post(lobug, "/memory/messages", body % SURROGATE) == (400, "invalid_json")


def test_nothing_stored_breaks_later_reads(lobug: TestClient) -> None:
    for metadata in (b'{"k": "\\udc00x"}', b'{"k": ' + b"[" * 500 + b"]" * 500 + b"}"):
        body = b'{"agent_name": "lobug", "role": "user", "content": "hi", "metadata": %s}'
        assert post(lobug, "/memory/messages", body % metadata)[0] in (400, 422)
    assert post(
        lobug,
        "/memory/messages",
        b'{"agent_name": "lobug", "role": "user", "content": "hi", "metadata": {"k": NaN}}',
    ) == (422, "invalid_request")
    assert lobug.get("/memory/messages/lobug").status_code == 200
    assert lobug.get("/memory/agents/lobug").status_code == 200


@pytest.mark.parametrize("name", ["a/b", "alex\n", "", "x" * 65, "two words", ".", ".."])
def test_agent_names_follow_one_rule_everywhere(client: TestClient, name: str) -> None:
    created = client.post("/memory/agents", json={"name": name})
    assert (created.status_code, created.json()["error"]) == (422, "invalid_agent")
    message = {"agent_name": name, "role": "user", "content": "hi"}
    assert client.post("/memory/messages", json=message).json()["error"] == "invalid_agent"
    proxy = {"model": "x", "user": name, "messages": [{"role": "user", "content": "hi"}]}
    if name:
        assert client.post("/v1/chat/completions", json=proxy).json()["error"] == "invalid_agent"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/v1/chat/completions",
            {"model": "x", "n": 5, "messages": [{"role": "user", "content": "hi"}]},
        ),
        (
            "/v1/chat/completions",
            {"model": "x", "n": True, "messages": [{"role": "user", "content": "hi"}]},
        ),
        (
            "/v1/chat/completions",
            {"model": "x", "stream": 1, "messages": [{"role": "user", "content": "hi"}]},
        ),
        ("/memory/messages/search", {"agent_name": "lobug", "query": "x", "limit": True}),
        (
            "/memory/memory-blocks",
            {"agent_name": "lobug", "label": "x", "value": "v", "read_only": 1},
        ),
    ],
)
def test_loose_types_are_refused(lobug: TestClient, path: str, body: dict[str, object]) -> None:
    assert post(lobug, path, json.dumps(body).encode()) == (422, "invalid_request")


def test_n_of_one_is_accepted(client: TestClient) -> None:
    body = {"model": "x", "n": 1, "messages": [{"role": "user", "content": "hi"}]}
    assert client.post("/v1/chat/completions", json=body).status_code == 200


def test_a_trailing_slash_is_not_redirected_to_the_host_header(client: TestClient) -> None:
    response = client.get("/health/", headers={"Host": "localhost"}, follow_redirects=False)
    assert response.status_code == 404 and "location" not in response.headers
    foreign = client.get("/health/", headers={"Host": "evil.example"}, follow_redirects=False)
    assert foreign.status_code == 421 and "location" not in foreign.headers  # never served


def prompt_tokens(messages: list[dict[str, str]]) -> int:
    return sum(estimate_tokens(m["content"]) + 4 for m in messages)


@pytest.mark.parametrize("value", ["我" * 20000, "notes " * 8000])
def test_a_huge_read_only_block_never_fails_an_agent_and_an_admin_can_delete_it(
    lobug: TestClient, fake_chat: FakeChat, settings: Settings, value: str
) -> None:
    block = {"agent_name": "lobug", "label": "notes", "value": value, "read_only": True}
    assert lobug.post("/memory/memory-blocks", json=block).status_code == 200
    budget = prompt_budget_tokens(settings.llm_context_tokens, fake_chat.reply_tokens)
    assert lobug.post("/chat/text", json={"text": "hello"}).status_code == 200
    assert prompt_tokens(fake_chat.chat_requests()[-1]) <= budget
    proxy = {"model": "x", "user": "lobug", "messages": [{"role": "user", "content": "hi"}]}
    assert lobug.post("/v1/chat/completions", json=proxy).status_code == 200
    proxied = [m for m, _ in fake_chat.requests if m[0]["content"].startswith("What you remember")]
    assert "[...]" in proxied[-1][0]["content"] and prompt_tokens(proxied[-1]) <= budget
    assert lobug.delete("/memory/memory-blocks/lobug/notes").status_code == 204
    assert lobug.get("/memory/memory-blocks/lobug/notes").status_code == 404
    entry = lobug.get("/memory/audit/lobug").json()["entries"][0]
    assert (entry["action"], entry["target"]) == ("delete", "block")


def test_v1_messages_beyond_the_model_or_the_text_limit_are_refused_unstored(
    lobug: TestClient, settings: Settings
) -> None:
    huge = {
        "model": "x",
        "user": "lobug",
        "messages": [{"role": "user", "content": "a" * 1_000_000}],
    }
    response = lobug.post("/v1/chat/completions", json=huge)
    assert (response.status_code, response.json()["error"]) == (413, "text_too_long")
    long = "word " * 700  # within the text limit, together beyond a 4,096-token context
    many = [{"role": "user", "content": long}] * 6
    body = {"model": "x", "user": "lobug", "messages": many}
    response = lobug.post("/v1/chat/completions", json=body)
    assert (response.status_code, response.json()["error"]) == (413, "text_too_long_for_model")
    assert lobug.get("/memory/messages/lobug").json() == []
