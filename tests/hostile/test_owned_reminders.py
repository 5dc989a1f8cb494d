"""Hostile round 4, item 4, through a real server process (fake models, fake speech) and a
xiaozhi connection: a guest cannot hear or cancel Jordan's reminders, and they never ring on a
device that is not his; 1,500 due reminders are one short message; a kill -9 while they are
being said loses none (they are marked said only once said, and ring again after a restart).

Jordan, his kitchen device and his reminders are written to the database the server uses (the
admin's data; when the reminders were set is not what is tested here)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from lobug.store.engines import open_database
from lobug.store.protocol import Store
from tests.e2e.fake_server import start
from tests.e2e.server import ServerProcess
from tests.polling import eventually

pytestmark = pytest.mark.e2e

AGENT = "lobug"
KITCHEN = "aa:bb:cc:00:00:0a"  # Jordan's
HALL = "aa:bb:cc:00:00:0b"  # nobody's: a guest speaks there
HELLO = {
    "type": "hello",
    "version": 1,
    "transport": "websocket",
    "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
}


def serve(folder: Path) -> ServerProcess:
    env = {"LOBUG_DB_PATH": str(folder / "memory.db"), "LOBUG_DREAM_AT": "off", "FAKE_SPEECH": "1"}
    return start("serve", folder / "server.log", env)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def store(folder: Path) -> Iterator[Store]:
    opened = open_database(f"sqlite:///{folder / 'memory.db'}")
    yield opened
    opened.close()


def jordans(store: Store, count: int, what: str = "take your insulin") -> int:
    """Jordan, bound to the kitchen device, with `count` reminders due a minute ago; Sam on
    her office device (a household of two: the hall is nobody's)."""
    jordan = store.add_person(AGENT, "Jordan", actor="test").id
    store.set_device_person(AGENT, KITCHEN, jordan, actor="test")
    sam = store.add_person(AGENT, "Sam", actor="test").id
    store.set_device_person(AGENT, "office", sam, actor="test")
    due = time.time() - 60
    for n in range(count):
        store.add_reminder(
            AGENT, KITCHEN, f"{what} {n}", due + n / 1000, actor="test", owner_person_id=jordan
        )
    return jordan


class Device:
    """A xiaozhi connection, what it received collected."""

    def __init__(self, server: ServerProcess, device_id: str) -> None:
        self.url = server.url.replace("http", "ws") + "/xiaozhi/v1/"
        self.headers = {"Device-Id": device_id, "Client-Id": "c", "Protocol-Version": "1"}
        self.received: list[dict[str, Any]] = []

    def said(self) -> list[str]:
        return [m["text"] for m in self.received if m.get("state") == "sentence_start"]

    async def listen(self, until: Any, timeout_s: float) -> bool:
        """Connected until `until(self)` holds or `timeout_s` passed; whether it held."""
        deadline = time.monotonic() + timeout_s
        try:
            async with websockets.connect(self.url, additional_headers=self.headers) as socket:
                await socket.send(json.dumps(HELLO))
                while not until(self) and time.monotonic() < deadline:
                    try:
                        data = await asyncio.wait_for(socket.recv(), 0.2)
                    except TimeoutError:
                        continue
                    if isinstance(data, str):
                        self.received.append(json.loads(data))
        except websockets.ConnectionClosed:
            pass
        return bool(until(self))


def heard(device: Device, timeout_s: float = 15) -> Device:
    """`device` connected until its first answer was said to the end."""
    stopped = lambda d: any(m.get("state") == "stop" for m in d.received)  # noqa: E731
    asyncio.run(device.listen(stopped, timeout_s))
    return device


def all_said(store: Store) -> bool:
    """Whether every reminder was marked said (just after the answer's end, not before)."""
    return eventually(lambda: store.waiting_reminders(AGENT) == [], timeout_s=10)


def test_a_guest_neither_hears_nor_lists_nor_cancels_jordans_reminders(
    folder: Path, store: Store
) -> None:
    jordans(store, 1)
    server = serve(folder)
    try:
        hall = heard(Device(server, HALL), timeout_s=3)  # the poll runs at once on connecting
        assert hall.said() == []
        guest = {"X-Device-Id": HALL}
        for asked in ("What reminders do I have?", "Cancel all my reminders"):
            answer = httpx.post(
                f"{server.url}/chat/text", json={"text": asked}, headers=guest, timeout=30
            ).json()["response"]
            assert "insulin" not in answer and answer.startswith("You have no reminders")
        assert [r.what for r in store.waiting_reminders(AGENT)] == ["take your insulin 0"]
        kitchen = heard(Device(server, KITCHEN))
        assert kitchen.said() == ["You asked me to remind you to take your insulin 0."]
        assert all_said(store)
    finally:
        server.stop()


def test_fifteen_hundred_due_reminders_are_one_short_message(folder: Path, store: Store) -> None:
    jordans(store, 1500, "do thing")
    server = serve(folder)
    try:
        kitchen = heard(Device(server, KITCHEN), timeout_s=30)
        (message,) = kitchen.said()
        assert message.startswith("You have 1500 reminders due; the first 3 are: to do thing 0")
        assert len(message) < 200
        assert all_said(store)
    finally:
        server.stop()


def test_a_kill_while_reminders_are_said_loses_none(folder: Path, store: Store) -> None:
    jordans(store, 40)
    server = serve(folder)
    try:
        cut = Device(server, KITCHEN)
        assert asyncio.run(
            cut.listen(lambda d: bool(d.said()), 15)
        )  # the message has begun: kill it now
        server.process.kill()
        server.process.wait()
    finally:
        server.stop()
    assert len(store.waiting_reminders(AGENT)) == 40  # none marked said: none was heard
    again = serve(folder)
    try:
        kitchen = heard(Device(again, KITCHEN), timeout_s=30)
        assert kitchen.said()[0].startswith("You have 40 reminders due")
        assert all_said(store)
    finally:
        again.stop()
