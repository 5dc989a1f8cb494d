"""A Wyoming client is a device without a person token: its turn is the satellite's, and what
it may read is what the domain's rules give that device (`memory/people.py`). A person's
satellite hears their private facts; another person's, or a guest's, does not (fake models: the
chat learns each user message as one fact and answers with the facts its prompt quotes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.e2e.fake_server import learn_what_was_said
from tests.e2e.server import free_port
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.polling import memory_work_done
from tests.wyoming.conftest import Served, read_until, wyoming_settings

KITCHEN, OFFICE = "assist_satellite.kitchen", "assist_satellite.office"
HALL = "assist_satellite.hall"


@pytest.fixture
def household(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Served]:
    notes = tmp_path / "answer-from-notes"
    notes.touch()
    monkeypatch.setenv("FAKE_NOTES_FILE", str(notes))
    chat = FakeChat(responder=learn_what_was_said)
    backends = Backends(chat, FakeEmbedder(), FakeSTT(), FakeTTS())
    port = free_port()
    with TestClient(create_app(wyoming_settings(settings, port), backends)) as http:
        http.post("/memory/agents", json={"name": "lobug"})
        for name, device in (("Jordan", KITCHEN), ("Sam", OFFICE)):  # of one, all are its
            person = {"name": name, "devices": [device]}
            assert http.post("/memory/people/lobug", json=person).status_code in (200, 201)
        yield Served(http, port, chat, FakeSTT(), FakeTTS())


def say(served: Served, satellite: str, text: str) -> str:
    async def turn(client: AsyncTcpClient) -> Event:
        await client.write_event(Transcript(text, context={"satellite_id": satellite}).event())
        return (await read_until(client, "handled", "not-handled"))[-1]

    return str(served.run(turn).data.get("text", ""))


def test_a_persons_satellite_hears_their_facts_and_a_guests_does_not(household: Served) -> None:
    say(household, KITCHEN, "My locker code is 4417")
    memory_work_done(household.http)
    assert "4417" in say(household, KITCHEN, "What is my locker code?")
    assert "4417" not in say(household, OFFICE, "What is the locker code?")  # Sam's
    assert "4417" not in say(household, HALL, "What is the locker code?")  # a guest's
    said = household.http.get("/memory/messages/lobug", params={"limit": 100}).json()
    speakers = {(m["device_id"], m["speaker"]) for m in said if m["role"] == "user"}
    assert speakers == {(KITCHEN, "Jordan"), (OFFICE, "Sam"), (HALL, "guest")}
