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

from lobug.memory.when import due_time
from lobug.store.models import NewFact
from lobug.text import FUNCTION_WORDS, sentence_case, third_person

MAX_SENTENCE_CHARS = 200
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself)\b", re.IGNORECASE)
_WE = re.compile(r"\b(we|we're|we've|our|ours|us)\b", re.IGNORECASE)
_REQUEST_START = re.compile(
    r"^(can|could|would|will|please|what|when|where|who|why|how|which|do|does|did|is|are|"
    r"should|tell|let|remind|set|play|turn|show|hey|hi|hello|ok|okay)\b",
    re.IGNORECASE,
)


# A statement's type, by its first-person verb; anything else says who the user is.
_DISCLOSED_TYPES = (
    (
        "commitment",
        r"i'll|i will|i promised?|i'm going to|i am going to|i have to|i need to|i must|"
        r"i plan to|i intend to|i'm supposed to",
    ),
    (
        "constraint",
        r"i can't|i cannot|i can not|i'm allergic|i am allergic|i don't eat|i do not eat|"
        r"i never|i'm not allowed|i am not allowed|my budget",
    ),
    ("preference", r"i (?:really )?(?:like|love|hate|prefer|enjoy|dislike)|my favou?rite"),
)
_DISCLOSED = tuple(
    (kind, re.compile(rf"\b(?:{verbs})\b", re.IGNORECASE)) for kind, verbs in _DISCLOSED_TYPES
)


def disclosed_type(sentence: str) -> str:
    """What a first-person statement is: a commitment ("I'll call Anna"), a constraint ("I
    can't eat nuts"), a preference ("I love jazz"), else identity."""
    for kind, verbs in _DISCLOSED:
        if verbs.search(sentence):
            return kind
    return "identity"


def self_disclosures(
    user_text: str,
    source_message_ids: tuple[int, ...],
    known: Collection[str] = (),
    said_at: datetime | None = None,
) -> list[NewFact]:
    """The user's statements about themselves, and about the people named in `known`, as
    facts; a commitment's due time is read as of `said_at`."""
    facts = []
    for match in _SENTENCE.finditer(user_text):
        sentence = " ".join(match.group().split())
        about_user = _is_statement_about_user(sentence)
        if about_user or _is_statement_about(sentence, known):
            content = sentence_case(third_person(sentence.rstrip(".!")))
            kind = disclosed_type(sentence) if about_user else "trait"
            due = due_time(sentence, said_at) if kind == "commitment" and said_at else None
            facts.append(
                NewFact(
                    content, kind, confidence=0.4, source_message_ids=source_message_ids, due_at=due
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
    for match in _SENTENCE.finditer(user_text):
        sentence = " ".join(match.group().split())
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
        and bool(_FIRST_PERSON.search(sentence))
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
    for match in _SENTENCE.finditer(user_text):
        words = match.group().split()
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
