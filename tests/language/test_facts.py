"""The words by which a learned fact is about the user, the assistant, or only a report of
speech (`language/facts.py`)."""

from __future__ import annotations

import pytest

from lobug.language.facts import (
    FRAME_WORDS,
    NO_CLAIM_WORDS,
    REPORTING_WORDS,
    ROLE_WORDS,
    USER_IN_OTHER_LANGUAGES,
    is_not_a_report,
    names_the_assistant,
    names_the_user,
)
from lobug.language.text import words_of


@pytest.mark.parametrize(
    "claim",
    [
        "The user's dog is called Biscuit.",
        "I'm 34",
        "My sister lives in Leeds",
        "We have a beagle",
        "Users of our flat share a car",
    ],
)
def test_claims_about_the_user(claim: str) -> None:
    assert names_the_user(claim)


@pytest.mark.parametrize("claim", ["The castle is old.", "Italy", "Ana likes museums"])
def test_claims_about_no_user(claim: str) -> None:
    assert not names_the_user(claim)


@pytest.mark.parametrize(
    "claim",
    [
        "The assistant is helpful",
        "Lo-Bug can set timers",
        "LoBug is a chatbot",
        "The user asked the AI model for a joke",
    ],
)
def test_claims_about_the_assistant(claim: str) -> None:
    assert names_the_assistant(claim)


@pytest.mark.parametrize("claim", ["The user's dog is Biscuit", "The user said a bug bit them"])
def test_claims_not_about_the_assistant(claim: str) -> None:
    assert not names_the_assistant(claim)


@pytest.mark.parametrize(
    "text",
    [
        "The user talked about their dog. What is its name?",
        "I love my dog Biscuit and walk him daily.",
        "The user said you were kind.",
        "The user has a dog.\nUser: what do I have?",
        "Summary: The user has a dog.",
    ],
)
def test_texts_that_are_no_report(text: str) -> None:
    assert is_not_a_report(text)


@pytest.mark.parametrize(
    "text",
    [
        "The user mentioned a dog called Biscuit and a trip to Lisbon.",
        "The user works as a nurse at St. Mary's hospital; their shifts are at night.",
    ],
)
def test_third_person_accounts_are_reports(text: str) -> None:
    assert not is_not_a_report(text)


def test_reporting_and_frame_words_claim_nothing_of_their_own() -> None:
    said = words_of("The user mentioned to the assistant that Lo-Bug told them about a dog")
    claimed = [word for word in said if word not in REPORTING_WORDS | FRAME_WORDS | NO_CLAIM_WORDS]
    assert claimed == ["dog"]


def test_no_claim_words_are_function_words_and_the_template() -> None:
    said = words_of("The user's sister is named Ana and currently lives in Leeds")
    assert [word for word in said if word not in NO_CLAIM_WORDS] == [
        "sister",
        "ana",
        "lives",
        "leeds",
    ]


@pytest.mark.parametrize("fact", ["Der Benutzer hat einen Hund", "El usuario tiene un perro"])
def test_the_user_in_other_languages(fact: str) -> None:
    assert set(words_of(fact)) & USER_IN_OTHER_LANGUAGES


def test_role_words_tell_no_fact_from_another() -> None:
    said = set(words_of("The user's locker code, the assistant was told, is 4417"))
    assert said - ROLE_WORDS == {"the", "user's", "locker", "code", "was", "told", "is", "4417"}
    assert ROLE_WORDS <= FRAME_WORDS and ROLE_WORDS <= NO_CLAIM_WORDS
