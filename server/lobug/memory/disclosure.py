"""What the user says about themselves, found without a model.

The bundled 135M model rarely extracts usable facts (it copies the prompt's examples), so for
such small models the pipeline also keeps the user's own first-person statements, rewritten in
the third person: "My name is Alex and I work at NASA" -> "The user's name is Alex and the
user works at NASA". Questions and requests are not statements about the user and are skipped.
A statement about someone the user has named in a fact before ("Leo is seven years old" after
"I have two kids, Leo and Ava") is kept too, as said. `informative_sentences` are the user's
words a fact may be grounded in.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from datetime import datetime

from lobug.language.text import FUNCTION_WORDS, sentence_case, sentences_of, third_person
from lobug.memory import confidence
from lobug.memory.when import DUE_RULES, RULES, due_time
from lobug.store.models import NewFact

MAX_SENTENCE_CHARS = 200
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


# A statement's type (seed 001), by its words; the first rule that holds wins: who the user
# is ("my name is", "I was born"), a commitment ("I'll call Anna"), a constraint ("I can't eat
# nuts"), a habit, which is a trait ("I swim every Saturday"), an event (a plan with a time to
# come, "On Friday I'm hiking", or something done at a time said, "I went to Paris last
# year"), a preference ("I love jazz"), a trait (skills, fears, "I'm learning the piano");
# else identity.
_RULES = (
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
_KINDS = tuple(
    (kind, re.compile(rf"\b(?:{words})\b", re.IGNORECASE) if words else None)
    for kind, words in _RULES
)
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
_PAST_TIME = tuple(pattern for pattern, _ in RULES)
DATED_TYPES = ("commitment", "event")


def stated_type(sentence: str) -> str | None:
    """The type the rule above finds in `sentence`, or None when none of its words are
    there (nothing tells it from identity)."""
    for kind, words in _KINDS:
        if kind == "commitment" and _GOING_TO_A_PLACE.search(sentence):
            continue  # "we are going to Norway in June": a plan, not a promise
        if kind == "event" and _is_event(sentence):
            return kind
        if words is not None and words.search(sentence):
            return "trait" if kind == "habit" else kind
    return None


def disclosed_type(sentence: str) -> str:
    """What a statement is (see `stated_type`), identity when nothing tells otherwise."""
    return stated_type(sentence) or "identity"


def is_past(sentence: str) -> bool:
    """Whether `sentence` tells of something done ("I went", "we visited")."""
    return _PAST.search(sentence) is not None


def _is_event(sentence: str) -> bool:
    """A plan with a time to come, or something done at a time said."""
    lowered = " ".join(sentence.lower().split())
    if is_past(sentence):
        return any(pattern.search(lowered) for pattern in _PAST_TIME)
    return any(pattern.search(lowered) for pattern, _ in DUE_RULES)


def due_of_statement(sentence: str, kind: str, said_at: datetime | None) -> float | None:
    """When a commitment or a planned event in `sentence` is due, as of `said_at` (when it
    was said, in the user's time zone); None for other types, for what was done already, and
    when it names no time to come."""
    if kind not in DATED_TYPES or said_at is None or is_past(sentence):
        return None
    return due_time(sentence, said_at)


def said_sentences(user_text: str) -> list[str]:
    """The sentences of what the user said, line by line (a line ends one too)."""
    return [sentence for line in user_text.splitlines() for sentence in sentences_of(line)]


def self_disclosures(
    user_text: str,
    source_message_ids: tuple[int, ...],
    known: Collection[str] = (),
    said_at: datetime | None = None,
) -> list[NewFact]:
    """The user's statements about themselves, and about the people named in `known`, as
    facts typed by `disclosed_type`, with the confidence `memory/confidence.py` gives them; a
    commitment's or plan's due time is read as of `said_at`."""
    facts = []
    for said in said_sentences(user_text):
        sentence = _ASIDE.sub("", " ".join(said.split()))
        about_user = _is_statement_about_user(sentence)
        if about_user or _is_statement_about(sentence, known):
            content = sentence_case(third_person(sentence.rstrip(".!")))
            kind = disclosed_type(sentence)
            due = due_of_statement(sentence, kind, said_at)
            facts.append(
                NewFact(
                    content,
                    kind,
                    time_span="future" if due is not None else None,
                    confidence=confidence.of_statement(sentence, about_user=about_user),
                    source_message_ids=source_message_ids,
                    due_at=due,
                )
            )
    return facts


_CHITCHAT_START = re.compile(
    r"^(thanks|thank|that|this|it|good|great|nice|cool|wow|sorry|bye|goodbye|yes|no|sure|"
    r"oh|ah|well|haha|lol)\b",
    re.IGNORECASE,
)
_NAME_OR_NUMBER = re.compile(r"(?<=\s)[A-Z][\w'’-]*|\d")


def informative_sentences(user_text: str) -> list[str]:
    """The user's sentences that can hold a fact: statements (no questions, requests or
    chitchat) about themselves, or that name someone or give a number."""
    found = []
    for said in said_sentences(user_text):
        sentence = " ".join(said.split())
        if _is_informative(sentence):
            found.append(sentence)
    return found


def _is_informative(sentence: str) -> bool:
    if not sentence or sentence.endswith("?") or _REQUEST_START.match(sentence):
        return False
    if _FIRST_PERSON.search(sentence) or _WE.search(sentence):
        return True
    return not _CHITCHAT_START.match(sentence) and names_someone(sentence)


def names_someone(sentence: str) -> bool:
    """Whether a sentence holds a name or a number ("Leo is seven", "Biscuit is a dog")."""
    first = sentence.split()[0] if sentence.split() else ""
    named_first = first[:1].isupper() and first.lower().strip(",;:") not in FUNCTION_WORDS
    return named_first or bool(_NAME_OR_NUMBER.search(sentence))


def _is_statement_about_user(sentence: str) -> bool:
    return (
        len(sentence.split()) >= 3
        and len(sentence) <= MAX_SENTENCE_CHARS
        and not sentence.endswith("?")
        and not _REQUEST_START.match(sentence)
        and bool(_FIRST_PERSON.search(sentence) or _WE.search(sentence))
    )


_NAME = re.compile(r"(?<=\s)[A-Z][a-z]+(?:['’][a-z]+)?\b")
_ADDRESSED = re.compile(r"\b(you|you're|your|yours)\b", re.IGNORECASE)


def known_names(facts: Iterable[str]) -> frozenset[str]:
    """The names (capitalised words after a sentence's start) in facts already stored."""
    names = (m.group().lower() for fact in facts for m in _NAME.finditer(fact))
    return frozenset(name for name in names if name not in FUNCTION_WORDS)


_NAME_SHAPED = re.compile(r"[a-z]+(?:['’][a-z]+)?")


def sentence_openers(user_text: str) -> list[str]:
    """The first words of the user's sentences, as `self_disclosures` reads them (lowercase,
    `,;:` stripped), that `known_names` could give: the only names it asks `known` about, so
    the facts to read for them are those holding one of these words."""
    openers = []
    for said in said_sentences(user_text):
        words = said.split()
        first = words[0].strip(",;:").lower() if words else ""
        if _NAME_SHAPED.fullmatch(first) and first not in FUNCTION_WORDS:
            openers.append(first)
    return sorted(set(openers))


def _is_statement_about(sentence: str, known: Collection[str]) -> bool:
    """A statement whose subject is someone the user named before ("Biscuit is a golden
    retriever"), not a question, a request or words to the assistant."""
    first = sentence.split()[0].strip(",;:").lower() if sentence.split() else ""
    return (
        first in known
        and len(sentence.split()) >= 3
        and len(sentence) <= MAX_SENTENCE_CHARS
        and not sentence.endswith("?")
        and not _ADDRESSED.search(sentence)
    )
