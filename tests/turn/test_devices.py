"""The bounded map of device states (least recently used dropped, never mid-turn)."""

from __future__ import annotations

import asyncio

import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.backends.base import ToolBox
from lobug.config import Settings
from lobug.turn.conversation import DeviceState, new_device_state
from lobug.turn.devices import DeviceBusy, DeviceStates
from tests.fakes import FakeChat, FakeEmbedder


def states(limit: int) -> tuple[DeviceStates, list[str]]:
    """A map whose warm-ups are recorded."""
    warmed: list[str] = []

    def warm(device_id: str) -> DeviceState:
        warmed.append(device_id)
        return new_device_state(device_id, "lobug", 4, [])

    return DeviceStates(limit, warm), warmed


def test_the_least_recently_used_device_is_dropped_and_warmed_again() -> None:
    devices, warmed = states(limit=2)
    devices.get("a")
    devices.get("b")
    devices.get("a")  # b is now the least recently used
    devices.get("c")
    assert ("a" in devices, "b" in devices, "c" in devices) == (True, False, True)
    devices.get("b")
    assert warmed == ["a", "b", "c", "b"]
    assert len(devices) == 2


def test_a_device_in_the_middle_of_a_turn_is_never_dropped() -> None:
    devices, _ = states(limit=1)
    with devices.turn("busy") as busy:
        devices.get("other")
        assert "busy" in devices and len(devices) == 2  # over the limit while busy
        busy.remember("user", "still here")
    devices.get("other")
    assert "busy" not in devices and len(devices) == 1


def test_a_state_is_lent_between_turns_only() -> None:
    devices, _ = states(limit=2)
    with devices.between_turns("desk") as idle:
        assert idle is devices.get("desk")
        assert idle is not None and idle.lock.locked()  # no turn starts meanwhile
    with devices.turn("desk"), devices.between_turns("desk") as during:
        assert during is None
    with devices.between_turns("desk") as after:
        assert after is not None
    assert not devices.get("desk").lock.locked()


def test_an_evicted_device_re_warms_its_working_memory_from_the_log(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    one = settings.with_overrides(max_devices=1)
    with TestClient(create_app(one, Backends(fake_chat, fake_embedder))) as client:
        fake_chat.enqueue("Hi Alex.")
        client.post("/chat/text", json={"text": "I am Alex"}, headers={"X-Device-Id": "desk"})
        client.post("/chat/text", json={"text": "hello"}, headers={"X-Device-Id": "kitchen"})
        assistant = client.app.state.services.assistant  # type: ignore[attr-defined]
        assert "desk" not in assistant._devices  # evicted: its state is not kept
        client.post("/chat/text", json={"text": "Who am I?"}, headers={"X-Device-Id": "desk"})
    sent = fake_chat.chat_requests()[-1]
    assert [m["content"] for m in sent[1:]] == ["I am Alex", "Hi Alex.", "Who am I?"]


def test_the_tools_a_device_offers_outlive_its_evicted_state_until_withdrawn() -> None:
    devices, _ = states(limit=1)
    box = ToolBox((), lambda name, arguments: "true")
    devices.get("speaker")
    devices.offer_tools("speaker", box)
    assert devices.get("speaker").tools is box
    devices.get("other")  # the speaker's state is dropped...
    assert "speaker" not in devices
    assert devices.get("speaker").tools is box  # ...and warmed again with its tools
    newer = ToolBox((), lambda name, arguments: "false")
    devices.offer_tools("speaker", newer)  # it connected again
    devices.withdraw_tools("speaker", box)  # the old connection leaves: the new one stays
    assert devices.get("speaker").tools is newer
    devices.withdraw_tools("speaker", newer)
    assert devices.get("speaker").tools is None
    assert devices.get("other").tools is None


# ------------------------------------------------------------------ waiting for a device's turn


def test_a_devices_turns_wait_in_order_on_the_loop_and_a_flood_is_refused() -> None:
    devices, _ = states(limit=4)
    order: list[str] = []

    async def turn(name: str, hold: asyncio.Event) -> None:
        async with devices.queued("kitchen"):
            order.append(name)
            await hold.wait()

    async def scenario() -> list[str]:
        holds = [asyncio.Event() for _ in range(3)]
        turns = [asyncio.create_task(turn(str(n), holds[n])) for n in range(3)]
        await asyncio.sleep(0.01)
        with pytest.raises(DeviceBusy, match="2 turns waiting"):
            await devices.admit("kitchen")  # one in, two waiting: the fourth is refused
        async with devices.queued("hall"):  # another device is not held up
            order.append("hall")
        for hold in holds:
            hold.set()
        await asyncio.gather(*turns)
        return order

    assert asyncio.run(scenario()) == ["0", "hall", "1", "2"]
    assert devices.gates_open() == 0  # an idle device keeps no gate


def test_a_waiting_turn_cancelled_frees_its_place_and_passes_the_device_on() -> None:
    devices = DeviceStates(4, lambda d: new_device_state(d, "lobug", 4, []), max_waiting=1)

    async def scenario() -> bool:
        first = await devices.admit("kitchen")
        waiting = asyncio.create_task(devices.admit("kitchen"))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        second = asyncio.create_task(devices.admit("kitchen"))  # its place is free again
        await asyncio.sleep(0.01)
        first.leave()
        first.leave()  # twice is once
        (await second).leave()
        return devices.gates_open() == 0

    assert asyncio.run(scenario())


def test_a_turn_let_in_from_a_worker_thread_wakes_the_next_on_its_loop() -> None:
    devices, _ = states(limit=4)

    async def scenario() -> None:
        first = await devices.admit("kitchen")
        second = asyncio.create_task(devices.admit("kitchen"))
        await asyncio.sleep(0.01)
        await asyncio.to_thread(first.leave)
        (await asyncio.wait_for(second, 5)).leave()

    asyncio.run(scenario())


def test_one_rule_drops_an_idle_device_and_what_is_kept_for_it_elsewhere() -> None:
    now = [0.0]
    forgotten: list[str] = []
    devices = DeviceStates(
        8, lambda d: new_device_state(d, "lobug", 4, []), idle_s=60, clock=lambda: now[0]
    )
    devices.keep.slot("noted", forgotten.append)
    for device in ("kitchen", "office", "hall"):
        devices.keep.slot("noted").put(device, device)  # kept for it by another part
    devices.get("kitchen")
    with devices.turn("office"):
        now[0] = 61
        devices.get("hall")  # kitchen idle for a minute: dropped; office is mid-turn
        assert ("kitchen" in devices, "office" in devices) == (False, True)
        assert forgotten == ["kitchen"]
    now[0] = 200
    assert devices.sweep() == ["office", "hall"]
    assert forgotten == ["kitchen", "office", "hall"] and len(devices) == 0
