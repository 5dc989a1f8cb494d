"""The words that carry nothing, in English: one list of the sounds a person makes while
thinking, and one rule for the words a request opens with before it says anything.

- `HESITATIONS`: an utterance made only of these ("um", "hmm", "okay") is not a turn
  (`turn/decision.py`).
- `without_lead_in`: greetings, hesitations, apologies and the wake word before a request
  ("Okay, um, lo-bug, forget that") are dropped before the request is read
  (`memory/spoken_requests.py`) or a question is matched against memory (`turn/recall.py`)."""

from __future__ import annotations

import re

HESITATIONS = frozenset(
    "um umm uh uhh uh-huh hmm hm mm mhm ah oh eh er erm huh okay ok yeah yes no so you".split()
)
# What separates one word from the next in speech written down: a pause's comma, a dash, a
# full stop whisper put there, or only a space.
SEPARATOR = r"(?:\s*[,.:;!-]+\s*|\s+)"
_LEAD_IN = re.compile(
    rf"""^(?:
        (?:hey|hi|hello|ok|okay|oh|um|uh|er|so|well|no|nope|oops|sorry|actually
          |never\s?mind|please|lo[\s-]?bug)
        {SEPARATOR}
    )+""",
    re.IGNORECASE | re.VERBOSE,
)


def without_lead_in(said: str) -> str:
    """`said` without the words it opens with before it says anything."""
    return _LEAD_IN.sub("", said)


def only_hesitations(words: list[str]) -> bool:
    """Whether every one of `words` (lower case) is a hesitation."""
    return all(word in HESITATIONS for word in words)
