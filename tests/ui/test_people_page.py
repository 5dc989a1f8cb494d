"""The dashboard's people page: the household listed to any session; a person's own facts
(private ones included) to an admin's session only, never to a device token's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.store.household import PRIVATE
from lobug.store.models import NewFact
from tests.fakes import FakeEmbedder
from tests.ui.test_pages import ADMIN, DEVICE, LOOPBACK, sign_in


@pytest.fixture
def guarded(settings: Settings, backends: Backends) -> Iterator[TestClient]:
    app = create_app(
        settings.with_overrides(admin_tokens=(ADMIN,), device_tokens=(DEVICE,)), backends
    )
    with TestClient(app, base_url=LOOPBACK, follow_redirects=False) as client:
        yield client


def test_a_persons_facts_are_shown_to_an_admin_only(
    guarded: TestClient, fake_embedder: FakeEmbedder
) -> None:
    store = guarded.app.state.services.store  # type: ignore[attr-defined]
    store.ensure_agent("lobug")
    jordan = store.add_person("lobug", "Jordan", actor="test").id
    store.set_device_person("lobug", "kitchen", jordan, actor="test")
    secret = "Jordan's locker code is 4417"
    fact = NewFact(secret, owner_person_id=jordan, scope=PRIVATE)
    store.add_fact("lobug", fact, fake_embedder.embed(secret))

    sign_in(guarded, DEVICE)
    page = guarded.get(f"/ui/people?agent=lobug&person={jordan}").text
    assert "Jordan" in page and "kitchen" in page and "4417" not in page
    sign_in(guarded, ADMIN)
    page = guarded.get(f"/ui/people?agent=lobug&person={jordan}").text
    assert "4417" in page and "(private)" in page
    assert guarded.get("/ui/people?agent=lobug&person=99").status_code == 200
