"""How a person asks to be forgotten and says yes, and the words of the spoken memory
requests (`language/requests.py`)."""

from __future__ import annotations

import pytest

from lobug.language.requests import (
    TIME_STARTS,
    TIME_THEN_TASK,
    asks_for_reminders,
    asks_to_forget_last,
    asks_to_forget_me,
    asks_what_you_know,
    cancelled_reminder,
    confirms,
    corrected_fact,
    forgotten_topic,
    has_second_statement,
    is_one_clause,
    learn_voice_rule,
    names_something,
    polite_ask,
    reminder_asked,
    renamed_fact,
    without_sign_off,
    without_to,
)


@pytest.mark.parametrize(
    "said",
    [
        "Forget everything about me.",
        "Hey Lo-Bug, please erase all you know about me",
        "Could you delete me, thanks!",
        "Forget everything about me. Thank you.",  # as whisper writes a pause
    ],
)
def test_asking_to_be_forgotten(said: str) -> None:
    assert asks_to_forget_me(said)


@pytest.mark.parametrize(
    "said", ["Forget my dentist appointment.", "Don't forget me.", "Forget everything about Sam."]
)
def test_other_sentences_ask_nothing(said: str) -> None:
    assert not asks_to_forget_me(said)


@pytest.mark.parametrize(
    "said",
    ["Yes.", "Yes, forget me.", "Okay, go ahead", "Yes, please forget everything. Thank you."],
)
def test_saying_yes(said: str) -> None:
    assert confirms(said)


@pytest.mark.parametrize("said", ["No.", "Yes, but not my notes.", "What is my name?"])
def test_anything_else_is_no_yes(said: str) -> None:
    assert not confirms(said)


# The spoken memory requests (`memory/spoken_requests.py` reads them after the lead-in).


@pytest.mark.parametrize(
    ("said", "left"),
    [
        ("Could you please forget that", "forget that"),
        ("can you remind me", "remind me"),
        ("Will you forget that", "forget that"),
    ],
)
def test_a_polite_ask_opens_a_request(said: str, left: str) -> None:
    polite = polite_ask(said)
    assert polite is not None
    assert said[polite.end() :] == left


@pytest.mark.parametrize("said", ["You could forget that", "Can we forget that", "forget that"])
def test_other_openings_are_no_polite_ask(said: str) -> None:
    assert polite_ask(said) is None


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("forget that, thanks!", "forget that"),
        ("forget that please thank you.", "forget that"),
        ("forget that, Lo-Bug", "forget that"),
        ("forget that", "forget that"),
        ("thanks", "thanks"),  # a sign-off needs a request before it
    ],
)
def test_the_sign_off_is_dropped(said: str, asked: str) -> None:
    assert without_sign_off(said) == asked


@pytest.mark.parametrize(
    "said",
    [
        "forget that",
        "Forget what I just said",
        "forget I said that",
        "forget the last thing I said from your memory",
        "forget my last message",
        "scratch that",
        "delete what I said",
    ],
)
def test_forgetting_the_last_turn(said: str) -> None:
    assert asks_to_forget_last(said)


@pytest.mark.parametrize("said", ["forget it", "forget about that", "delete my notes"])
def test_other_sentences_forget_no_last_turn(said: str) -> None:
    assert not asks_to_forget_last(said)


@pytest.mark.parametrize(
    ("said", "topic"),
    [
        ("Forget what I told you about my sister", "my sister"),
        ("forget everything you know about my old job", "my old job"),
        ("forget about the party", "the party"),
        ("scratch that thing about the car", "the car"),
        ("don't remember my allergy anymore", "my allergy"),
        ("stop remembering my old address", "my old address"),
        ("forget that", None),
        ("tell me about my sister", None),
    ],
)
def test_the_topic_to_forget(said: str, topic: str | None) -> None:
    assert forgotten_topic(said) == topic


def test_a_corrected_fact() -> None:
    match = corrected_fact("That's wrong, my sister's name is Ana")
    assert match is not None
    assert (match["subject"], match["value"]) == ("my sister's name", "Ana")
    assert match["statement"] == "my sister's name is Ana"
    rex = corrected_fact("you got that wrong: my dog is called Rex")
    assert rex is not None
    assert rex["value"] == "Rex"


