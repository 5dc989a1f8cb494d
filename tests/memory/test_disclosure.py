from __future__ import annotations

import pytest

from lobug.language.text import third_person
from lobug.memory.disclosure import (
    informative_sentences,
    known_names,
    self_disclosures,
    sentence_openers,
)


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        (
            "My name is Alex and I work at NASA",
            ["The user's name is Alex and the user works at NASA"],
        ),
        (
            "I love hiking with my dog Rex. It is sunny.",
            ["The user loves hiking with the user's dog Rex"],
        ),
        ("I'm 34 and I really enjoy jazz!", ["The user is 34 and the user really enjoys jazz"]),
        ("I went to Paris last year", ["The user went to Paris last year"]),
        ("What's my name?", []),
        ("Can you remind me to call mom", []),
        ("Hello there", []),
        ("The weather is nice", []),
    ],
)
def test_first_person_statements_become_facts(said: str, facts: list[str]) -> None:
    found = self_disclosures(said, (7, 8))
    assert [f.content for f in found] == facts
    assert all(f.source_message_ids == (7, 8) for f in found)


def test_verbs_agree_with_the_user() -> None:
    assert third_person("I watch films and I try new things") == (
        "the user watches films and the user tries new things"
    )
    assert third_person("I have a cat and I am tired") == "the user has a cat and the user is tired"


def test_informative_sentences_skip_questions_requests_and_chitchat() -> None:
    said = (
        "Hi there! My name is Maya. That is funny. Thanks, that helps. Leo is seven. "
        "Tell me a joke about cats. What is a good name for a goldfish? We are going to "
        "Norway in June. The weather is nice. Biscuit is a golden retriever."
    )
    assert informative_sentences(said) == [
        "My name is Maya.",
        "Leo is seven.",
        "We are going to Norway in June.",
        "Biscuit is a golden retriever.",
    ]


def test_statements_about_someone_named_before_are_kept_as_said() -> None:
    known = known_names(["The user has a dog named Rex", "The user's sister Nadia is a pilot"])
    assert known == {"rex", "nadia"}
    said = (
        "Rex is a border collie. Nadia flies to Oslo on Mondays! Paris is lovely. "
        "Rex likes you. Is Nadia home? Rex barks at night."
    )
    found = self_disclosures(said, (3, 4), known)
    assert [f.content for f in found] == [
        "Rex is a border collie",
        "Nadia flies to Oslo on Mondays",
        "Rex barks at night",
    ]


def test_only_the_sentence_openers_are_asked_about() -> None:
    said = "Rex is a border collie. nadia, flies. The dog runs! Is Rex home? 42 ducks. Anna’s cat."
    assert sentence_openers(said) == ["anna’s", "nadia", "rex"]  # no function words, numbers
    known = known_names(["The user's dog Rex", "Her sister Nadia", "Leo's friend Ola"])
    found = self_disclosures(said, (1, 2), known)
    relevant = known & set(sentence_openers(said))
    assert found == self_disclosures(said, (1, 2), relevant)


def test_no_one_is_known_without_facts() -> None:
    assert self_disclosures("Rex is a border collie.", (1, 2), known_names([])) == []


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        (
            "We have a beagle named Biscuit",
            ["The user and their family have a beagle named Biscuit"],
        ),
        ("Our son Leo is seven", ["The user's son Leo is seven"]),
        ("By the way, my name is Marta", ["The user's name is Marta"]),
        ("Oh, actually I'm a nurse.", ["The user is a nurse"]),
    ],
)
def test_what_the_household_has_and_a_statement_said_in_passing_are_facts(
    said: str, facts: list[str]
) -> None:
    """Issue 41: "We have a beagle named Biscuit" and "By the way, my name is Marta" never
    became facts (no first person; the aside kept at the fact's start)."""
    assert [f.content for f in self_disclosures(said, (1, 2))] == facts
