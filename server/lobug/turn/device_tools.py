"""Device tools by spoken rules (issue 30, item 5): a device that offers tools over MCP (the
xiaozhi firmware: `self.audio_speaker.set_volume`, `self.screen.set_brightness`,
`self.get_device_status`; its emulator names them `set_volume`, ...) is set by what the person
says, without asking the model, which on the small embedded model cannot call tools (the
English words are `language/device_settings.py`'s, asked by `setting_asked`):

- "volume 30", "set the volume to 30 percent", "turn the brightness to 80", "max volume":
  the setting's tool is called with that value (`ToolCall`);
- "louder", "turn it up", "volume up", "quieter", "softer", "turn it down", "brighter",
  "dimmer", "mute": a step from the current value (`Nudge`), which the device's status tool
  tells (`settle`); "mute" is volume 0.

A setting is offered when a tool's name ends with `set_<setting>` and its input schema has an
integer property named after the setting (0 to 100 unless the schema says otherwise). Only
whole requests count, as for spoken memory requests (`memory/spoken_requests.py`); a request
for a setting the device does not offer is an ordinary turn.

That ordinary turn's model, where it can call tools (Ollama, OpenAI-compatible servers:
`backends/tool_calls.py`), is offered all the device's tools (`offered_tools`): their names
and schemas come from the device, so they are checked (`TOOL_NAME`, `MAX_SCHEMA_CHARS`) and a
tool that fails them is not offered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lobug.backends.base import ToolBox
from lobug.language.device_settings import SETTINGS, setting_asked
from lobug.memory.spoken_requests import request_part

STEP = 10  # how far one step ("louder", "dimmer") moves a setting
STATUS_TOOL = "get_device_status"


# A device's tool name as offered to a model; the dots of the firmware's names
# (`self.audio_speaker.set_volume`) become underscores there, since OpenAI's names allow none.
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_DESCRIPTION_CHARS = 300
MAX_SCHEMA_CHARS = 2000  # an input schema's JSON; a larger one is not offered
NO_ARGUMENTS = {"type": "object", "properties": {}}
# Runs a device's tool (by its own name): its MCP result, None when it failed or timed out.
DeviceCall = Callable[[str, dict[str, Any]], Any]


class ToolFailed(RuntimeError):
    """A device's tool answered an error, or nothing in time."""


@dataclass(frozen=True)
class Setting:
    """A setting the device offers: the tool that sets it and the range it takes."""

    name: str
    tool: str
    low: int = 0
    high: int = 100

    def clamped(self, value: int) -> int:
        return min(max(value, self.low), self.high)


@dataclass(frozen=True)
class ToolCall:
    """Call `tool` with `arguments`; `said` is the answer once it worked."""

    tool: str
    arguments: dict[str, Any]
    said: str


@dataclass(frozen=True)
class Nudge:
    """Move `setting` by `step` from its current value, which `status_tool` tells."""

    setting: Setting
    step: int
    status_tool: str | None


def offered_settings(tools: Sequence[Mapping[str, Any]]) -> dict[str, Setting]:
    """The settings among the device's MCP tools (`tools/list` entries), by name."""
    found: dict[str, Setting] = {}
    for tool in tools:
        name = tool.get("name")
        schema = tool.get("inputSchema")
        if not isinstance(name, str) or not isinstance(schema, Mapping):
            continue
        properties = schema.get("properties")
        for setting in SETTINGS:
            spec = properties.get(setting) if isinstance(properties, Mapping) else None
            if name.endswith(f"set_{setting}") and isinstance(spec, Mapping) and _is_integer(spec):
                low, high = _bounds(spec)
                found[setting] = Setting(setting, name, low, high)
    return found


def device_command(text: str, tools: Sequence[Mapping[str, Any]]) -> ToolCall | Nudge | None:
    """What `text` asks of the device's settings, or None for an ordinary turn (or a setting
    the device does not offer)."""
    said = request_part(text)
    asked = None if said is None else setting_asked(said)
    setting = None if asked is None else offered_settings(tools).get(asked.setting)
    if asked is None or setting is None:
        return None
    if asked.value is not None:
        return set_to(setting, asked.value)
    if asked.extreme is not None:
        return set_to(setting, setting.high if asked.extreme == "highest" else setting.low)
    return Nudge(setting, asked.direction * STEP, status_tool(tools))


def set_to(setting: Setting, value: int) -> ToolCall:
    chosen = setting.clamped(value)
    return ToolCall(setting.tool, {setting.name: chosen}, f"{setting.name.title()} {chosen}.")


