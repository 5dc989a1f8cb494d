"""Which sentences speak of the person, and the words that type a statement
(`language/disclosure.py`)."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize(
    ("said", "of_self"),
    [
        ("I live in Leeds.", True),
        ("My sister is a nurse.", True),
        ("We're moving in May.", True),
        ("Our dog is called Biscuit.", True),
        ("Leo is seven years old.", False),
        ("Mine is the blue one.", True),
        ("The weather is nice.", False),
    ],
)
def test_sentences_about_the_person(said: str, of_self: bool) -> None:
    assert speaks_of_self(said) is of_self


@pytest.mark.parametrize(
    ("said", "asks"),
    [
        ("Can you set a timer?", True),
        ("What is my name", True),
        ("Remind me to call Anna.", True),
        ("Hey, I'm back.", True),
        ("I can swim.", False),
        ("Canada is big.", False),  # a word that only begins with "can"
    ],
)
def test_sentences_that_open_as_a_request(said: str, asks: bool) -> None:
    assert opens_as_request(said) is asks


@pytest.mark.parametrize(
    ("said", "chitchat"),
    [
        ("Thanks a lot.", True),
        ("That's great.", True),
        ("Sure, whatever.", True),
        ("Leo is seven.", False),
        ("Thursday is my day off.", False),
    ],
)
def test_sentences_that_open_as_chitchat(said: str, chitchat: bool) -> None:
    assert opens_as_chitchat(said) is chitchat


@pytest.mark.parametrize(
    ("said", "statement"),
    [
        ("By the way, my name is Marta.", "my name is Marta."),
        ("Oh, and also I work at NASA.", "I work at NASA."),
        ("btw I'm vegan", "I'm vegan"),
        ("Sorry, I'm late.", "Sorry, I'm late."),
        ("Soon I will move.", "Soon I will move."),  # "so" only as a word
    ],
)
def test_the_aside_before_a_statement_goes(said: str, statement: str) -> None:
    assert without_aside(said) == statement


@pytest.mark.parametrize(
    ("said", "addressed"),
    [
        ("You are very helpful.", True),
        ("Biscuit likes your voice.", True),
        ("Biscuit is a golden retriever.", False),
        ("Leo is young.", False),  # "you" only inside a word
    ],
)
def test_words_to_the_assistant(said: str, addressed: bool) -> None:
    assert addresses_you(said) is addressed


def test_the_types_are_tried_in_their_order() -> None:
    assert STATEMENT_TYPES == (
        "identity",
        "commitment",
        "constraint",
        "habit",
        "event",
        "preference",
        "trait",
    )


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("identity", "My name is Alex."),
        ("identity", "I was born in Oslo."),
        ("commitment", "I'll call Anna tomorrow."),
        ("commitment", "I promised to bake a cake."),
        ("constraint", "I can't eat nuts."),
        ("constraint", "I'm allergic to cats."),
        ("habit", "I swim every Saturday."),
        ("habit", "On weekends I sleep in."),
        ("preference", "I really love jazz."),
        ("preference", "My favorite colour is green."),
        ("trait", "I speak Spanish."),
        ("trait", "I'm learning the piano."),
    ],
)
def test_the_words_of_each_type(kind: str, said: str) -> None:
    assert has_words_of(kind, said)


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("commitment", "I must not eat sugar."),  # a constraint
        ("constraint", "I can't stand jazz."),  # a preference
        ("preference", "I likewise agree."),  # "like" only inside a word
        ("trait", "I can fly."),
        ("event", "On Friday I'm hiking."),  # an event has no words: its times are when.py's
        ("unknown", "My name is Alex."),
    ],
)
def test_words_that_are_not_of_the_type(kind: str, said: str) -> None:
    assert not has_words_of(kind, said)


@pytest.mark.parametrize(
    ("said", "place"),
    [
        ("We are going to Norway in June.", True),
        ("I'm going to the coast.", True),
        ("I am going to a concert.", True),
        ("I'm going to call Anna.", False),  # a promise
    ],
)
def test_going_to_a_place(said: str, place: bool) -> None:
    assert goes_to_a_place(said) is place


@pytest.mark.parametrize(
    ("said", "past"),
    [
        ("I went to Paris last year.", True),
        ("We visited my aunt.", True),
        ("I just finished the book.", True),
        ("I need a new phone.", False),  # "need" ends in -ed, and is no past
        ("I go to Paris every year.", False),
        ("She visited us.", False),  # not the person
    ],
)
def test_what_was_done(said: str, past: bool) -> None:
    assert is_past(said) is past
