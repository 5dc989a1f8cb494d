"""The bounded map of device states (least recently used dropped, never mid-turn)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.backends import Backends
from lobug.backends.base import ToolBox
from lobug.config import Settings
from lobug.conversation import DeviceState, new_device_state
from lobug.devices import DeviceStates
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
        assert "desk" not in assistant.devices
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
