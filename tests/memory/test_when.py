"""Time phrases resolved against a fixed clock: Wednesday 13 March 2024, 10:30 in Berlin."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from lobug.clock import span_text, time_text
from lobug.memory.when import time_window

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2024, 3, 13, 10, 30, tzinfo=BERLIN)


def at(*parts: int, zone: ZoneInfo = BERLIN) -> float:
    return datetime(*parts, tzinfo=zone).timestamp()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("What did we talk about yesterday?", (2024, 3, 12), (2024, 3, 13)),
        ("what did I say YESTERDAY morning", (2024, 3, 12, 5), (2024, 3, 12, 12)),
        ("and the day before yesterday?", (2024, 3, 11), (2024, 3, 12)),
        ("what did I tell you last night", (2024, 3, 12, 18), (2024, 3, 13, 6)),
        ("what did I say this morning", (2024, 3, 13, 5), (2024, 3, 13, 12)),
        ("anything earlier today?", (2024, 3, 13), (2024, 3, 14)),
        ("what about last Tuesday", (2024, 3, 12), (2024, 3, 13)),
        ("on Wednesday we spoke", (2024, 3, 6), (2024, 3, 7)),
        ("what did we say on friday", (2024, 3, 8), (2024, 3, 9)),
        ("two weeks ago I mentioned", (2024, 2, 26), (2024, 3, 4)),
        ("3 days ago", (2024, 3, 10), (2024, 3, 11)),
        ("a couple of days ago", (2024, 3, 11), (2024, 3, 12)),
        ("a month ago", (2024, 2, 1), (2024, 3, 1)),
        ("last week", (2024, 3, 4), (2024, 3, 11)),
        ("this week", (2024, 3, 11), (2024, 3, 18)),
        ("over the weekend", (2024, 3, 9), (2024, 3, 11)),
        ("last month", (2024, 2, 1), (2024, 3, 1)),
        ("this month", (2024, 3, 1), (2024, 4, 1)),
        ("last year", (2023, 1, 1), (2024, 1, 1)),
        ("the trip in March", (2024, 3, 1), (2024, 4, 1)),
        ("what happened in June?", (2023, 6, 1), (2023, 7, 1)),
        ("in December 2022", (2022, 12, 1), (2023, 1, 1)),
        ("May 2021 was busy", (2021, 5, 1), (2021, 6, 1)),
        ("three months ago", (2023, 12, 1), (2024, 1, 1)),
    ],
)
def test_phrases_resolve_to_their_window(
    question: str, start: tuple[int, ...], end: tuple[int, ...]
) -> None:
    window = time_window(question, NOW)
    assert window is not None
    assert (window.start, window.end) == (at(*start), at(*end))


@pytest.mark.parametrize("question", ["what is my sister's name?", "I may go", "Mayday", ""])
def test_text_without_a_time_has_no_window(question: str) -> None:
    assert time_window(question, NOW) is None


def test_the_window_is_in_the_users_time_zone() -> None:
    new_york = ZoneInfo("America/New_York")
    now = datetime(2024, 3, 13, 1, 0, tzinfo=new_york)
    window = time_window("yesterday", now)
    assert window is not None
    assert window.start == at(2024, 3, 12, zone=new_york)
    assert window.holds(at(2024, 3, 12, 23, 59, zone=new_york))
    assert not window.holds(at(2024, 3, 13, 0, 0, zone=new_york))


def test_the_phrase_it_was_read_from_is_kept() -> None:
    window = time_window("What did we say Last  Tuesday about the trip?", NOW)
    assert window is not None
    assert window.phrase == "last tuesday"


def test_last_weekday_on_that_weekday_is_a_week_back() -> None:
    window = time_window("last wednesday", NOW)
    assert window is not None
    assert window.start == at(2024, 3, 6)


def test_times_and_spans_are_written_in_the_users_zone() -> None:
    start, end = at(2024, 3, 12, 19, 0), at(2024, 3, 12, 19, 45)
    assert time_text(start, BERLIN) == "Tue 2024-03-12 19:00"
    assert span_text(start, end, 0.0, BERLIN) == "Tue 2024-03-12 19:00 to 19:45"
    later = at(2024, 3, 13, 1, 0)
    assert span_text(start, later, 0.0, BERLIN) == "Tue 2024-03-12 19:00 to Wed 2024-03-13 01:00"
    assert span_text(None, None, start, BERLIN) == "Tue 2024-03-12 19:00"
