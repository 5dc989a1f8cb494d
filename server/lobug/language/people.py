"""The words, in English, by which a person names themselves, speaks for the household, or
stops an enrolment by voice. `memory/people.py` asks who a sentence says is speaking
(`spoken_claim`: "it's Jordan.", "Jordan here", "this is my friend Sam") and whether a fact
said is the household's by its words (`speaks_for_household`, `speaks_only_for_household`:
"we", "our", "everyone"); `memory/voice_enrolment.py` asks whether a person cancels the
learning of their voice (`stops_enrolment`: "stop", "never mind").

How a person says their own name (`SAYS_OWN_NAME`) and what a spoken name may be
(`SPOKEN_NAME`) are read alike by the claims here and the enrolment request
(`memory/spoken_requests.py`, "learn my voice, I'm Jordan"). What a stored name may be is
`lobug.names`' rule (`PERSON_NAME`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lobug.language.requests import OPENERS

# How a person says their own name ("it's Jordan", "I'm Mary Ann", "my name is O'Neil"),
# as regular-expression parts.
SAYS_OWN_NAME = r"(?:it'?s|it\s+is|i'?m|i\s+am|my\s+name\s+is|this\s+is)"
SPOKEN_NAME = r"[^\W\d_]+(?:[ '\-][^\W\d_]+)?"  # one or two words of letters

_SAYS_NAME = re.compile(rf"^{OPENERS}{SAYS_OWN_NAME}\s+", re.IGNORECASE)
_INTRODUCES = re.compile(
    rf"^{OPENERS}(?:this is|it'?s|i'?m|i am)\s+(?:my|your|a|our)\s+"
    r"(?:friend|guest|neighbou?r|colleague|visitor|cousin)\s+",
    re.IGNORECASE,
)
_HERE = re.compile(rf"^{OPENERS}(?P<name>[^,.!?;:]+?)\s+here\s*(?=$|[,.!?;:])", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,.!?;:]")
# What may follow a name in a claim and still leave it whole ("It's Jordan again").
_AFTER_NAME = re.compile(r"\s+(?:here|speaking|again)$", re.IGNORECASE)
# "we", "our", "us" said of the home: a household fact, not the speaker's own.
HOUSEHOLD_WORDS = re.compile(r"\b(?:we|we're|we've|our|ours|us|everyone|everybody)\b", re.I)
# "I", "my", "me": the speaker's own.
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|my|mine|me)\b", re.I)
# How a person cancels the learning of their voice, said as the whole request.
_STOP = re.compile(r"(?:stop|cancel|never\s?mind|forget\s+it|no|don'?t)(?:\s+\w+){0,3}", re.I)


@dataclass(frozen=True)
class SpokenClaim:
    """Who a sentence says is speaking: the words of the name (`name`, as said; whose they
    are is the household's to say), whether the sentence said nothing else (`alone`: "It's
    Jordan."), and whether the speaker was introduced as a guest ("this is my friend Sam":
    `guest`, whose name need be no one's of the household)."""

    name: str
    alone: bool
    guest: bool = False


def spoken_claim(text: str) -> SpokenClaim | None:
    """The claim that opens `text`, if any: the rest of the clause after "it's", "I'm",
    "this is", ... or before "here" ("It's Jordan.", "Jordan here, ...", "its jordan"), with
    "here", "speaking" or "again" after it dropped; or a one- or two-word name of a guest
    introduced as such ("this is my friend Sam"). Whether the name is a person's whole name
    (so that "It's Jordan calling" or "it's May already" claims nothing) is the caller's."""
    spoken = text.strip()
    introduced = _INTRODUCES.match(spoken)
    if introduced:
        name, alone = _clause(spoken[introduced.end() :])
        if re.fullmatch(SPOKEN_NAME, name) is None:
            return None
        return SpokenClaim(name, alone, guest=True)
    said = _SAYS_NAME.match(spoken)
    if said:
        name, alone = _clause(spoken[said.end() :])
    else:
        here = _HERE.match(spoken)
        if here is None:
            return None
        name, alone = _clause(spoken[here.start("name") :])
    return SpokenClaim(_AFTER_NAME.sub("", name), alone)


def _clause(rest: str) -> tuple[str, bool]:
    """The words of `rest` up to the end of its clause, and whether nothing follows them."""
    end = _CLAUSE_END.search(rest)
    clause = rest if end is None else rest[: end.start()]
    after = "" if end is None else rest[end.start() :]
    return clause.strip(), not after.strip(" ,.!?;:")


def speaks_for_household(text: str) -> bool:
    """Whether `text` says "we", "our", "us", "everyone" ...: words of the household."""
    return HOUSEHOLD_WORDS.search(text) is not None


def speaks_only_for_household(text: str) -> bool:
    """A statement about the home in the plural ("we have a cat") with no "I"/"my"."""
    return _FIRST_PERSON.search(text) is None and speaks_for_household(text)


def stops_enrolment(request: str) -> bool:
    """Whether `request` (what was asked, without politeness and wake words: the memory's
    `request_part`) cancels a voice being learnt: "stop", "cancel", "never mind", "forget
    it", "no", "don't", and up to three words more ("stop it now")."""
    return _STOP.fullmatch(request) is not None
