"""How a person, in English, asks the memory to forget them and says yes to a request that
waits for it (`memory/people.py`: "forget everything about me", then "yes, forget me"), and
the greetings a spoken request may open with."""

from __future__ import annotations

import re

# "Hi", "okay", "hey Lo-Bug," before a request or a claim: not part of it.
OPENERS = r"(?:(?:hi|hey|hello|ok|okay|oh|so|well)[,!.]?\s+)*(?:lo-?bug[,!.]?\s+)?"
_POLITE = r"(?:please|now|thanks|thank you)?[.!]?"
_FORGET_ME = re.compile(
    rf"^{OPENERS}(?:(?:can|could|would|will) you\s+)?(?:please\s+)?"
    r"(?:forget|erase|delete)\s+(?:me|everything (?:you know )?about me|all about me|"
    rf"all (?:you know )?about me|everything of mine)[\s,.!]*{_POLITE}\??$",
    re.IGNORECASE,
)
_CONFIRM = re.compile(
    rf"^{OPENERS}(?:yes|yeah|yep|confirm|do it|go ahead)"
    rf"(?:[,.!]?\s*(?:please\s+)?(?:forget|erase|delete) (?:me|everything))?[\s,.!]*{_POLITE}$",
    re.IGNORECASE,
)


def asks_to_forget_me(text: str) -> bool:
    """ "Forget everything about me", "forget me", "please erase all you know about me"."""
    return _FORGET_ME.match(text.strip()) is not None


def confirms(text: str) -> bool:
    """ "Yes", "yes, forget me", "confirm", "go ahead": a pending request's confirmation."""
    return _CONFIRM.match(text.strip()) is not None
