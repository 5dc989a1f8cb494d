"""How sure a person's words are, and whether they ask what the person has to do, in English:

- `is_hedged`: "I think", "maybe", "probably" ... in what the person said make a fact learned
  from it less sure (`memory/confidence.py`: its confidence less `HEDGE`).
- `asks_about_commitments`: "What did I promise?", "What's on my plate?", "my tasks": a
  question about promises, plans or things to do brings the person's commitments into the
  turn's facts (`memory/commitments.py`), and decides whether a look-up made ahead of the
  turn's end still fits (`turn/early.py`, through `memory/commitments.py`).
"""

from __future__ import annotations

import re

_HEDGED = re.compile(
    r"\b(?:i think|i guess|i believe|i suppose|maybe|perhaps|probably|possibly|might|"
    r"not sure|i'm not sure|kind of|sort of)\b",
    re.IGNORECASE,
)
_ASKS = re.compile(
    r"\b(promis\w*|commit\w*|agreed to|supposed to|to-?dos?|to do list|deadlines?|"
    r"remind me|on my plate|owe)\b|"
    r"\bwhat (?:do|did|should|must|was) i (?:need|have|want|plan|mean|going|say i would)\b|"
    r"\bwhat am i (?:supposed|going|meant)\b|\bmy (?:plans|tasks)\b",
    re.IGNORECASE,
)


def is_hedged(said: str) -> bool:
    """Whether the person's words hold a hedge ("I think I'm moving in May")."""
    return _HEDGED.search(said) is not None


def asks_about_commitments(text: str) -> bool:
    """Whether `text` asks what the user promised or has to do."""
    return _ASKS.search(text) is not None
