"""The English words for times and the phrases made of them: what "yesterday", "in 20
minutes", "tomorrow at six" or "on Friday" say. `memory/when.py` does the arithmetic (the
window of time a question asks about, when a promise is due, when a reminder rings);
`memory/dream.py` asks `TIME_AND_AMOUNT_WORDS` what tells one time or amount from another.

- `PAST_PHRASES`: the phrases naming a time gone by ("yesterday morning", "3 days ago",
  "last Tuesday", "in March 2023"), most specific first, each named by its meaning;
  `when.time_window` gives each its window, the first found wins.
- `DUE_PHRASES`: the phrases naming a time to come ("tomorrow", "in 3 days", "on Friday",
  "by March"), most specific first; `when.due_time` gives each its moment.
- `names_a_past_time` / `names_a_time_to_come`: whether a sentence holds one of them
  (`memory/disclosure.py`: what was done at a time said, or a plan, is an event).
- `duration_in` and `clock_phrase`: a reminder's whole phrase, read for `when.ring_time`:
  "in 20 minutes", "in half an hour"; "at six", "at 6:30", "at 6 pm", "at noon", with or
  without a day ("today", "tonight", "tomorrow", "(on) (next) Friday") before or after it.

Case does not matter where the functions take a sentence; `duration_in` and `clock_phrase`
take the phrase lower case, one space between words (`when.ring_time` makes it so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "couple of": 2,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
# Parts of a day, as hours from midnight [start, end).
DAY_PARTS = {"morning": (5, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}
# "tonight" as one time (a reminder, a promise due): the evening's start, whoever reads it.
TONIGHT = time(DAY_PARTS["evening"][0], 0)

# Words written in lower case that tell one time or amount from another as a name or a digit
# does: "in the morning" / "in the evening", "on monday" / "on friday", "two cats" / "three".
TIME_AND_AMOUNT_WORDS = (
    frozenset(WEEKDAYS)
    | frozenset(MONTHS)
    | frozenset(DAY_PARTS)
    | frozenset(word for word in NUMBERS if " " not in word and len(word) > 2)
    | frozenset(
        """noon midnight tonight today tomorrow yesterday weekend weekends weekday weekdays
        spring summer autumn winter daily weekly monthly yearly am pm first second third fourth
        fifth last next twenty thirty forty fifty hundred thousand half once twice""".split()
    )
)

_COUNT = "(" + "|".join([r"\d+", *NUMBERS]) + ")"
_WEEKDAY = "(" + "|".join(WEEKDAYS) + ")"
_MONTH = "(" + "|".join(MONTHS) + ")"

Phrases = tuple[tuple[str, re.Pattern[str]], ...]


def _phrases(*named: tuple[str, str]) -> Phrases:
    return tuple((name, re.compile(rf"\b{pattern}\b")) for name, pattern in named)


# Most specific first: "the day before yesterday" before "yesterday", "last night" before
# "last <weekday>". Groups: a count's word and its unit ("3 days ago": "3", "day"), a weekday,
# a month and its year, `part` a part of the day.
PAST_PHRASES = _phrases(
    ("day before yesterday", r"(?:the )?day before yesterday"),
    ("yesterday", r"yesterday(?: (?P<part>morning|afternoon|evening))?"),
    ("last night", r"last night"),
    ("this part of the day", r"this (?P<part>morning|afternoon|evening)"),
    ("tonight", r"tonight"),
    ("today", r"(?:earlier )?today"),
    ("units ago", rf"{_COUNT} (day|week|month|year)s? ago"),
    ("this week", r"this week"),
    ("last week", r"last week"),
    ("weekend", r"last weekend|over the weekend|this weekend"),
    ("this month", r"this month"),
    ("last month", r"last month"),
    ("this year", r"this year"),
    ("last year", r"last year"),
    ("weekday", rf"(?:last |on |this past )?{_WEEKDAY}"),
    ("in a month", rf"(?:in|during|last|since|back in) {_MONTH}(?:,? (\d{{4}}))?"),
    ("month and year", rf"{_MONTH} (\d{{4}})"),
)
# Phrases naming a time to come, most specific first: when a commitment is due.
DUE_PHRASES = _phrases(
    ("day after tomorrow", r"(?:the )?day after tomorrow"),
    ("tomorrow", r"tomorrow"),
    ("tonight", r"tonight|this evening"),
    ("this afternoon", r"this afternoon"),
    ("today", r"today|later"),
    ("in units", rf"in {_COUNT} (day|week|month|year)s?"),
    ("next week", r"next week"),
    ("weekend", r"(?:this|next) weekend"),
    ("next month", r"next month"),
    ("next year", r"next year"),
    ("weekday", rf"(?:on |by |next |this |until |before )?{_WEEKDAY}"),
    ("by a month", rf"(?:in|by|until|before) {_MONTH}"),
)


def _lowered(text: str) -> str:
    return " ".join(text.lower().split())


def names_a_past_time(text: str) -> bool:
    """Whether `text` names a time gone by ("yesterday", "last week", "on Monday")."""
    lowered = _lowered(text)
    return any(pattern.search(lowered) for _, pattern in PAST_PHRASES)


def names_a_time_to_come(text: str) -> bool:
    """Whether `text` names a time to come ("tomorrow", "in 3 days", "by Friday")."""
    lowered = _lowered(text)
    return any(pattern.search(lowered) for _, pattern in DUE_PHRASES)


def count_of(word: str) -> int:
    """The number a count says: "3", "three", "a", "a couple of"."""
    return int(word) if word.isdigit() else NUMBERS[word]


# ---------------------------------------------------------------------- when a reminder rings

# The numbers a reminder's phrase reads ("one" to "twelve", "a", "a couple of"), and the
# minutes of a clock.
CLOCK_NUMBERS = {
    **NUMBERS,
    **{"fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50},
    **{"forty five": 45, "forty-five": 45},
}
# The clock times said by name, and the days said by name, as days from today.
NAMED_CLOCK = {"noon": time(12, 0), "midnight": time(0, 0)}
DAYS_AHEAD = {"today": 0, "tonight": 0, "tomorrow": 1}

_NUMBER = r"(?:\d{1,3}|" + "|".join(sorted(map(re.escape, CLOCK_NUMBERS), key=len)[::-1]) + ")"
_IN = re.compile(
    rf"in\s+(?:(?P<half>half\s+an\s+hour)|(?P<n>{_NUMBER})\s+(?P<unit>minutes?|mins?|hours?|days?|weeks?))"
)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DAY = (
    r"(?P<day>" + "|".join(DAYS_AHEAD) + r"|(?:on\s+)?(?:next\s+)?(?:" + "|".join(WEEKDAYS) + "))"
)
_CLOCK = (
    r"at\s+(?:(?P<named>"
    + "|".join(NAMED_CLOCK)
    + r")|(?P<hour>\d{1,2}|"
    + "|".join(w for w in CLOCK_NUMBERS if CLOCK_NUMBERS[w] <= 12 and " " not in w and len(w) > 2)
    + r")(?:(?::|\s)(?P<minute>\d{2}|fifteen|thirty|forty[\s-]five))?"
    r"(?:\s*(?P<meridian>a\.?\s?m\.?|p\.?\s?m\.?|o'?clock)"
    r"|\s+in\s+the\s+(?P<part>morning|afternoon|evening)|\s+at\s+night)?)"
)
# A day and a clock time, in either order, or either alone.
_AT = tuple(re.compile(p) for p in (rf"(?:{_DAY}\s+)?{_CLOCK}", rf"{_CLOCK}\s+{_DAY}", _DAY))


@dataclass(frozen=True)
class SaidDay:
    """A day a reminder's phrase names: `ahead` days from today ("today", "tonight": 0;
    "tomorrow": 1), else the next `weekday` after today (0 Monday: "on Friday", "next
    Friday"). `evening`: "tonight" (its clock is the evening's); `today`: "today" (its clock
    is the next time the clock shows it)."""

    ahead: int | None = None
    weekday: int | None = None
    evening: bool = False
    today: bool = False


@dataclass(frozen=True)
class ClockPhrase:
    """A reminder's whole phrase with a clock time or a day: the day (None: none said), the
    time of day and whether it is exact (False: "six" may be 6 or 18; None: none said, or
    one said that is none, "at 25", which `clock_said` tells)."""

    day: SaidDay | None
    clock: tuple[time, bool] | None
    clock_said: bool


def duration_in(phrase: str) -> timedelta | None:
    """How long from now the whole `phrase` says ("in 20 minutes", "in an hour", "in half an
    hour", "in 3 days", "in two weeks"); None when it is no such phrase."""
    match = _IN.fullmatch(phrase)
    if match is None:
        return None
    if match["half"]:
        return timedelta(minutes=30)
    count = _clock_number(match["n"])
    return timedelta(**{_UNITS[match["unit"][0]]: count})


def clock_phrase(phrase: str) -> ClockPhrase | None:
    """The whole `phrase` read as a clock time and a day ("at six", "tomorrow at 9 am", "at
    noon on Friday", "tonight"); None when it is no such phrase."""
    match = next((m for m in (p.fullmatch(phrase) for p in _AT) if m is not None), None)
    if match is None:
        return None
    groups = {k: v for k, v in match.groupdict().items() if v is not None}
    day = _said_day(groups["day"]) if "day" in groups else None
    return ClockPhrase(day, _clock(groups), "hour" in groups or "named" in groups)


def _said_day(words: str) -> SaidDay:
    day = words.replace("on ", "").strip()
    if day in DAYS_AHEAD:
        return SaidDay(DAYS_AHEAD[day], evening=day == "tonight", today=day == "today")
    return SaidDay(weekday=WEEKDAYS.index(day.replace("next ", "")))


def _clock(groups: dict[str, str]) -> tuple[time, bool] | None:
    """The time of day asked for and whether it is exact (False: "six" may be 6 or 18)."""
    if "named" in groups:
        return NAMED_CLOCK[groups["named"]], True
    if "hour" not in groups:
        return None
    hour, minute = _clock_number(groups["hour"]), _minutes(groups.get("minute"))
    if hour > 23 or minute > 59:
        return None
    meridian = groups.get("meridian", "").replace(".", "").replace(" ", "")
    part = groups.get("part", "")
    if meridian in ("am", "pm") or part:
        if hour > 12 or hour == 0:
            return None
        evening = meridian == "pm" or part in ("afternoon", "evening")
        return time(hour % 12 + (12 if evening else 0), minute), True
    return time(hour, minute), hour > 12 or hour == 0 or groups["hour"].startswith("0")


def _clock_number(text: str) -> int:
    return int(text) if text.isdigit() else CLOCK_NUMBERS[text]


def _minutes(text: str | None) -> int:
    if text is None:
        return 0
    return int(text) if text.isdigit() else CLOCK_NUMBERS[text.replace("-", " ")]
