from __future__ import annotations

import pytest

from lobug.turn.decision import parse_reply


@pytest.mark.parametrize(
    ("raw", "action", "text"),
    [
        ("Hello there.", "respond", "Hello there."),
        ("  [IGNORE]", "ignore", ""),
        ("[ignore] whatever follows", "ignore", ""),
        ("[REACT] *wiggles*", "react", "*wiggles*"),
        ("[REACT]", "react", ""),
        ("   ", "ignore", ""),
        ("I will [IGNORE] nothing", "respond", "I will [IGNORE] nothing"),
    ],
)
def test_prefix_sets_action_and_never_reaches_the_text(raw: str, action: str, text: str) -> None:
    decision = parse_reply(raw)
    assert (decision.action, decision.text) == (action, text)
