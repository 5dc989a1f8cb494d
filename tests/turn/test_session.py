"""A device as a surface sees it (`turn/session.py`): every request a surface makes about one
device reaches the state the turn keeps for it, and two sessions of one device share it."""

from __future__ import annotations

import asyncio

import pytest

from lobug.backends.ahead import AnswersAhead
from lobug.backends.base import ChatMessage, ToolBox
from lobug.turn.conversation import SensorReading, new_device_state
from lobug.turn.devices import DeviceBusy, DeviceStates
from lobug.turn.session import DeviceSession
from tests.fakes import FakeChat
from tests.polling import eventually

ASKED: list[ChatMessage] = [{"role": "user", "content": "What is the capital of France?"}]


def sessions() -> tuple[DeviceStates, AnswersAhead, FakeChat]:
    chat = FakeChat()
    devices = DeviceStates(4, lambda device: new_device_state(device, "lobug", 4, []))
    return devices, AnswersAhead(chat), chat


def test_two_sessions_of_a_device_share_its_state_and_tools() -> None:
    devices, ahead, _ = sessions()
    kitchen = DeviceSession("kitchen", devices, ahead)
    again = DeviceSession("kitchen", devices, ahead)
    box = ToolBox((), lambda name, arguments: "")
    kitchen.offer_tools(box)
    kitchen.update_sensors(SensorReading(orientation="face up"))
    assert again.state() is devices.get("kitchen")
    assert again.state().tools is box
    reading = again.state().sensors
    assert reading is not None and reading.orientation == "face up"
    again.withdraw_tools(box)
    assert kitchen.state().tools is None
    assert DeviceSession("hall", devices, ahead).state().tools is None


def test_a_sessions_turns_wait_for_each_other_and_the_third_waiting_is_refused() -> None:
    devices, ahead, _ = sessions()
    kitchen = DeviceSession("kitchen", devices, ahead)

    async def run() -> None:
        first = await kitchen.admit()
        waiting = [asyncio.create_task(kitchen.admit()) for _ in range(2)]
        await asyncio.sleep(0)
        with pytest.raises(DeviceBusy):
            await kitchen.admit()
        async with DeviceSession("hall", devices, ahead).queued():  # not held up
            pass
        first.leave()
        second = await waiting[0]
        assert not waiting[1].done()
        second.leave()
        (await waiting[1]).leave()
        assert devices.gates_open() == 0

    asyncio.run(run())


def test_speaking_again_drops_the_answer_begun_in_the_pause() -> None:
    devices, ahead, chat = sessions()
    chat.piece_delay_s = 0.05
    chat.enqueue("One two three four five six seven eight nine ten.", "Paris.")
    ahead.start("desk", ASKED, max_tokens=64, temperature=0.5)
    assert eventually(lambda: chat.streamed >= 1)
    DeviceSession("desk", devices, ahead).spoke_again()
    said = "".join(ahead.stream("desk", ASKED, max_tokens=64, temperature=0.5))
    assert said == "Paris."  # not the answer begun before the person spoke on
    assert len(chat.requests) == 2
