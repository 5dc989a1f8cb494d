"""GET /memory/export/{agent}, GET /memory/export and POST /memory/import (api/transfer.py):
streamed, admin only, one transaction, idempotent, on both engines."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app, create_memory_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.engines import Databases

ADMIN = {"Authorization": "Bearer admin-tok-7Qx1-Dn"}
DEVICE = {"Authorization": "Bearer device-tok-2Lp4-Ky"}


@pytest.fixture
def guarded(settings: Settings, backends: Backends) -> Iterator[TestClient]:
    tokens = settings.with_overrides(
        device_tokens=("device-tok-2Lp4-Ky",), admin_tokens=("admin-tok-7Qx1-Dn",)
    )
    with TestClient(create_app(tokens, backends)) as client:
        client.post("/memory/agents", json={"name": "lobug"}, headers=ADMIN)
        said = {"agent_name": "lobug", "role": "user", "content": "I keep bees"}
        client.post("/memory/messages", json=said, headers=ADMIN)
        client.post("/memory/facts/lobug", json={"content": "The user keeps bees"}, headers=ADMIN)
        yield client


def export_of(client: TestClient, path: str = "/memory/export/lobug") -> dict[str, Any]:
    with client.stream("GET", path, headers=ADMIN) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        document: dict[str, Any] = json.loads(b"".join(answer.iter_bytes()))
    return document


@pytest.mark.both_engines
def test_export_streams_the_agent_and_import_writes_it_once(
    guarded: TestClient,
    settings: Settings,
    backends: Backends,
    engine: str,
    request: pytest.FixtureRequest,
) -> None:
    document = export_of(guarded)
    assert [a["name"] for a in document["agents"]] == ["lobug"]
    assert document["agents"][0]["facts"][0]["content"] == "The user keeps bees"
    assert document["embedding_model"] == "fake-embed"

    if engine == "sqlite":
        other = settings.with_overrides(db_path=settings.db_path.with_name("other.db"))
    else:
        databases: Databases = request.getfixturevalue("postgres")
        other = settings.with_overrides(database_url=databases.fresh())
    with TestClient(create_memory_app(other, backends)) as memory_server:
        first = memory_server.post("/import", json=document)
        again = memory_server.post("/import", json=document)
        facts = memory_server.get("/facts/lobug", params={"q": "bees"}).json()

    assert first.status_code == 200, first.text
    assert first.json()["imported"][0]["added"]["facts"] == 1
    assert set(again.json()["imported"][0]["added"].values()) == {0}
    assert [f["content"] for f in facts["facts"]] == ["The user keeps bees"]


@pytest.mark.both_engines
def test_import_errors_name_the_json_path_or_the_conflict(guarded: TestClient) -> None:
    document = export_of(guarded, "/memory/export")
    document["agents"][0]["messages"][0]["role"] = "narrator"

    bad = guarded.post("/memory/import", json=document, headers=ADMIN)
    assert bad.status_code == 422
    assert bad.json()["error"] == "invalid_export"
    assert "$.agents[0].messages[0].role" in bad.json()["detail"]

    document["agents"][0]["messages"][0]["role"] = "user"
    document["agents"][0]["facts"][0]["content"] = "The user keeps wasps"
    conflict = guarded.post("/memory/import", json=document, headers=ADMIN)
    assert conflict.status_code == 409 and conflict.json()["error"] == "import_conflict"
    merged = guarded.post("/memory/import?merge=true", json=document, headers=ADMIN)
    assert merged.json()["imported"][0]["added"]["facts"] == 1


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/memory/export/lobug"), ("GET", "/memory/export"), ("POST", "/memory/import")],
)
def test_device_tokens_may_not_export_or_import(
    guarded: TestClient, method: str, path: str
) -> None:
    answer = guarded.request(method, path, json={}, headers=DEVICE)
    assert answer.status_code == 403 and answer.json()["error"] == "admin_required"
