"""How a person names themselves, speaks for the household, or stops an enrolment by voice
(`language/people.py`)."""

from __future__ import annotations

import pytest

from lobug.language.people import (
    SpokenClaim,
    speaks_for_household,
    speaks_only_for_household,
    spoken_claim,
    stops_enrolment,
)


@pytest.mark.parametrize(
    ("said", "claim"),
    [
        ("It's Jordan.", SpokenClaim("Jordan", alone=True)),
        ("It's Jordan. What's up?", SpokenClaim("Jordan", alone=False)),
        ("its jordan", SpokenClaim("jordan", alone=True)),
        ("Hey, this is Jordan!", SpokenClaim("Jordan", alone=True)),
        ("I'm Mary Ann", SpokenClaim("Mary Ann", alone=True)),
        ("my name is O'Neil, hi", SpokenClaim("O'Neil", alone=False)),
        ("Jordan here", SpokenClaim("Jordan", alone=True)),
        ("sam here, what's up", SpokenClaim("sam", alone=False)),
        ("It's Jordan again", SpokenClaim("Jordan", alone=True)),
        # The rest of the clause is the name said: whether it is a person's whole name is the
        # household's to say ("It's Jordan calling" names no one).
        ("It's Jordan calling for you", SpokenClaim("Jordan calling for you", alone=True)),
        ("I'm tired", SpokenClaim("tired", alone=True)),
    ],
)
def test_a_sentence_says_who_speaks(said: str, claim: SpokenClaim) -> None:
    assert spoken_claim(said) == claim


@pytest.mark.parametrize(
    ("said", "claim"),
    [
        ("This is my friend Sam", SpokenClaim("Sam", alone=True, guest=True)),
        ("Hi, it's our neighbour Alex. Hello!", SpokenClaim("Alex", alone=False, guest=True)),
        ("I'm a colleague Mary Ann", SpokenClaim("Mary Ann", alone=True, guest=True)),
    ],
)
def test_a_guest_is_introduced(said: str, claim: SpokenClaim) -> None:
    assert spoken_claim(said) == claim


@pytest.mark.parametrize(
    "said",
    [
        "tell Jordan it's late",
        "what's for dinner",
        "this is my friend from work who plays chess",  # no name, a story
        "this is my friend 42",
    ],
)
def test_other_sentences_claim_nothing(said: str) -> None:
    assert spoken_claim(said) is None


@pytest.mark.parametrize(
    "said", ["We have a cat.", "Our wifi password is hunter2", "Everyone likes pizza", "tell us"]
)
def test_words_of_the_household(said: str) -> None:
    assert speaks_for_household(said)


@pytest.mark.parametrize(
    "said", ["I have a cat.", "My wifi password is hunter2", "Wednesday is bin day", "Sam's house"]
)
def test_words_of_ones_own(said: str) -> None:
    assert not speaks_for_household(said)


def test_only_the_household_speaks_without_i_or_my() -> None:
    assert speaks_only_for_household("We have a cat.")
    assert speaks_only_for_household("Our dog is called Biscuit")
    assert not speaks_only_for_household("We think my sister is coming")
    assert not speaks_only_for_household("I'm taking our car")
    assert not speaks_only_for_household("The cat is grey")


@pytest.mark.parametrize(
    "request_part", ["stop", "Cancel", "never mind", "nevermind", "forget it", "no", "stop it now"]
)
def test_stopping_an_enrolment(request_part: str) -> None:
    assert stops_enrolment(request_part)


@pytest.mark.parametrize(
    "request_part",
    [
        "",
        "I went to the shops and bought some bread",
        "the weather is nice",
        "stop it right now ok",
    ],
)
def test_other_sentences_stop_nothing(request_part: str) -> None:
    assert not stops_enrolment(request_part)
