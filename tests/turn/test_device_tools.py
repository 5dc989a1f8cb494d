"""Device tools (issue 30, item 5): by spoken rules, what a person says sets the settings a
device offers over MCP, with the xiaozhi firmware's tool names and its emulator's; for a model
that calls tools, the device's tools in function form, their untrusted names and schemas
checked."""

from __future__ import annotations

from typing import Any

import pytest

from lobug.turn.device_tools import (
    MAX_DESCRIPTION_CHARS,
    MAX_SCHEMA_CHARS,
    Nudge,
    ToolCall,
    ToolFailed,
    device_command,
    function_spec,
    offered_settings,
    offered_tools,
    result_text,
    settle,
)

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


def test_a_devices_tools_are_offered_in_function_form_and_called_by_their_own_names() -> None:
    called: list[tuple[str, dict[str, Any]]] = []

    def call(name: str, arguments: dict[str, Any]) -> Any:
        called.append((name, arguments))
        return None if arguments.get("volume") == 7 else STATUS

    box = offered_tools(FIRMWARE_TOOLS, call)
    assert box is not None
    assert [spec["function"]["name"] for spec in box.specs] == [
        "self_get_device_status",  # OpenAI's names allow no dots
        "self_audio_speaker_set_volume",
        "self_screen_set_brightness",
    ]
    volume = box.specs[1]
    assert volume["type"] == "function"
    assert volume["function"]["parameters"] == FIRMWARE_TOOLS[1]["inputSchema"]
    assert box.call("self_audio_speaker_set_volume", {"volume": 30}) == STATUS["content"][0]["text"]
    assert called == [("self.audio_speaker.set_volume", {"volume": 30})]
    with pytest.raises(ToolFailed):  # an error, or no answer in time
        box.call("self_audio_speaker_set_volume", {"volume": 7})


@pytest.mark.parametrize(
    "tool",
    [
        {"name": "rm -rf /"},
        {"name": ""},
        {"name": "x" * 65},
        {"name": 3},
        {"name": "set_volume", "inputSchema": {"type": "array"}},
        {"name": "set_volume", "inputSchema": "anything"},
        {"name": "set_volume", "inputSchema": {"description": "x" * MAX_SCHEMA_CHARS}},
        {"name": "set_volume", "inputSchema": {"properties": {"volume": 5}}},
        {"name": "set_volume", "inputSchema": {"properties": {"volume": {"type": 5}}}},
        {"name": "set_volume", "inputSchema": {"properties": {"v": {"description": 5}}}},
        {"name": "set_volume", "inputSchema": {"properties": {"v": {"enum": "ab"}}}},
        {"name": "set_volume", "inputSchema": {"properties": [], "required": []}},
        {"name": "set_volume", "inputSchema": {"required": "volume"}},
    ],
)
def test_a_tool_with_a_bad_name_or_schema_is_not_offered(tool: dict[str, Any]) -> None:
    assert function_spec(tool) is None
    assert offered_tools([tool], lambda name, arguments: STATUS) is None


def test_every_tool_the_firmware_and_the_emulator_offer_is_acceptable() -> None:
    import ollama  # whose client refuses a whole request for one tool it cannot read
    from xiaozhi_sdk.utils import mcp_tool

    listed = [v for v in vars(mcp_tool).values() if isinstance(v, dict) and "inputSchema" in v]
    assert len(listed) >= 10
    for tool in [*FIRMWARE_TOOLS, *EMULATOR_TOOLS, *listed]:
        spec = function_spec(tool)
        assert spec is not None, tool
        ollama.Tool.model_validate(spec)


def test_a_tools_description_is_capped_and_its_schema_is_an_object() -> None:
    spec = function_spec({"name": "self.reboot", "description": "y" * 5000})
    assert spec is not None
    assert len(spec["function"]["description"]) == MAX_DESCRIPTION_CHARS
    assert spec["function"]["parameters"] == {"type": "object", "properties": {}}
    same_name = [{"name": "a.b", "description": "first"}, {"name": "a_b", "description": "2nd"}]
    box = offered_tools(same_name, lambda name, arguments: STATUS)
    assert box is not None and [s["function"]["description"] for s in box.specs] == ["first"]


def test_a_tools_result_is_its_text_for_the_model() -> None:
    assert result_text({"content": [{"type": "text", "text": "true"}], "isError": False}) == "true"
    assert result_text({"content": [{"type": "image", "data": "..."}]}) == (
        '{"content": [{"type": "image", "data": "..."}]}'
    )
