"""Should Lo-Bug answer? The model may choose by starting its reply with [IGNORE] or [REACT]."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Action = Literal["respond", "ignore", "react"]

_PREFIX = re.compile(r"^\s*\[(IGNORE|REACT)\]\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Decision:
    action: Action
    text: str


def parse_reply(raw: str) -> Decision:
    """Split an action prefix off the model's reply; the prefix never reaches text or speech."""
    match = _PREFIX.match(raw)
    if match is None:
        text = raw.strip()
        return Decision("respond" if text else "ignore", text)
    action: Action = "ignore" if match.group(1).upper() == "IGNORE" else "react"
    rest = _PREFIX.sub("", raw[match.end() :]).strip()
    return Decision(action, rest if action == "react" else "")
