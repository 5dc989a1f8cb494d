"""What a fact's confidence (0-1) means: how sure Lo-Bug is that the person holds it true, set
by where the fact came from, by this one rule (MEMORY.md, "Richer facts"):

- 1.0: typed by a person (REST, dashboard, CLI, MCP): their exact words.
- 0.9: said to the assistant as a correction ("no, my dog is called Biscuit"): the person's
  own words, heard through speech recognition.
- 0.7: the person's first-person statement in a conversation ("I live in Leeds"), rewritten
  in the third person without a model.
- 0.6: written by the model from the conversation and grounded: its names, numbers and most
  of its words occur in what the person said.
- 0.5: the person's statement about someone they named before ("Leo is seven"), as said.

A hedge in what the person said ("I think", "maybe", "probably": `language/statements.py`'s
`is_hedged`) takes `HEDGE` off; a confidence the model states itself can only lower the
rule's (a small model's number means little). Facts under `LOBUG_MIN_FACT_CONFIDENCE` (0.3)
are not stored.
"""

from __future__ import annotations

from typing import Any

from lobug.language.statements import is_hedged
from lobug.store.models import VOICE

TYPED = 1.0
CORRECTED = 0.9
SAID = 0.7
EXTRACTED = 0.6
SAID_ABOUT_OTHERS = 0.5
HEDGE = 0.2


def of_statement(said: str, *, about_user: bool = True) -> float:
    """A fact that is the person's own statement, rewritten without a model."""
    base = SAID if about_user else SAID_ABOUT_OTHERS
    return _less_if_hedged(base, said)


def of_extraction(said: str, stated: Any = None) -> float:
    """A fact the model wrote and that is grounded in `said` (the person's sentence it came
    from); `stated`, the model's own confidence, only lowers it."""
    rule = _less_if_hedged(EXTRACTED, said)
    if isinstance(stated, bool) or not isinstance(stated, int | float):
        return rule
    return round(min(rule, max(0.0, float(stated))), 2)


def of_person(actor: str) -> float:
    """A fact a person gave: typed (`TYPED`), or said to a device (`CORRECTED`)."""
    return CORRECTED if actor == VOICE else TYPED


def _less_if_hedged(base: float, said: str) -> float:
    return round(base - HEDGE, 2) if is_hedged(said) else base