@pytest.mark.parametrize("said", ["That's wrong", "my car is blue", "no, my car is blue"])
def test_no_correction_without_a_marker_and_a_statement(said: str) -> None:
    assert corrected_fact(said) is None


def test_a_new_name_said_with_now() -> None:
    match = renamed_fact("actually my dog is called Pretzel now")
    assert match is not None
    assert (match["subject"], match["verb"], match["value"]) == ("my dog", "called", "Pretzel")
    pepper = renamed_fact("my dog's name is actually Pepper now")
    assert pepper is not None
    assert (pepper["subject"], pepper["verb"], pepper["value"]) == ("my dog's name", "", "Pepper")
    assert renamed_fact("my sister is coming over now") is None  # no capitalised name


@pytest.mark.parametrize(
    ("said", "rest"),
    [("remind me to call Anna at six", "to call Anna at six"), ("remind me", None)],
)
def test_what_a_reminder_asks(said: str, rest: str | None) -> None:
    assert reminder_asked(said) == rest


def test_where_a_reminders_time_and_task_part() -> None:
    assert [m.start() for m in TIME_THEN_TASK.finditer("at six to call Anna")] == [6]
    assert [m.start() for m in TIME_STARTS.finditer("to call Anna at six")] == [12]
    assert without_to("to call Anna") == "call Anna"
    assert without_to("call Anna") == "call Anna"


@pytest.mark.parametrize(
    "said",
    [
        "what reminders do I have",
        "What are my reminders",
        "list my reminders",
        "do I have any reminders",
    ],
)
def test_asking_for_the_reminders(said: str) -> None:
    assert asks_for_reminders(said)


@pytest.mark.parametrize(
    ("said", "about", "named"),
    [
        ("Cancel the reminder about Anna", "Anna", None),
        ("cancel my reminder to call Anna", "call Anna", None),
        ("Cancel all my reminders", None, None),
        ("cancel the vet reminder", None, "vet"),
    ],
)
def test_cancelling_a_reminder(said: str, about: str | None, named: str | None) -> None:
    match = cancelled_reminder(said)
    assert match is not None
    assert (match["about"], match["named"]) == (about, named)


@pytest.mark.parametrize("said", ["cancel my dentist appointment", "remind me to cancel"])
def test_other_sentences_cancel_no_reminder(said: str) -> None:
    assert cancelled_reminder(said) is None
    assert not asks_for_reminders(said)


@pytest.mark.parametrize(
    "said",
    ["what do you know about me", "What do you remember about me", "what have I told you"],
)
def test_asking_what_memory_holds(said: str) -> None:
    assert asks_what_you_know(said)


def test_what_memory_holds_is_about_the_person() -> None:
    assert not asks_what_you_know("what do you know about Paris")


def test_learning_a_voice() -> None:
    rule = learn_voice_rule(r"i'?m\s+(?P<{group}>\w+)")
    after = rule.fullmatch("Learn my voice, I'm Jordan")
    before = rule.fullmatch("I'm Jordan, please, recognise my voice")
    assert after is not None and after["after"] == "Jordan"
    assert before is not None and before["before"] == "Jordan"
    assert rule.fullmatch("remember my voice") is not None
    assert rule.fullmatch("learn my song") is None


@pytest.mark.parametrize(
    ("topic", "names"),
    [
        ("my sister", True),
        ("it", False),
        ("them all", False),
        ("everything", False),
        ("that stuff", False),
        ("the party", True),
    ],
)
def test_a_topic_names_something(topic: str, names: bool) -> None:
    assert names_something(topic.split()) is names


@pytest.mark.parametrize(
    ("words", "one"),
    [
        ("my sister", True),
        ("my sister, what's the weather", False),
        ("my sister and tell me a joke", False),
        ("bread and butter", True),
        ("the 3rd of May", True),
    ],
)
def test_one_clause(words: str, one: bool) -> None:
    assert is_one_clause(words) is one


@pytest.mark.parametrize(
    ("value", "second"),
    [("Ana", False), ("Ana and my brother's name is Bob", True), ("blue", False)],
)
def test_a_second_statement(value: str, second: bool) -> None:
    assert has_second_statement(value) is second
