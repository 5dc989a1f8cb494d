"""The English words for times and the phrases made of them (`language/times.py`)."""

from __future__ import annotations

from datetime import time, timedelta

import pytest

from lobug.language.times import (
    DUE_PHRASES,
    PAST_PHRASES,
    TIME_AND_AMOUNT_WORDS,
    TONIGHT,
    ClockPhrase,
    Phrases,
    SaidDay,
    clock_phrase,
    count_of,
    duration_in,
    names_a_past_time,
    names_a_time_to_come,
)


def _first(phrases: Phrases, text: str) -> str | None:
    """The name of the first of `phrases` found in `text`: the one its reader takes."""
    lowered = " ".join(text.lower().split())
    return next((name for name, pattern in phrases if pattern.search(lowered)), None)


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("What did we talk about the day before yesterday?", "day before yesterday"),
        ("Yesterday morning I said something", "yesterday"),
        ("last night", "last night"),
        ("What did I say this afternoon?", "this part of the day"),
        ("three weeks ago", "units ago"),
        ("a couple of months ago", "units ago"),
        ("over the weekend", "weekend"),
        ("Last Tuesday", "weekday"),
        ("back in December, 2020", "in a month"),
        ("March 2023", "month and year"),
    ],
)
def test_the_most_specific_past_phrase_comes_first(said: str, name: str) -> None:
    assert _first(PAST_PHRASES, said) == name


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("I'll call her the day after tomorrow", "day after tomorrow"),
        ("tomorrow", "tomorrow"),
        ("this evening", "tonight"),
        ("I'll do it later", "today"),
        ("in 3 days", "in units"),
        ("in a couple of weeks", "in units"),
        ("next weekend", "weekend"),
        ("by Friday", "weekday"),
        ("until August", "by a month"),
    ],
)
def test_the_most_specific_due_phrase_comes_first(said: str, name: str) -> None:
    assert _first(DUE_PHRASES, said) == name


@pytest.mark.parametrize(
    "said", ["We went hiking yesterday.", "I was in Rome last week", "I met Sam 2 years ago"]
)
def test_a_past_time_is_named(said: str) -> None:
    assert names_a_past_time(said)


@pytest.mark.parametrize(
    "said", ["I will call mom tomorrow.", "The report is due by Friday", "in two weeks"]
)
def test_a_time_to_come_is_named(said: str) -> None:
    assert names_a_time_to_come(said)


@pytest.mark.parametrize("said", ["I like Mayday parades", "My name is Alex", "Maybe in a while"])
def test_words_that_only_look_like_times_name_none(said: str) -> None:
    assert not names_a_past_time(said)
    assert not names_a_time_to_come(said)


@pytest.mark.parametrize(("word", "count"), [("3", 3), ("three", 3), ("a", 1), ("a couple of", 2)])
def test_count_of(word: str, count: int) -> None:
    assert count_of(word) == count


@pytest.mark.parametrize(
    ("phrase", "duration"),
    [
        ("in 20 minutes", timedelta(minutes=20)),
        ("in an hour", timedelta(hours=1)),
        ("in half an hour", timedelta(minutes=30)),
        ("in forty five minutes", timedelta(minutes=45)),
        ("in 3 days", timedelta(days=3)),
        ("in two weeks", timedelta(weeks=2)),
    ],
)
def test_duration_in(phrase: str, duration: timedelta) -> None:
    assert duration_in(phrase) == duration


@pytest.mark.parametrize("phrase", ["in a while", "at six", "remind me in 20 minutes"])
def test_no_duration_in_other_phrases(phrase: str) -> None:
    assert duration_in(phrase) is None


@pytest.mark.parametrize(
    ("phrase", "read"),
    [
        ("at six", ClockPhrase(None, (time(6, 0), False), True)),
        ("at 6 pm", ClockPhrase(None, (time(18, 0), True), True)),
        ("at 6 in the morning", ClockPhrase(None, (time(6, 0), True), True)),
        ("at 18:00", ClockPhrase(None, (time(18, 0), True), True)),
        ("at eleven forty-five", ClockPhrase(None, (time(11, 45), False), True)),
        ("at noon", ClockPhrase(None, (time(12, 0), True), True)),
        ("tomorrow at 9 a.m.", ClockPhrase(SaidDay(1), (time(9, 0), True), True)),
        ("tonight at 8", ClockPhrase(SaidDay(0, evening=True), (time(8, 0), False), True)),
        ("today at 5", ClockPhrase(SaidDay(0, today=True), (time(5, 0), False), True)),
        ("at midnight on friday", ClockPhrase(SaidDay(weekday=4), (time(0, 0), True), True)),
        ("next sunday", ClockPhrase(SaidDay(weekday=6), None, False)),
        ("at 25", ClockPhrase(None, None, True)),  # a clock that is none
        ("tomorrow at 24:00", ClockPhrase(SaidDay(1), None, True)),
        ("at 13 pm", ClockPhrase(None, None, True)),
    ],
)
def test_clock_phrase(phrase: str, read: ClockPhrase) -> None:
    assert clock_phrase(phrase) == read


@pytest.mark.parametrize("phrase", ["in 20 minutes", "six", "at six and seven", "the weekend"])
def test_no_clock_in_other_phrases(phrase: str) -> None:
    assert clock_phrase(phrase) is None


def test_tonight_is_the_evenings_start() -> None:
    assert time(18, 0) == TONIGHT


@pytest.mark.parametrize("word", ["monday", "march", "morning", "three", "noon", "twice"])
def test_time_and_amount_words(word: str) -> None:
    assert word in TIME_AND_AMOUNT_WORDS


@pytest.mark.parametrize("word", ["a", "an", "couple of", "dog", "Monday"])
def test_other_words_tell_no_time_or_amount(word: str) -> None:
    assert word not in TIME_AND_AMOUNT_WORDS
