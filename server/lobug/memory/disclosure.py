"""What the user says about themselves, found without a model.

The bundled 135M model rarely extracts usable facts (it copies the prompt's examples), so for
such small models the pipeline also keeps the user's own first-person statements, rewritten in
the third person: "My name is Alex and I work at NASA" -> "The user's name is Alex and the
user works at NASA". Questions and requests are not statements about the user and are skipped.
A statement about someone the user has named in a fact before ("Leo is seven years old" after
"I have two kids, Leo and Ava") is kept too, as said. `informative_sentences` are the user's
words a fact may be grounded in. The words that decide (which sentences speak of the user,
ask, chat, or tell of the past; each type's words) are `language/disclosure.py`'s.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from datetime import datetime

from lobug.language.disclosure import (
    STATEMENT_TYPES,
    addresses_you,
    goes_to_a_place,
    has_words_of,
    is_past,
    opens_as_chitchat,
    opens_as_request,
    speaks_of_self,
    without_aside,
)
from lobug.language.text import FUNCTION_WORDS, sentence_case, sentences_of, third_person
from lobug.language.times import names_a_past_time, names_a_time_to_come
from lobug.memory import confidence
from lobug.memory.when import due_time
from lobug.store.models import NewFact

MAX_SENTENCE_CHARS = 200
DATED_TYPES = ("commitment", "event")


def stated_type(sentence: str) -> str | None:
    """The type of a statement, by its words (`language/disclosure.py`'s `TYPE_RULES`, the
    first that holds wins: identity, commitment, constraint, habit, which is a trait, event,
    preference, trait), or None when none of them are there (nothing tells it from
    identity). An event is a plan with a time to come or something done at a time said, by
    `language/times.py`'s phrases."""
    for kind in STATEMENT_TYPES:
        if kind == "commitment" and goes_to_a_place(sentence):
            continue  # "we are going to Norway in June": a plan, not a promise
        if kind == "event" and _is_event(sentence):
            return kind
        if has_words_of(kind, sentence):
            return "trait" if kind == "habit" else kind
    return None


def disclosed_type(sentence: str) -> str:
    """What a statement is (see `stated_type`), identity when nothing tells otherwise."""
    return stated_type(sentence) or "identity"


def _is_event(sentence: str) -> bool:
    """A plan with a time to come, or something done at a time said."""
    if is_past(sentence):
        return names_a_past_time(sentence)
    return names_a_time_to_come(sentence)


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
        sentence = without_aside(" ".join(said.split()))
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
    if not sentence or sentence.endswith("?") or opens_as_request(sentence):
        return False
    if speaks_of_self(sentence):
        return True
    return not opens_as_chitchat(sentence) and names_someone(sentence)


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
        and not opens_as_request(sentence)
        and speaks_of_self(sentence)
    )


_NAME = re.compile(r"(?<=\s)[A-Z][a-z]+(?:['’][a-z]+)?\b")


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
        and not addresses_you(sentence)
    )
