"""Device tools by spoken rules (issue 30, item 5): what a person says sets the settings a
device offers over MCP, with the xiaozhi firmware's tool names and its emulator's."""

from __future__ import annotations

from typing import Any

import pytest

from lobug.device_tools import Nudge, ToolCall, device_command, offered_settings, settle

FIRMWARE_TOOLS: list[dict[str, Any]] = [
    {"name": "self.get_device_status", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "self.audio_speaker.set_volume",
        "inputSchema": {
            "type": "object",
            "properties": {"volume": {"type": "integer", "minimum": 0, "maximum": 100}},
        },
    },
    {
        "name": "self.screen.set_brightness",
        "inputSchema": {"type": "object", "properties": {"brightness": {"type": "integer"}}},
    },
]
EMULATOR_TOOLS: list[dict[str, Any]] = [
    {"name": "get_device_status", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "set_volume",
        "inputSchema": {
            "type": "object",
            "properties": {"volume": {"type": "integer", "minimum": 0, "maximum": 100}},
        },
    },
]
STATUS = {
    "content": [
        {"type": "text", "text": '{"audio_speaker": {"volume": 95}, "screen": {"brightness": 40}}'}
    ]
}


@pytest.mark.parametrize(
    ("said", "tool", "value"),
    [
        ("volume 30", "self.audio_speaker.set_volume", 30),
        ("Set the volume to 30 percent.", "self.audio_speaker.set_volume", 30),
        ("Hey Lo-Bug, turn the brightness to 80 please", "self.screen.set_brightness", 80),
        ("max volume", "self.audio_speaker.set_volume", 100),
        ("brightness 150", "self.screen.set_brightness", 100),  # held to the range
        ("mute", "self.audio_speaker.set_volume", 0),
    ],
)
def test_a_value_said_calls_the_setting_tool(said: str, tool: str, value: int) -> None:
    call = device_command(said, FIRMWARE_TOOLS)
    assert isinstance(call, ToolCall)
    assert (call.tool, list(call.arguments.values())) == (tool, [value])


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("Louder!", 100),
        ("turn it down", 85),
        ("a bit quieter", 85),
        ("brighter", 50),
        ("dim the screen", 30),
    ],
)
def test_a_step_starts_from_the_status_the_device_gives(said: str, expected: int) -> None:
    nudge = device_command(said, FIRMWARE_TOOLS)
    assert isinstance(nudge, Nudge) and nudge.status_tool == "self.get_device_status"
    call = settle(nudge, STATUS)
    assert call is not None and list(call.arguments.values()) == [expected]


def test_no_status_no_step_and_no_tool_no_command() -> None:
    nudge = device_command("louder", EMULATOR_TOOLS)
    assert isinstance(nudge, Nudge)
    assert settle(nudge, None) is None
    assert settle(nudge, {"content": [{"type": "text", "text": "not json"}]}) is None
    assert device_command("brightness 50", EMULATOR_TOOLS) is None  # not offered
    assert device_command("volume 30", []) is None


@pytest.mark.parametrize(
    "said",
    ["what is the volume?", "the volume was 30 yesterday", "I like it louder", "mute the tv"],
)
def test_ordinary_turns_are_not_commands(said: str) -> None:
    assert device_command(said, FIRMWARE_TOOLS) is None


def test_a_tool_without_an_integer_setting_is_not_one() -> None:
    odd = [{"name": "set_volume", "inputSchema": {"properties": {"volume": {"type": "string"}}}}]
    assert offered_settings(odd) == {}
    assert offered_settings([{"name": 3}, {"inputSchema": []}]) == {}
