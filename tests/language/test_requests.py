"""How a person asks to be forgotten and says yes (`language/requests.py`)."""

from __future__ import annotations

import pytest

from lobug.language.requests import asks_to_forget_me, confirms


@pytest.mark.parametrize(
    "said",
    [
        "Forget everything about me.",
        "Hey Lo-Bug, please erase all you know about me",
        "Could you delete me, thanks!",
        "Forget everything about me. Thank you.",  # as whisper writes a pause
    ],
)
def test_asking_to_be_forgotten(said: str) -> None:
    assert asks_to_forget_me(said)


@pytest.mark.parametrize(
    "said", ["Forget my dentist appointment.", "Don't forget me.", "Forget everything about Sam."]
)
def test_other_sentences_ask_nothing(said: str) -> None:
    assert not asks_to_forget_me(said)


@pytest.mark.parametrize(
    "said",
    ["Yes.", "Yes, forget me.", "Okay, go ahead", "Yes, please forget everything. Thank you."],
)
def test_saying_yes(said: str) -> None:
    assert confirms(said)


@pytest.mark.parametrize("said", ["No.", "Yes, but not my notes.", "What is my name?"])
def test_anything_else_is_no_yes(said: str) -> None:
    assert not confirms(said)
