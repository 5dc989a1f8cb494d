"""How an English sentence says no: "not", "never", "nobody", "doesn't", "dont".

`memory/dream.py` asks `negated` of two near-duplicate facts: a fact and its negation ("has a
dog" / "does not have a dog") are a contradiction the newer settles, not a merge."""

from __future__ import annotations

import re

# The words of a negation, the contracted ones with or without their apostrophe ("don't",
# "dont", "won't" as "wo" + "n't", "can't" as "ca" + "n't").
NEGATION = re.compile(
    r"\b(?:not|no|never|nobody|nothing|none|neither|nor|cannot|"
    r"(?:do|does|did|is|was|are|were|wo|ca|could|would|should|has|have|had|must|need)n['’]?t)\b"
)


def negated(text: str) -> bool:
    """Whether `text` says no, not, never or the like ("doesn't", "dont")."""
    return NEGATION.search(text.lower()) is not None