def settle(nudge: Nudge, status: Any) -> ToolCall | None:
    """The call a `Nudge` makes, from the device's status (the status tool's result, its
    JSON text, or None when it has none): None when the current value cannot be read."""
    current = _find_number(_parsed(status), nudge.setting.name)
    if current is None:
        return None
    return set_to(nudge.setting, current + nudge.step)


def status_tool(tools: Sequence[Mapping[str, Any]]) -> str | None:
    names = [t.get("name") for t in tools]
    return next((n for n in names if isinstance(n, str) and n.endswith(STATUS_TOOL)), None)


def offered_tools(tools: Sequence[Mapping[str, Any]], call: DeviceCall) -> ToolBox | None:
    """The device's MCP tools (`tools/list` entries) as a model is offered them, run by
    `call`; None when none is acceptable. Of two tools one name for the model, the first."""
    named: dict[str, tuple[str, dict[str, Any]]] = {}
    for tool in tools:
        spec = function_spec(tool)
        if spec is not None:
            named.setdefault(spec["function"]["name"], (str(tool["name"]), spec))
    if not named:
        return None

    def run(name: str, arguments: dict[str, Any]) -> str:
        result = call(named[name][0], arguments)
        if result is None:
            raise ToolFailed("the device answered an error, or nothing in time")
        return result_text(result)

    return ToolBox(tuple(spec for _, spec in named.values()), run)


def function_spec(tool: Mapping[str, Any]) -> dict[str, Any] | None:
    """An MCP tool in function form (OpenAI's, which Ollama reads too), or None when its name
    or its input schema is not acceptable."""
    name, schema = tool.get("name"), tool.get("inputSchema", NO_ARGUMENTS)
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        return None
    if not _is_object_schema(schema) or len(json.dumps(schema)) > MAX_SCHEMA_CHARS:
        return None
    description = tool.get("description")
    function = {
        "name": name.replace(".", "_"),
        "description": description[:MAX_DESCRIPTION_CHARS] if isinstance(description, str) else "",
        "parameters": {**NO_ARGUMENTS, **schema},
    }
    return {"type": "function", "function": function}


def _is_object_schema(schema: Any) -> bool:
    """An object's schema whose properties are each described as servers (and Ollama's
    client, which refuses a whole request for one odd tool) read them."""
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return False
    properties, required = schema.get("properties", {}), schema.get("required", [])
    if not isinstance(properties, Mapping) or not _strings(required):
        return False
    return all(_is_property(p) for p in properties.values())


def _is_property(spec: Any) -> bool:
    if not isinstance(spec, Mapping):
        return False
    kind, description = spec.get("type", ""), spec.get("description", "")
    if not isinstance(kind, str) and not _strings(kind):
        return False
    return isinstance(description, str) and isinstance(spec.get("enum", []), list)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def result_text(result: Any) -> str:
    """An MCP tool result as the model reads it: its text contents, else its JSON."""
    if isinstance(result, Mapping) and isinstance(result.get("content"), list):
        texts = [c.get("text") for c in result["content"] if isinstance(c, Mapping)]
        if any(isinstance(t, str) for t in texts):
            return "\n".join(t for t in texts if isinstance(t, str))
    return json.dumps(result)


def _is_integer(spec: Mapping[str, Any]) -> bool:
    return spec.get("type") in ("integer", "number")


def _bounds(spec: Mapping[str, Any]) -> tuple[int, int]:
    low, high = spec.get("minimum", 0), spec.get("maximum", 100)
    if not isinstance(low, int | float) or not isinstance(high, int | float) or low >= high:
        return 0, 100
    return int(low), int(high)


def _parsed(status: Any) -> Any:
    """An MCP tool result's content read as JSON where it is text."""
    if isinstance(status, Mapping) and isinstance(status.get("content"), list):
        texts = [c.get("text") for c in status["content"] if isinstance(c, Mapping)]
        return [_parsed(t) for t in texts if isinstance(t, str)]
    if isinstance(status, str):
        try:
            return json.loads(status)
        except ValueError:
            return None
    return status


def _find_number(value: Any, key: str) -> int | None:
    """The first number under `key` anywhere in `value` (depth first)."""
    if isinstance(value, Mapping):
        found = value.get(key)
        if isinstance(found, int | float) and not isinstance(found, bool):
            return int(found)
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return None
    for child in children:
        number = _find_number(child, key)
        if number is not None:
            return number
    return None
