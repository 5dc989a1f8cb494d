"""How a person, in English, asks a device to change one of its settings (issue 30, item 5):
`turn/device_tools.py` asks `setting_asked` of a whole spoken request (`request_part`) and sets
the device's volume or brightness by the answer, without asking the model.

- a value: "volume 30", "set the volume to 30 percent", "turn the brightness to 80";
- the highest value: "max volume", "volume to full"; the lowest: "mute" (volume 0);
- a step from the current value: "louder", "turn it up", "volume up" (up); "quieter",
  "softer", "turn it down", "too loud" (down); "brighter" (up); "dimmer", "darker" (down).

How far a step goes, and what the device offers, are the device's (`device_tools.STEP`,
its tools' schemas); these are only the words."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# The settings a person can name (a device offers one by a tool `...set_<setting>`).
SETTINGS = ("volume", "brightness")
_NOUN = r"(?P<setting>volume|brightness)"
_VALUE = r"(?P<value>\d{1,3})(?:\s*(?:%|percent))?"
_FULL = r"(?:max(?:imum)?|full)"
# "set the volume to 30", "volume 30", "max volume", "volume to full" (lower case)
_ABSOLUTE = tuple(
    re.compile(pattern)
    for pattern in (
        rf"(?:set|turn|put|change)\s+(?:the\s+)?{_NOUN}\s+(?:to|at)\s+(?:{_VALUE}|{_FULL})",
        rf"{_NOUN}\s+(?:to\s+|at\s+)?(?:{_VALUE}|{_FULL})",
        rf"{_FULL}\s+{_NOUN}",
    )
)
# A change without a value (lower case): the setting, and which way (0: to its lowest).
_NUDGES: tuple[tuple[re.Pattern[str], str, int], ...] = (
    (re.compile(r"mute|mute\s+yourself|volume\s+(?:to\s+)?(?:zero|off)"), "volume", 0),
    (
        re.compile(
            r"(?:a\s+(?:bit|little)\s+|much\s+)?louder(?:\s+please)?|(?:turn|speak)\s+(?:it\s+)?up"
            r"|(?:turn\s+)?(?:the\s+)?volume\s+up|turn\s+up\s+the\s+volume"
        ),
        "volume",
        1,
    ),
    (
        re.compile(
            r"(?:a\s+(?:bit|little)\s+)?(?:quieter|softer)|turn\s+(?:it\s+)?down|not\s+so\s+loud"
            r"|(?:turn\s+)?(?:the\s+)?volume\s+down|turn\s+down\s+the\s+volume|too\s+loud"
        ),
        "volume",
        -1,
    ),
    (
        re.compile(
            r"(?:a\s+(?:bit|little)\s+)?brighter|(?:turn\s+)?(?:the\s+)?brightness\s+up"
            r"|turn\s+up\s+the\s+brightness"
        ),
        "brightness",
        1,
    ),
    (
        re.compile(
            r"(?:a\s+(?:bit|little)\s+)?(?:dimmer|darker)|dim\s+the\s+screen"
            r"|(?:turn\s+)?(?:the\s+)?brightness\s+down|turn\s+down\s+the\s+brightness"
        ),
        "brightness",
        -1,
    ),
)


@dataclass(frozen=True)
class SettingAsked:
    """What a request asks of `setting` (one of `SETTINGS`): the `value` said ("volume 30"),
    else its `extreme` ("max volume": highest, "mute": lowest), else a step in `direction`
    from its current value ("louder": 1, "quieter": -1)."""

    setting: str
    value: int | None = None
    extreme: Literal["highest", "lowest"] | None = None
    direction: int = 0


def setting_asked(text: str) -> SettingAsked | None:
    """What the whole of `text` asks of a device setting, or None when it asks none
    ("volume 30" -> volume to 30; "max volume" -> volume highest; "mute" -> volume lowest;
    "a bit louder" -> volume one step up)."""
    said = text.lower()
    for pattern in _ABSOLUTE:
        match = pattern.fullmatch(said)
        if match is not None:
            value = match.groupdict().get("value")
            if value is None:
                return SettingAsked(match["setting"], extreme="highest")
            return SettingAsked(match["setting"], value=int(value))
    for pattern, setting, direction in _NUDGES:
        if pattern.fullmatch(said):
            if direction == 0:
                return SettingAsked(setting, extreme="lowest")
            return SettingAsked(setting, direction=direction)
    return None
