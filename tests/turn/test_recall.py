"""Answers from memory without the model (`memory/recall.py`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lobug.language.text import fact_said_to_the_user
from lobug.store.models import Fact, ScoredFact
from lobug.turn.recall import (
    acknowledgement,
    answer_from_facts,
    answer_from_memory,
    asked_words,
)


def facts(*texts: str) -> list[ScoredFact]:
    no_triple = (None, None, None, None)
    return [
        ScoredFact(
            Fact(n, "lobug", text, "identity", *no_triple, 1.0, None, (), 0, 0, None, None), 0.9
        )
        for n, text in enumerate(texts, 1)
    ]


KNOWN = facts(
    "The user's name is Jordan Reyes",
    "The user works as a nurse at St Mary's hospital",
    "The user has a dog called Biscuit",
    "The user's sister Sasha lives in Porto",
    "The user was born in Bergen",
    "The user's daughter is called Ottilie",
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What's my name?", "Your name is Jordan Reyes."),
        ("Do you remember my name?", "Yes. Your name is Jordan Reyes."),
        ("What is my dog called?", "You have a dog called Biscuit."),
        ("what's my dog's name", "You have a dog called Biscuit."),
        ("Where was I born?", "You were born in Bergen."),
        ("Hey Lo-Bug, where does my sister live?", "Your sister Sasha lives in Porto."),
        ("Where do I work?", "You work as a nurse at St Mary's hospital."),
        ("What’s my daughter’s name?", "Your daughter is called Ottilie."),
    ],
)
def test_a_question_about_the_person_is_answered_with_the_fact(question: str, answer: str) -> None:
    assert answer_from_facts(question, KNOWN) == answer


@pytest.mark.parametrize(
    "text",
    [
        "How do I make a good cup of tea?",  # advice, not memory
        "What should I cook tonight?",
        "What is the capital of France?",  # not about the person
        "My dog is called Biscuit.",  # a statement: news, for the model and extraction
        "What is my cat called?",  # no fact holds "cat"
        "What is my son's name?",  # nor "son": never borrowed from the daughter
        "Tell me a joke about my dog",  # no question word first, no question mark
    ],
)
def test_anything_else_goes_to_the_model(text: str) -> None:
    assert answer_from_facts(text, KNOWN) is None


def test_the_asked_words_leave_out_how_it_is_asked() -> None:
    assert asked_words("Do you remember what my dog is called?") == ["dog", "called"]
    assert asked_words("Can you tell me my sister's name again?") == ["sister", "name"]


@pytest.mark.parametrize(
    "said",
    [
        # News about the person, then a request: the question is the request.
        "My favourite food is pizza with mushrooms. Can you suggest a good recipe?",
        "Tomorrow I want to visit my sister Emma in Berlin. What should I bring her?",
        "I am planning a trip to the mountains next week. What should I pack for it?",
        "Is it cold out? My dog needs a walk.",  # the question is not about the person
    ],
)
def test_only_the_question_of_several_sentences_is_read(said: str) -> None:
    assert asked_words(said) == []


def test_a_question_about_the_person_after_news_is_still_answered() -> None:
    assert asked_words("I'm back from work. What is my dog called?") == ["dog", "called"]
    assert answer_from_facts("I have news. Where was I born?", KNOWN) == "You were born in Bergen."


@pytest.mark.parametrize(
    ("fact", "said"),
    [
        ("The user's dog is called Biscuit", "Your dog is called Biscuit."),
        ("The user is allergic to peanuts.", "You are allergic to peanuts."),
        ("The user studies physics", "You study physics."),
        ("The user really likes jazz", "You really like jazz."),
        ("The user watches films with the user's sister", "You watch films with your sister."),
        ("The user has two kids", "You have two kids."),
        ("Biscuit is a golden retriever", "Biscuit is a golden retriever."),
    ],
)
def test_a_fact_is_said_in_the_second_person(fact: str, said: str) -> None:
    assert fact_said_to_the_user(fact) == said


FAMILY = facts(
    "The user's name is Marta",
    "The user's partner Jonas is a carpenter, he builds furniture",
    "The user plays the cello in a community orchestra on Thursdays",
    "The user's daughter Lina is seven and she's crazy about dinosaurs",
    "The user works as a pediatric nurse at the Riverside clinic",
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What's my partner called?", "Your partner Jonas is a carpenter, he builds furniture."),
        (
            "Which instrument do I play?",
            "You play the cello in a community orchestra on Thursdays.",
        ),
        ("What's my name?", "Your name is Marta."),  # any name does not answer for "name"
    ],
)
def test_a_name_in_the_fact_or_the_thing_a_which_asks_for_answers(
    question: str, answer: str
) -> None:
    assert answer_from_facts(question, FAMILY) == answer


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (
            "Any idea what to get my daughter, remember what she likes?",
            "Here's what I know: your daughter Lina is seven and she's crazy about dinosaurs.",
        ),
        ("What's my son's name?", "You haven't told me about your son."),
        ("What's our cat called?", "You haven't told me about your cat."),
        ("Which football team do I support?", "You haven't told me that yet."),
    ],
)
def test_a_model_not_asked_about_the_person_gets_what_memory_holds_or_an_unknown(
    question: str, answer: str
) -> None:
    assert answer_from_facts(question, FAMILY, memory_only=True) == answer
    assert answer_from_facts(question, FAMILY) is None  # a trusted model answers these


@pytest.mark.parametrize(
    "text",
    [
        "And my mother?",  # after advice about the sister: a follow-up, not a memory question
        "I'm grabbing a snack at work, anything I should stay away from?",
        "Should we pack shorts for our holiday?",
        "Can you give me a recipe for pancakes?",
    ],
)
def test_questions_that_ask_for_no_memory_stay_the_models(text: str) -> None:
    assert answer_from_facts(text, FAMILY, memory_only=True) is None


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("Hi! By the way, my name is Marta.", "Got it: your name is Marta."),
        (
            "We have a beagle named Biscuit.",
            "Got it: you and your family have a beagle named Biscuit.",
        ),
        ("I still drive my old red Volvo.", "Got it: you still drive your old red Volvo."),
    ],
)
def test_a_turn_that_only_tells_about_the_person_is_said_back(said: str, answer: str) -> None:
    assert acknowledgement(said) == answer


@pytest.mark.parametrize(
    "said",
    [
        "Can you give me a simple recipe for pancakes?",
        "Thanks, that's all for now.",
        "I love hiking. What should I pack?",
        "Lina also loves drawing and strawberries.",  # about someone memory does not name
    ],
)
def test_any_other_turn_is_not_said_back(said: str) -> None:
    assert acknowledgement(said) is None


def test_a_question_about_the_person_gets_the_fact_clearly_nearest_in_meaning() -> None:
    """Cosines measured with the bundled embedder for "I'm grabbing a snack at work, anything
    I should stay away from?" (0.33, 0.14) and "... who could pick up our daughter today?"
    (0.27, 0.23): only the first has a clear nearest fact."""
    allergy = replace(FAMILY[0].fact, content="The user is allergic to peanuts")
    dog = FAMILY[1].fact
    snack = "I'm grabbing a snack at work, anything I should stay away from?"
    clear = [ScoredFact(allergy, 0.33), ScoredFact(dog, 0.14)]
    assert (
        answer_from_facts(snack, clear, memory_only=True)
        == "From what you told me: you are allergic to peanuts."
    )
    close = [ScoredFact(allergy, 0.27), ScoredFact(dog, 0.23)]
    assert answer_from_facts(snack, close, memory_only=True) is None
    faint = [ScoredFact(allergy, 0.12)]
    assert answer_from_facts(snack, faint, memory_only=True) is None
    assert answer_from_facts(snack, clear) is None  # a trusted model answers it


def test_what_a_question_is_doing_asks_about_the_day_not_the_word() -> None:
    hiking = facts("The user is hiking at Multnomah Falls on Friday")
    assert (
        answer_from_facts("What am I doing on Friday?", hiking, memory_only=True)
        == "You are hiking at Multnomah Falls on Friday."
    )


def test_a_statement_about_someone_memory_names_is_said_back_too() -> None:
    said = "Lina also loves drawing and strawberries."
    assert acknowledgement(said, FAMILY) == f"Got it: {said}"


def test_a_name_never_told_is_said_unknown_as_a_name() -> None:
    nameless = facts("The user plays the cello")
    said = answer_from_facts("Do you remember my name?", nameless, memory_only=True)
    assert said == "You haven't told me your name."


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What's our dog's name?", "You and your family have a beagle named Biscuit."),
        ("What breed is our dog?", "You and your family have a beagle named Biscuit."),
    ],
)
def test_a_thing_is_known_by_its_kind(question: str, answer: str) -> None:
    beagle = facts("The user and their family have a beagle named Biscuit")
    assert answer_from_facts(question, beagle) == answer
    unknown = answer_from_facts("What's our cat called?", beagle, memory_only=True)
    assert unknown == "You haven't told me about your cat."


def test_advice_about_something_of_theirs_gets_the_fact_it_must_weigh() -> None:
    """Cosines measured with the bundled embedder: the holiday question against the Lisbon
    fact 0.20, against any other 0.01."""
    trip = replace(FAMILY[0].fact, content="The user is off to Lisbon in August for a holiday")
    other = FAMILY[1].fact
    clear = [ScoredFact(trip, 0.20), ScoredFact(other, 0.01)]
    holiday = "Should I pack shorts or a winter coat for our holiday?"
    assert (
        answer_from_facts(holiday, clear, memory_only=True)
        == "From what you told me: you are off to Lisbon in August for a holiday."
    )
    assert answer_from_facts(holiday, clear) is None  # a trusted model advises
    close = [ScoredFact(trip, 0.20), ScoredFact(other, 0.15)]
    assert answer_from_facts(holiday, close, memory_only=True) is None
    nothing_of_theirs = "How long should I boil an egg for a soft yolk?"
    assert answer_from_facts(nothing_of_theirs, clear, memory_only=True) is None
    not_held = "Should I wash my car today?"  # the nearest fact says nothing of a car
    assert answer_from_facts(not_held, clear, memory_only=True) is None


def test_a_name_said_earlier_in_the_conversation_is_known_before_it_is_learned() -> None:
    said = "Lina also loves drawing and strawberries."
    before = ["Our daughter Lina is seven and she's crazy about dinosaurs."]
    assert answer_from_memory(said, [], memory_only=True, said_before=before) == f"Got it: {said}"
    assert answer_from_memory(said, [], memory_only=True) is None  # nobody named: the model's
