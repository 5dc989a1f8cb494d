"""A person first (issue 28), end to end: a real server process on the embedded model. A
turn that arrives while a dream is writing stops the dream's model call at once; the turn is
answered while the dream goes on, and the dream still finishes. (`scripts/bench_person_first.py`
measures the times.)"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.server import start_server

pytestmark = [pytest.mark.e2e, pytest.mark.models]

FRIENDS = "Alex Clara Sam Noor Jonas Mia Theo Lina Omar Yuki".split()
PLACES = "Berlin Porto Lyon Kyoto Oslo Vienna Seville Krakow".split()


# 60 s alone; 244 s beside the 1.5B model's test on the other worker (`make test`, 2 cores).
@pytest.mark.timeout(900)
def test_a_turn_during_a_dream_stops_its_model_call_and_the_dream_still_finishes(
    tmp_path: Path,
) -> None:
    env = {"LOBUG_SPEECH": "0", "LOBUG_LOG_LEVEL": "debug"}
    server = start_server(tmp_path / "memory.db", tmp_path / "server.log", env)
    dreamt: list[httpx.Response] = []

    def dream() -> None:
        with httpx.Client(base_url=server.url, timeout=900) as admin:
            dreamt.append(admin.post("/memory/dream/lobug"))

    try:
        with httpx.Client(base_url=server.url, timeout=900) as client:
            client.post("/memory/agents", json={"name": "lobug"}).raise_for_status()
            for n in range(40):
                friend, place = FRIENDS[n % 10], PLACES[n % 8]
                fact = {"content": f"The user's friend {friend} number {n} lives in {place}"}
                client.post("/memory/facts/lobug", json=fact).raise_for_status()
            dreaming = threading.Thread(target=dream)
            dreaming.start()
            time.sleep(2.0)  # the dream is at its model calls (the base memory, the topics)
            turns = [
                client.post("/chat/text", json={"text": text}, headers={"X-Device-Id": "desk"})
                for text in ("Good morning!", "What should I cook tonight?")
            ]
            answered_while_dreaming = dreaming.is_alive()
            dreaming.join(900)
    finally:
        server.stop()
    assert [turn.status_code for turn in turns] == [200, 200]
    assert all(turn.json()["response"].strip() for turn in turns)
    assert answered_while_dreaming
    assert dreamt and dreamt[0].status_code == 200, server.log()[-2000:]
    assert "gave way to a person" in server.log()
