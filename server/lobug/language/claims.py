"""Personal details a reply claims about the person that nothing they said or memory holds:
the small default model invents them with confidence ("Your dog's name is Biscuzzle" for a
dog called Biscuit; "your adventures with NASA" for someone who never named NASA).

A sentence claims something about the person when it is not a question and speaks of them:
"your", or "you" followed by anything but a modal or a word of conversation ("you could",
"you know"), unless a verb or a preposition before that "you" acts on them ("help you find
a recipe", "tell you that", "for you"). Its details are its names and numbers: a word
written with a capital (the sentence's first word too, unless it is a common opener or an
-ing form) or holding a digit. A detail is invented when it is none of the `known` words:
those of the turn's whole prompt (the facts, base memory and blocks it was given, the
history, the person's own words).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lobug.language.text import FUNCTION_WORDS, sentences_of, word_tokens

NOT_CLAIMS = frozenset(
    """could should might may can will would must shall need want know see mean think guess bet
    ask tell try get please say said""".split()
)
SPEAKS_OF_THEM = re.compile(r"\byour\b|\byours\b|\byou(?:'re|'ve|'d)?\s+([a-z]+)", re.IGNORECASE)
# Words after which "you" is acted on, not the one acting ("let you know", "with you").
ACTS_ON_THEM = frozenset(
    """help helps helped helping let lets make makes made ask asks asked tell tells told give
    gives gave show shows showed remind reminds reminded invite take takes bring brings send
    sends wish thank for to with than about at from of by""".split()
)
COMMON_OPENERS = frozenset(
    """yes no sure sorry great well okay ok hello hi hey thanks thank oh ah hmm yeah nope
    certainly absolutely maybe perhaps good nice wow cant wont lets its theres heres isnt
    arent wasnt alright today tonight tomorrow yesterday unfortunately honestly actually
    basically personally hopefully luckily sadly finally firstly secondly lastly however
    additionally alternatively generally usually typically ideally obviously clearly really
    anyway also otherwise instead besides meanwhile indeed therefore remember first next
    then now so fine right true""".split()
)


# The words after a sentence's first word that make it a name ("Max is", "Fido has"), and
# a comma after it ("Lindsay, the one who ...": SmolLM2-135M asked who could pick up a
# daughter).
NAMING_NEXT = frozenset("is was has had and says said lives works ,".split())
NAME_AND_COMMA = re.compile(r"^\W*[A-Z][a-z]+,")
# In another conversation language, where a word's capital tells nothing (German writes every
# noun with one), the one claim read is a name given in a naming phrase: "Deine Katze heißt
# Felix." (Qwen2.5-Coder-1.5B in German, asked about a cat never mentioned).
NAME_GIVEN = {
    "de": re.compile(r"\b(?:heißt|heisst|hieß|namens|Name ist)\s+(\w+)", re.IGNORECASE),
    "fr": re.compile(r"\b(?:s'appelle|s’appelle|nommée?|nom est)\s+(\w+)", re.IGNORECASE),
    "es": re.compile(r"\b(?:se llama|llamad[oa]|nombre es)\s+(\w+)", re.IGNORECASE),
    "it": re.compile(r"\b(?:si chiama|chiamat[oa]|nome è)\s+(\w+)", re.IGNORECASE),
    "pt": re.compile(r"\b(?:se chama|chama-se|chamad[oa]|nome é)\s+(\w+)", re.IGNORECASE),
}
# What a model calls itself ("As an AI, ..."): never a detail about the person.
ASSISTANT_WORDS = frozenset({"ai", "lo-bug", "lobug", "assistant"})


def known_words(texts: Iterable[str]) -> frozenset[str]:
    """The words (lower case, without a possessive "'s") that `texts` hold."""
    return frozenset(bare(token) for text in texts for token in word_tokens(text))


def invented_details(text: str, known: frozenset[str], *, answer: bool = False) -> list[str]:
    """The names and numbers that `text` claims about the person and `known` lacks. With
    `answer` (`text` answers a question about the person) every sentence counts as a claim
    about them: "Which car do I drive?" -> "... the 2018 model"."""
    invented = []
    for sentence in sentences_of(text):
        if sentence.rstrip().endswith("?") or not (answer or claims_about_them(sentence)):
            continue
        tokens = word_tokens(sentence)
        for position, token in enumerate(tokens):
            after = tokens[position + 1] if position + 1 < len(tokens) else None
            if position == 0 and NAME_AND_COMMA.match(sentence):
                after = ","
            if is_detail(token, position, after) and bare(token) not in known:
                invented.append(token)
    return invented


def names_given_beyond(text: str, known: frozenset[str], language: str) -> list[str]:
    """The names `text` gives in `language`'s naming phrases (`NAME_GIVEN`) that `known`
    lacks; [] for a language without one (English: `invented_details`)."""
    naming = NAME_GIVEN.get(language)
    if naming is None:
        return []
    named = (m.group(1) for m in naming.finditer(text))
    return [name for name in named if name[:1].isupper() and bare(name) not in known]


def claims_about_them(sentence: str) -> bool:
    for match in SPEAKS_OF_THEM.finditer(sentence):
        verb = match.group(1)
        if verb is None:  # your, yours
            return True
        before = sentence[: match.start()].split()
        acted_on = bool(before) and before[-1].lower() in ACTS_ON_THEM
        if verb.lower() not in NOT_CLAIMS and not acted_on:
            return True
    return False


def is_detail(token: str, position: int, after: str | None = None) -> bool:
    """Whether `token` (at `position` in its sentence, `after` it the next token) is a name or
    number. A sentence's first word is one only when the sentence names it ("Max is ...",
    "Maria's ...", "Fido."): "Based on ...", "Let me ..." open good answers."""
    if any(c.isdigit() for c in token):
        return True
    if not token[:1].isupper() or token in ("I", "I'm", "I've", "I'd", "I'll"):
        return False
    word = token.lower().replace("'", "").replace("’", "")
    if word in ASSISTANT_WORDS:
        return False
    if position > 0:
        return True
    if word in FUNCTION_WORDS or word in COMMON_OPENERS or is_gerund(word):
        return False
    return after is None or after.lower() in NAMING_NEXT or token.endswith(("'s", "’s"))


def is_gerund(word: str) -> bool:
    """A verb's -ing form ("Packing for the hills, ..."), taken for one when it opens a
    sentence: a place or name like "Reading" is missed there, and only there."""
    return len(word) >= 6 and word.endswith("ing")


def bare(token: str) -> str:
    return re.sub(r"['’]s$", "", token.lower())


# A model that cannot act on the memory (no tools: `memory/request_tools.py`) claiming it did:
# "I'm sorry I forgot your allergies again.", "I've deleted that.", "I'll remind you at 9."
# (English, as the phrase rules it stands in for: `language.RULE_LANGUAGES`).
CLAIMED_ACTION = re.compile(
    r"\bI(?:'ve|’ve| have)?\s+(?:just\s+|now\s+)?"
    r"(?:forgot(?:ten)?(?!\s+to\b)|deleted|erased|cancel(?:l)?ed\s+(?:the|your|that|it|all)"
    r"|set\s+(?:a|the|your)\s+reminder)\b"
    r"|\bI(?:'ll|’ll| will)\s+(?:forget|delete|erase|remind\s+you)\b",
    re.IGNORECASE,
)


def claimed_action(text: str) -> str | None:
    """The words of `text` that claim an action on the memory or a reminder, or None."""
    found = CLAIMED_ACTION.search(text)
    return None if found is None else found.group(0)


# The model speaking as the person: "I'm Marta from Riverside Clinic.", and, answering a
# question about them, "My son's name is Lina." (the assistant has no name but its own and no
# family; "I'm sorry", "I'm Lo-Bug" and "My pleasure" are its own words).
AS_THEM = re.compile(r"^\W*(?:I'm|I’m|I\s+am)\s+(?!Lo-?Bug\b)[A-Z][a-z]+\b")
AS_THEM_ANSWERING = re.compile(r"^\W*My\s+(?!pleasure\b|apologies\b|bad\b)[a-z]+", re.IGNORECASE)


def speaks_as_them(text: str, *, answer: bool = False) -> str | None:
    """The first sentence of `text` in which the model speaks as the person, or None."""
    for sentence in sentences_of(text):
        if AS_THEM.match(sentence) or (answer and AS_THEM_ANSWERING.match(sentence)):
            return sentence.strip()
    return None
