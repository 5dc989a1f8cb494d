"""Personal details a reply claims about the person that nothing they said or memory holds:
the small default model invents them with confidence ("Your dog's name is Biscuzzle" for a
dog called Biscuit; "your adventures with NASA" for someone who never named NASA).

A sentence claims something about the person when it is not a question and speaks of them:
"your", or "you" followed by anything but a modal or a word of conversation ("you could",
"you know"). Its details are its names and numbers: a word written with a capital (the
sentence's first word too, unless it is a common opener) or holding a digit. A detail is
invented when it is none of the `known` words: those of the turn's whole prompt (the facts,
base memory and blocks it was given, the history, the person's own words).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lobug.text import FUNCTION_WORDS, word_tokens

SENTENCE = re.compile(r"[^.!?]+[.!?]*")
NOT_CLAIMS = frozenset(
    """could should might may can will would must shall need want know see mean think guess bet
    ask tell try get please say said""".split()
)
SPEAKS_OF_THEM = re.compile(r"\byour\b|\byours\b|\byou(?:'re|'ve|'d)?\s+([a-z]+)", re.IGNORECASE)
COMMON_OPENERS = frozenset(
    """yes no sure sorry great well okay ok hello hi hey thanks thank oh ah hmm yeah nope
    certainly absolutely maybe perhaps good nice wow cant wont lets its theres heres isnt
    arent wasnt""".split()
)


def known_words(texts: Iterable[str]) -> frozenset[str]:
    """The words (lower case, without a possessive "'s") that `texts` hold."""
    return frozenset(bare(token) for text in texts for token in word_tokens(text))


def invented_details(text: str, known: frozenset[str], *, answer: bool = False) -> list[str]:
    """The names and numbers that `text` claims about the person and `known` lacks. With
    `answer` (`text` answers a question about the person) every sentence counts as a claim
    about them: "Which car do I drive?" -> "... the 2018 model"."""
    invented = []
    for sentence in SENTENCE.findall(text):
        if sentence.rstrip().endswith("?") or not (answer or claims_about_them(sentence)):
            continue
        for position, token in enumerate(word_tokens(sentence)):
            if is_detail(token, position) and bare(token) not in known:
                invented.append(token)
    return invented


def claims_about_them(sentence: str) -> bool:
    for match in SPEAKS_OF_THEM.finditer(sentence):
        verb = match.group(1)
        if verb is None or verb.lower() not in NOT_CLAIMS:
            return True
    return False


def is_detail(token: str, position: int) -> bool:
    if any(c.isdigit() for c in token):
        return True
    if not token[:1].isupper() or token in ("I", "I'm", "I've", "I'd", "I'll"):
        return False
    word = token.lower().replace("'", "").replace("’", "")
    return position > 0 or (word not in FUNCTION_WORDS and word not in COMMON_OPENERS)


def bare(token: str) -> str:
    return re.sub(r"['’]s$", "", token.lower())
