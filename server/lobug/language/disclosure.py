"""Which sentences a person says about themselves, and what kind of fact each is, in English:
the word rules behind the facts kept without a model (`memory/disclosure.py`: "I live in
Leeds", "my sister is a nurse" -> "The user lives in Leeds", ...), whose types and past tense
`memory/extraction.py` reads too (through `memory/disclosure.py`).

- `speaks_of_self`: "I", "my", "we", "our" ... make a sentence one about the person.
- `opens_as_request` / `opens_as_chitchat`: a sentence begun with "can", "what", "remind" ...
  asks something, one begun with "thanks", "cool", "sure" ... says nothing to keep.
- `without_aside`: "By the way, my name is Marta": the words said in passing before a
  statement are no part of it.
- `addresses_you`: "you", "your": words to the assistant, not about someone the person named.
- `has_words_of(kind, sentence)`: the words that give a statement its type (`TYPE_RULES`);
  `goes_to_a_place`: "we are going to Norway" is a plan, not a promise.
- `is_past`: "I went", "we visited": something done.
"""

from __future__ import annotations

import re

_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself)\b", re.IGNORECASE)
_WE = re.compile(r"\b(we|we're|we've|our|ours|us)\b", re.IGNORECASE)
# Words said in passing before a statement ("By the way, my name is Marta"): no part of it.
_ASIDE = re.compile(
    r"^(?:(?:by the way|btw|actually|anyway|also|oh|ah|well|so|and|but|plus|ok|okay|um|uh)"
    r"\b[,;:]?\s*)+",
    re.IGNORECASE,
)
_REQUEST_START = re.compile(
    r"^(can|could|would|will|please|what|when|where|who|why|how|which|do|does|did|is|are|"
    r"should|tell|let|remind|set|play|turn|show|hey|hi|hello|ok|okay)\b",
    re.IGNORECASE,
)
_CHITCHAT_START = re.compile(
    r"^(thanks|thank|that|this|it|good|great|nice|cool|wow|sorry|bye|goodbye|yes|no|sure|"
    r"oh|ah|well|haha|lol)\b",
    re.IGNORECASE,
)
_ADDRESSED = re.compile(r"\b(you|you're|your|yours)\b", re.IGNORECASE)


# A statement's type (seed 001), by its words; the first rule that holds wins: who the user
# is ("my name is", "I was born"), a commitment ("I'll call Anna"), a constraint ("I can't eat
# nuts"), a habit, which is a trait ("I swim every Saturday"), an event (a plan with a time to
# come, "On Friday I'm hiking", or something done at a time said, "I went to Paris last
# year"), a preference ("I love jazz"), a trait (skills, fears, "I'm learning the piano");
# else identity. An event has no words of its own: its times are `memory/when.py`'s.
TYPE_RULES = (
    ("identity", r"i was born|i'm called|i am called|my name is|my birthday"),
    (
        "commitment",
        r"i'll|i will|i promised?|i have promised|i'm going to|i am going to|i have to|"
        r"i need to|i must(?! not)|i plan to|i intend to|i'm supposed to|i am supposed to|"
        r"i agreed to|i've agreed to|i owe|i mean to",
    ),
    (
        "constraint",
        r"i can't(?! stand)|i cannot|i can not|i must not|i mustn't|i'm allergic|i am allergic|"
        r"allergic to|i don't eat|i do not eat|i never eat|i never drink|i'm not allowed|"
        r"i am not allowed|my budget|vegetarian|vegan|gluten|lactose|intolerant|i'm diabetic|"
        r"i am diabetic",
    ),
    (
        "habit",
        r"every|each (?:day|morning|evening|night|week|weekend|month|year)|usually|always|often|"
        r"sometimes|rarely|normally|regularly|daily|weekly|most days|"
        r"on (?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends)|"
        r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday) (?:to|through|till)",
    ),
    ("event", None),
    (
        "preference",
        r"i (?:really |also |just )?(?:like|love|hate|prefer|enjoy|dislike|adore)|"
        r"i (?:do not|don't|dont|didn't|did not) (?:really )?(?:like|love|enjoy)|"
        r"i can't stand|my favou?rite|i'm (?:a )?(?:big |huge )?fan of|i'm into",
    ),
    (
        "trait",
        r"i speak|i can (?:speak|play|cook|swim|drive|code|sing|dance)|i know how to|"
        r"i(?:'m| am) (?:learning|good at|bad at|afraid|scared|terrified|nervous|shy|"
        r"an introvert|an extrovert|a night owl|an early bird)|i play the",
    ),
)
STATEMENT_TYPES = tuple(kind for kind, _ in TYPE_RULES)  # in the order the rules are tried
_KINDS = {
    kind: re.compile(rf"\b(?:{words})\b", re.IGNORECASE)
    for kind, words in TYPE_RULES
    if words is not None
}
_GOING_TO_A_PLACE = re.compile(
    r"\b(?:[Ii]'m|[Ii] am|[Ww]e're|[Ww]e are) going to (?:[A-Z]|the |a )"
)
_PAST = re.compile(
    r"\b(?:i|we)\s+(?:(?:just|already|also|recently|finally|once)\s+)?"
    r"(?:was|were|went|had|did|met|saw|got|came|left|made|took|bought|ran|won|lost|found|"
    r"gave|spent|ate|drank|flew|wrote|began|became|grew|heard|held|paid|sold|sent|told|"
    r"(?!(?:need|feed|bleed|breed|speed|proceed|succeed|exceed|embed|shed|wed)\b)"
    r"[a-z]{2,}ed)\b",
    re.IGNORECASE,
)


def speaks_of_self(sentence: str) -> bool:
    """Whether `sentence` speaks of the person or their own ("I", "my", "we", "our")."""
    return bool(_FIRST_PERSON.search(sentence) or _WE.search(sentence))


def opens_as_request(sentence: str) -> bool:
    """Whether `sentence` opens as a question or a request ("Can you ...", "What is ...",
    "Remind me ...", "Hey ...")."""
    return _REQUEST_START.match(sentence) is not None


def opens_as_chitchat(sentence: str) -> bool:
    """Whether `sentence` opens as chitchat ("Thanks ...", "That's great", "Sure")."""
    return _CHITCHAT_START.match(sentence) is not None


def without_aside(sentence: str) -> str:
    """`sentence` without the words said in passing before it ("By the way, ", "Oh, and ")."""
    return _ASIDE.sub("", sentence)


def addresses_you(sentence: str) -> bool:
    """Whether `sentence` speaks to the assistant ("you", "your")."""
    return _ADDRESSED.search(sentence) is not None


def has_words_of(kind: str, sentence: str) -> bool:
    """Whether `sentence` holds the words of the statement type `kind` (`TYPE_RULES`); never
    for an event, which has none."""
    words = _KINDS.get(kind)
    return words is not None and words.search(sentence) is not None


def goes_to_a_place(sentence: str) -> bool:
    """ "We are going to Norway in June", "I'm going to the coast": a plan, not a promise."""
    return _GOING_TO_A_PLACE.search(sentence) is not None


def is_past(sentence: str) -> bool:
    """Whether `sentence` tells of something done ("I went", "we visited")."""
    return _PAST.search(sentence) is not None
