"""Answers from memory, without the model: a question about the person whose answer one of
the facts retrieved for it holds is answered with that fact's own words, turned to the second
person ("What is my dog called?" with "The user has a dog called Biscuit" -> "You have a dog
called Biscuit.").

Why: the small default model copies names badly from its prompt (measured on SmolLM2-135M: 2 of
3 greedily, 0 of 3 with sampling: "Biscuzzle" for "Biscuit"), while the fact's words are the
ones the person said. A bigger model would say the same thing, so the rule costs nothing
there, and the turn is faster (no generation).

Only clear cases: the text is a question (a question mark, or a question word or auxiliary
first) about the person (my / I / me), it is not a request for advice ("how do I ...", "what
should I ..."), and every word it asks about is in the fact (other endings and a few
synonyms count: "name" is "called" or "named"). Anything else goes to the model as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from lobug.store.models import ScoredFact
from lobug.text import FUNCTION_WORDS, sentence_case, sentences_of, words_of

# Words that say how something is asked, not what about.
ASKING_WORDS = frozenset(
    """remember know tell recall again please lo bug lobug hey hi ok okay say said told
    anything something""".split()
)
# A word asked about, and the words of a fact that answer for it.
SYNONYMS = {
    "name": ("name", "named", "called"),
    "called": ("name", "named", "called"),
    "named": ("name", "named", "called"),
    "job": ("job", "work", "works", "worked"),
    "live": ("live", "lives", "lived", "living", "moved"),
    "born": ("born", "birthplace"),
    "birthday": ("birthday", "born"),
    "old": ("old", "age", "aged"),
    "age": ("old", "age", "aged"),
    "mum": ("mum", "mom", "mother"),
    "mom": ("mum", "mom", "mother"),
    "mother": ("mum", "mom", "mother"),
    "dad": ("dad", "father"),
    "car": ("car", "drive", "drives", "drove", "driving"),
    "father": ("dad", "father"),
}
QUESTION_OPENERS = frozenset(
    """what whats who whos whose where wheres when which how do does did is are am was were
    can could have has remind""".split()
)
ADVICE = re.compile(
    r"^(?:how (?:(?:long|much|many|often|soon) )?(?:do|can|could|should|would) i"
    r"|what (?:should|can|could|would) i|should i|can i|could i|would i|shall i|will i)\b"
)
# Words that make a question one about the person ("me" is what a request for help is for:
# "can you give me a recipe" asks nothing about them).
ABOUT_THE_PERSON = frozenset({"my", "i", "mine", "im", "ive"})
YES_NO = re.compile(r"^(?:do|did|can|could) you (?:remember|know|recall)\b")
SECOND_PERSON = (
    (re.compile(r"\bthe user and their\b", re.IGNORECASE), "you and your"),  # "we", `text`
    (re.compile(r"\bthe user's\b", re.IGNORECASE), "your"),
    (re.compile(r"\bthe user (?:is|'s)\b", re.IGNORECASE), "you are"),
    (re.compile(r"\bthe user was\b", re.IGNORECASE), "you were"),
    (re.compile(r"\bthe user has\b", re.IGNORECASE), "you have"),
    (re.compile(r"\bthe user does\b", re.IGNORECASE), "you do"),
    (re.compile(r"\bthemselves\b", re.IGNORECASE), "yourself"),
)
THIRD_PERSON_VERB = re.compile(
    r"\bthe user ((?:[a-z]+ly\s+|still\s+|also\s+|often\s+|never\s+)?)([a-z]+)\b", re.IGNORECASE
)
UNCHANGED_VERBS = frozenset("can could will would shall should may might must did had".split())
LEAD_IN = re.compile(r"^(?:(?:hey|hi|ok|okay|so|well|um)\b[\s,]*)*(?:lo-?bug\b[\s,]*)?")


def answer_from_facts(question: str, facts: Sequence[ScoredFact]) -> str | None:
    """The answer to `question` from the first of `facts` (best first) that holds it; None
    when the question is not one this rule answers or no fact holds every word asked about."""
    asked = asked_words(question)
    if not asked:
        return None
    for hit in facts:
        if holds(bare_words(hit.fact.content), asked):
            answer = second_person(hit.fact.content)
            return f"Yes. {answer}" if YES_NO.match(plain(question)) else answer
    return None


def asked_words(said: str) -> list[str]:
    """What the question `said` asks about the person (its content words), or [] when it is
    no such question. Only the last question of several sentences counts: "My favourite
    food is pizza. Can you suggest a recipe?" asks for advice, not about the person."""
    questions = [s for s in sentences_of(said) if is_question(s)]
    return _asked_about_them(questions[-1]) if questions else []


def is_question(sentence: str) -> bool:
    """A question mark, or a question word or auxiliary first (whisper often leaves the
    mark out: "what's my dog's name")."""
    text = plain(sentence)
    words = bare_words(text)
    return bool(words) and (
        sentence.rstrip().endswith("?") or words[0] in QUESTION_OPENERS or bool(YES_NO.match(text))
    )


def _asked_about_them(question: str) -> list[str]:
    text = plain(question)
    words = bare_words(text)
    if ADVICE.match(text) or not ABOUT_THE_PERSON.intersection(words):
        return []
    return [w for w in words if w not in FUNCTION_WORDS and w not in ASKING_WORDS]


def bare_words(text: str) -> list[str]:
    """Lower-case words without a possessive or contracted "'s" ("dog's" -> "dog", "what's"
    -> "what")."""
    return [re.sub(r"'s$", "", word) for word in words_of(text.replace("’", "'"))]


def plain(text: str) -> str:
    """Lower case, curly apostrophes straightened, greetings and the wake word dropped."""
    return LEAD_IN.sub("", text.lower().replace("’", "'").strip())


def holds(fact_words: Iterable[str], asked: Sequence[str]) -> bool:
    """Whether every asked word, or one of its synonyms, is among the fact's words."""
    present = set(fact_words)
    return all(any(same(word, w) for w in present) for word in asked)


def same(asked: str, fact_word: str) -> bool:
    from lobug.memory.extraction import same_word

    return any(same_word(option, fact_word) for option in SYNONYMS.get(asked, (asked,)))


def second_person(fact: str) -> str:
    """A fact about "the user" as said to them: "The user's dog is called Biscuit" -> "Your
    dog is called Biscuit."."""
    text = fact.strip().rstrip(".")
    for pattern, replacement in SECOND_PERSON:
        text = pattern.sub(replacement, text)
    text = THIRD_PERSON_VERB.sub(lambda m: f"you {m.group(1)}{base_form(m.group(2))}", text)
    text = re.sub(r"\bthe user\b", "you", text, flags=re.IGNORECASE)
    return sentence_case(text) + "."


def base_form(verb: str) -> str:
    """A third-person verb's base form: "works" -> "work", "studies" -> "study"."""
    lowered = verb.lower()
    if lowered in UNCHANGED_VERBS or not lowered.endswith("s") or lowered.endswith("ss"):
        return verb
    if lowered.endswith("ies"):
        return verb[:-3] + "y"
    if re.search(r"(?:sh|ch|x|z|o)es$", lowered):
        return verb[:-2]
    return verb[:-1]
