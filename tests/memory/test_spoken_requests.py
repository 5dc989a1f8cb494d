from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lobug.memory.spoken_requests import (
    MAX_TOPIC_CHARS,
    PHRASINGS,
    CancelReminder,
    Correction,
    ForgetLast,
    ForgetTopic,
    ListReminders,
    MemoryRequest,
    SetReminder,
    WhatYouKnow,
    recognise_memory_request,
)


@pytest.mark.parametrize(("said", "means"), PHRASINGS, ids=[p.said for p in PHRASINGS])
def test_every_documented_phrasing_is_recognised(said: str, means: MemoryRequest) -> None:
    assert recognise_memory_request(said) == means


def test_the_phrasings_cover_every_kind() -> None:
    kinds = {type(phrasing.means) for phrasing in PHRASINGS}
    assert kinds == {
        ForgetLast,
        ForgetTopic,
        Correction,
        SetReminder,
        ListReminders,
        CancelReminder,
        WhatYouKnow,
    }


@pytest.mark.parametrize(
    "said",
    [
        "forget that please",
        "FORGET THAT!",
        "  forget   that.  ",
        "Hey Lo-Bug, forget that",
        "hey lobug forget that",
        "ok lo bug forget what i just said",
        "Okay, please forget that, thanks",
        "lobug scratch that",
        "Hey Lo-Bug!!! forget that",
        "oops, delete that",
        "no no, forget that",
        "nevermind forget that",
        "Sorry, forget what I said.",
        "forget what i just told you",
        "forget that i said that",
        "forget the last thing i just said",
        "erase that",
        "delete what I just said",
        "forget that from your memory",
        "forget this",
        "can you please forget that?",
        "would you forget the last thing I said",
        "Please could you delete that",
    ],
)
def test_variants_of_forgetting_the_last_turn(said: str) -> None:
    assert recognise_memory_request(said) == ForgetLast()


@pytest.mark.parametrize(
    ("said", "topic"),
    [
        ("forget what i told you about my sister please", "my sister"),
        ("Forget what I told you about my sister.", "my sister"),
        ("hey lo-bug, forget everything I told you about the dentist", "the dentist"),
        ("forget all that I mentioned about work", "work"),
        ("forget what I just said about the party", "the party"),
        ("forget everything I said to you about Paris", "Paris"),
        ("forget all about my ex", "my ex"),
        ("forget anything you know about my sister’s wedding", "my sister's wedding"),
        ("forget what you know about my health", "my health"),
        ("erase everything about my old address", "my old address"),
        ("Forget about My Sister!", "My Sister"),
        ("forget about that trip to Rome", "that trip to Rome"),
        ("forget about her birthday", "her birthday"),
        ("forget what I told you about my sister and my brother", "my sister and my brother"),
        ("could you forget about the dentist?", "the dentist"),
    ],
)
def test_variants_of_forgetting_a_topic(said: str, topic: str) -> None:
    assert recognise_memory_request(said) == ForgetTopic(topic)


@pytest.mark.parametrize(
    ("said", "subject", "value", "statement"),
    [
        (
            "thats wrong my sisters name is ana",
            "my sisters name",
            "ana",
            "My sisters name is ana.",
        ),
        (
            "That’s wrong, my sister’s name is Ana.",
            "my sister's name",
            "Ana",
            "My sister's name is Ana.",
        ),
        ("that is not right - my car is blue", "my car", "blue", "My car is blue."),
        (
            "That's incorrect. My cats are Tom and Kit",
            "My cats",
            "Tom and Kit",
            "My cats are Tom and Kit.",
        ),
        ("that's not true, actually my dog is named Rex", "my dog", "Rex", "My dog is named Rex."),
        (
            "that's not correct; my first car was a Fiat",
            "my first car",
            "a Fiat",
            "My first car was a Fiat.",
        ),
        ("you're wrong, my name is Sam", "my name", "Sam", "My name is Sam."),
        ("you've got it wrong my town is Braga", "my town", "Braga", "My town is Braga."),
        ("wrong, my age is 34", "my age", "34", "My age is 34."),
        ("hey lobug, that's wrong, my car is blue, thanks", "my car", "blue", "My car is blue."),
        ("no, that is wrong, my car is not blue", "my car", "not blue", "My car is not blue."),
        (
            "correction my email is ana@example.org",
            "my email",
            "ana@example.org",
            "My email is ana@example.org.",
        ),
    ],
)
def test_variants_of_a_correction(said: str, subject: str, value: str, statement: str) -> None:
    assert recognise_memory_request(said) == Correction(subject, value, statement)


NEAR_MISSES = [
    # ordinary turns that contain a request's words
    "don't forget that I have a meeting",
    "I forget that the shop closes early",
    "did you forget that?",
    "forget that?",
    "forget it, what's the weather",
    "forget it",
    "never mind",
    "how do I forget a wifi network",
    "can you forget things",
    "please forget that I have a meeting tomorrow",
    "forget that, what time is it",
    "scratch that, make it six o'clock",
    "delete that alarm",
    "delete the last alarm",
    "remember that my sister's name is Ana",
    "the teacher told me to forget what I said about the essay",
    "I said forget that",
    "what did I tell you about my sister",
    # topics that are brush-offs, too broad, empty, too long or two requests in one
    "forget about it",
    "forget all about it",
    "forget about it for now",
    "forget about that",
    "forget about all of that",
    "forget everything",
    "forget everything about me",
    "forget what I told you about",
    "forget about my sister?",
    "forget about the dentist, what's on tomorrow",
    "forget about the dentist and tell me a joke",
    "forget about " + "x" * MAX_TOPIC_CHARS + "x",
    "forget about the long list of things one two three four five six",
    # corrections with no marker, no new value, or more than a correction
    "my sister's name is Ana",
    "actually, my dog is called Rex",
    "no, my sister's name is Ana",
    "actually my sister is coming over tomorrow",
    "that's wrong",
    "That is not right.",
    "that's wrong, my sister's name is",
    "that's wrong, my sister's name isn't Anna",
    "that's wrong, I live in Porto",
    "that's wrong, it's Ana",
    "is that wrong, my car is blue?",
    "that's wrong, my car is blue. What's the weather?",
    "that's wrong, my car is blue and what's the weather",
    "that's wrong, my car is blue. Tell me a joke",
    "I think that's wrong, my car is blue",
    "he said that's wrong, my car is blue",
    "that's wrong my sister's name is ana and my brother's name is bob",
    "that's wrong, my car that I bought last year from my uncle is blue",
    "",
    "   ",
    "?",
]


@pytest.mark.parametrize("said", NEAR_MISSES)
def test_ordinary_turns_are_not_requests(said: str) -> None:
    assert recognise_memory_request(said) is None


def test_a_long_sentence_is_never_a_request() -> None:
    assert recognise_memory_request("forget what I told you about " + "my sister " * 30) is None


@given(st.text(max_size=300))
def test_anything_said_gives_a_well_formed_answer(said: str) -> None:
    request = recognise_memory_request(said)
    if isinstance(request, ForgetTopic):
        assert 0 < len(request.topic) <= MAX_TOPIC_CHARS
    if isinstance(request, Correction):
        assert request.subject and request.value
        assert request.statement.endswith(".")


@given(st.sampled_from(PHRASINGS), st.sampled_from(["I said ", "they told me to ", "why "]))
def test_a_phrasing_inside_a_longer_sentence_is_not_a_request(
    phrasing: tuple[str, MemoryRequest], before: str
) -> None:
    assert recognise_memory_request(before + phrasing[0].lower()) is None
