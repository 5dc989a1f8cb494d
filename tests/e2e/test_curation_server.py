"""Curation end to end: a real server process with the real models and a real SQLite file;
a person adds, corrects, pins and purges facts over HTTP and forgets by typing to the device."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.e2e.server import start_server, wait_for_learning

pytestmark = [pytest.mark.e2e, pytest.mark.models]

SECRET = "Quaxilotl"
ADMIN = {"Authorization": "Bearer admin-tok-Cu5Rw8"}
DEVICE = {"Authorization": "Bearer device-tok-Cu2Lm6"}


def database_bytes(db_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))


def test_a_person_curates_the_memory_of_a_running_server(tmp_path: Path) -> None:
    db_path = tmp_path / "memory.db"
    env = {
        "LOBUG_SPEECH": "0",
        "LOBUG_ADMIN_TOKENS": "admin-tok-Cu5Rw8",
        "LOBUG_DEVICE_TOKENS": "device-tok-Cu2Lm6",
    }
    server = start_server(db_path, tmp_path / "server.log", env)
    try:
        with httpx.Client(base_url=f"{server.url}/memory", timeout=120) as memory:
            added = memory.post(
                "/facts/lobug", json={"content": "The user's dog is Rex"}, headers=ADMIN
            )
            assert added.status_code == 201, added.text
            fact_id = added.json()["id"]
            refused = memory.put(f"/facts/lobug/{fact_id}", json={"content": "x"}, headers=DEVICE)
            assert (refused.status_code, refused.json()["error"]) == (403, "admin_required")
            corrected = memory.put(
                f"/facts/lobug/{fact_id}",
                json={"content": f"The user's dog is {SECRET}"},
                headers=ADMIN,
            ).json()
            assert [v["content"] for v in corrected["versions"]] == [
                "The user's dog is Rex",
                f"The user's dog is {SECRET}",
            ]
            pinned = memory.patch(
                f"/facts/lobug/{corrected['id']}", json={"pinned": True}, headers=ADMIN
            )
            assert pinned.json()["pinned"] is True
            found = memory.get(
                "/facts/lobug", params={"q": "what is the dog called"}, headers=DEVICE
            )
            assert found.json()["facts"][0]["id"] == corrected["id"]
            purged = memory.delete(
                f"/facts/lobug/{corrected['id']}", params={"purge": "true"}, headers=ADMIN
            )
            assert purged.status_code == 200 and purged.json()["content"] == ""
            actions = [
                e["action"] for e in memory.get("/audit/lobug", headers=ADMIN).json()["entries"]
            ]
            assert actions[:4] == ["purge", "flag", "correct", "create"]
        assert SECRET.encode() not in database_bytes(db_path)

        with httpx.Client(base_url=server.url, timeout=120, headers=DEVICE) as device:
            said = device.post("/chat/text", json={"text": f"My cat is called {SECRET}"})
            assert said.status_code == 200, said.text
            wait_for_learning(device)
            forgot = device.post("/chat/text", json={"text": "Forget what I just said"})
            assert forgot.json() == {
                "response": "Okay, I forgot what you just said.",
                "action": "respond",
            }
            assert device.get("/context/working-memory").json()["messages"] == []
            counts = wait_for_learning(device)
            assert counts["messages"] == 0
    finally:
        server.stop()
    assert server.process.returncode == 0, server.log()
    assert SECRET.encode() not in database_bytes(db_path)
