"""The dream over HTTP: a dry run previews, a dream changes and is listed with its diary,
undo restores, and the errors have their codes."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.store.models import NewFact
from tests.fakes import FakeChat


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def current(client: TestClient) -> set[str]:
    return {f["id"] for f in ok(client.get("/memory/facts/lobug"))["facts"]}


@pytest.fixture
def lobug(client: TestClient) -> TestClient:
    ok(client.post("/memory/agents", json={"name": "lobug"}))
    for text in ("The user works at NASA", "The user has a dog called Rex"):
        ok(client.post("/memory/facts/lobug", json={"content": text}), 201)
    # Planted past the write-time duplicate check, as a near-duplicate that slipped by.
    services = client.app.state.services  # type: ignore[attr-defined]
    text = "The user works at NASA in Houston"
    services.store.add_fact("lobug", NewFact(text), services.embedder.embed(text))
    return client


def test_a_dry_run_previews_and_a_dream_applies_and_can_be_undone(
    lobug: TestClient, fake_chat: FakeChat
) -> None:
    before = current(lobug)
    preview = ok(lobug.post("/memory/dream/lobug", params={"dry_run": True}))
    assert preview["id"] is None and preview["dry_run"] is True
    assert [c["action"] for c in preview["changes"]] == ["merge"]
    assert current(lobug) == before
    fake_chat.enqueue("The user works at NASA in Houston and has a dog.")
    dream = ok(lobug.post("/memory/dream/lobug"))
    assert dream["base_memory_rewritten"] is True
    assert "## Merged near-duplicates (1)" in dream["diary"]
    assert current(lobug) == before - {dream["changes"][0]["fact_id"]}
    listed = ok(lobug.get("/memory/dreams/lobug"))
    assert [d["id"] for d in listed] == [dream["id"]]
    assert ok(lobug.get(f"/memory/dreams/lobug/{dream['id']}"))["diary"] == dream["diary"]
    undone = ok(lobug.post(f"/memory/dreams/lobug/{dream['id']}/undo"))
    assert undone["undone_at"] is not None
    assert current(lobug) == before
    again = lobug.post(f"/memory/dreams/lobug/{dream['id']}/undo")
    assert again.status_code == 409 and again.json()["error"] == "dream_undone"


def test_an_unknown_dream_is_404(lobug: TestClient) -> None:
    missing = lobug.get("/memory/dreams/lobug/99")
    assert missing.status_code == 404 and missing.json()["error"] == "dream_not_found"


def test_the_nightly_dream_is_a_maintenance_task_unless_turned_off(
    settings: Settings, backends: Backends
) -> None:
    for dream_at, expected in (("03:30", True), ("", False)):
        app = create_app(settings.with_overrides(dream_at=dream_at), backends)
        with TestClient(app):
            names = [name for name, _ in app.state.maintenance.tasks]
        assert ("dreams" in names) is expected
