"""How a person asks a device to change a setting (`language/device_settings.py`): the
words only; what the device offers and how far a step goes are `turn/device_tools.py`'s."""

from __future__ import annotations

import pytest

from lobug.language.device_settings import SETTINGS, SettingAsked, setting_asked


@pytest.mark.parametrize(
    ("said", "setting", "value"),
    [
        ("volume 30", "volume", 30),
        ("Set the volume to 30 percent", "volume", 30),
        ("turn the brightness to 80", "brightness", 80),
        ("brightness at 150%", "brightness", 150),  # the device's range holds it, not the words
        ("volume to 5", "volume", 5),
    ],
)
def test_a_value_said(said: str, setting: str, value: int) -> None:
    assert setting_asked(said) == SettingAsked(setting, value=value)


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("max volume", SettingAsked("volume", extreme="highest")),
        ("Maximum brightness", SettingAsked("brightness", extreme="highest")),
        ("volume to full", SettingAsked("volume", extreme="highest")),
        ("mute", SettingAsked("volume", extreme="lowest")),
        ("volume off", SettingAsked("volume", extreme="lowest")),
        ("volume to zero", SettingAsked("volume", extreme="lowest")),
    ],
)
def test_the_highest_or_the_lowest(said: str, asked: SettingAsked) -> None:
    assert setting_asked(said) == asked


@pytest.mark.parametrize(
    ("said", "setting", "direction"),
    [
        ("louder", "volume", 1),
        ("a bit louder please", "volume", 1),
        ("turn it up", "volume", 1),
        ("turn up the volume", "volume", 1),
        ("a little quieter", "volume", -1),
        ("too loud", "volume", -1),
        ("turn it down", "volume", -1),
        ("brighter", "brightness", 1),
        ("the brightness up", "brightness", 1),
        ("dim the screen", "brightness", -1),
        ("darker", "brightness", -1),
    ],
)
def test_a_step_up_or_down(said: str, setting: str, direction: int) -> None:
    assert setting_asked(said) == SettingAsked(setting, direction=direction)


@pytest.mark.parametrize(
    "said",
    [
        "what is the volume?",
        "the volume was 30 yesterday",
        "I like it louder",
        "mute the tv",
        "volume 1000",  # at most three digits
        "louder!",  # punctuation is the caller's to strip (`request_part`)
        "",
    ],
)
def test_anything_else_asks_nothing(said: str) -> None:
    assert setting_asked(said) is None


def test_every_setting_can_be_named() -> None:
    asked = [setting_asked(f"{name} 10") for name in SETTINGS]
    assert asked == [SettingAsked(name, value=10) for name in SETTINGS]
