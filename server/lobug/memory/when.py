"""Time phrases in a question, resolved to a window of time: "what did we talk about
yesterday?" asks about the conversations between yesterday's midnight and today's.

Pure: `time_window(text, now)` reads only its arguments. `now` carries the user's time zone
(`LOBUG_TIMEZONE`), so "this morning" and "last Tuesday" mean what they mean where the user
lives. The first phrase found wins; a text with no phrase gives None.

Understood (case does not matter): today, tonight, this morning / afternoon / evening,
yesterday (morning / afternoon / evening), last night, the day before yesterday, N days /
weeks / months / years ago (digits or one to twelve, "a", "a couple of"), this / last week,
last weekend, this / last month, this / last year, (last / on) Monday..Sunday, in / during /
last March (optionally with a year, or "March 2023").

`due_time(text, now)` reads the other way, for when a promise is due: tomorrow, the day after
tomorrow, tonight, this afternoon / evening, today, later, in N days / weeks / months / years,
next week / weekend / month / year, (on / by / next) Monday..Sunday, in / by March.

`ring_time(text, now)` reads a whole phrase as the moment a reminder rings (see its section).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from lobug.memory.limits import time_problem

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


@dataclass(frozen=True)
class TimeWindow:
    """[start, end) in Unix seconds, and the phrase it was read from."""

    start: float
    end: float
    phrase: str

    def holds(self, at: float) -> bool:
        return self.start <= at < self.end


def _midnight(day: date, zone: tzinfo | None) -> datetime:
    return datetime.combine(day, time(), tzinfo=zone)


def _days(first: date, count: int, zone: tzinfo | None) -> tuple[datetime, datetime]:
    start = _midnight(first, zone)
    return start, _midnight(first + timedelta(days=count), zone)


def _month_start(year: int, month: int, zone: tzinfo | None) -> datetime:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return _midnight(date(year, month, 1), zone)


def _month(year: int, month: int, zone: tzinfo | None) -> tuple[datetime, datetime]:
    return _month_start(year, month, zone), _month_start(year, month + 1, zone)


def _part_of_day(day: date, part: str, zone: tzinfo | None) -> tuple[datetime, datetime]:
    first, last = DAY_PARTS[part]
    start = _midnight(day, zone)
    return start + timedelta(hours=first), start + timedelta(hours=last)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word]


Span = tuple[datetime, datetime]
Rule = Callable[[re.Match[str], datetime], Span]

_COUNT = "(" + "|".join([r"\d+", *NUMBERS]) + ")"
_WEEKDAY = "(" + "|".join(WEEKDAYS) + ")"
_MONTH = "(" + "|".join(MONTHS) + ")"


def _ago(match: re.Match[str], now: datetime) -> Span:
    count, unit = _number(match[1]), match[2]
    today = now.date()
    if unit == "day":
        return _days(today - timedelta(days=count), 1, now.tzinfo)
    if unit == "week":
        monday = today - timedelta(days=today.weekday(), weeks=count)
        return _days(monday, 7, now.tzinfo)
    if unit == "month":
        return _month(now.year, now.month - count, now.tzinfo)
    return _midnight(date(now.year - count, 1, 1), now.tzinfo), _midnight(
        date(now.year - count + 1, 1, 1), now.tzinfo
    )


def _weekday(match: re.Match[str], now: datetime) -> Span:
    """The most recent such day before today ("last Tuesday" on a Tuesday is a week ago)."""
    back = (now.weekday() - WEEKDAYS.index(match[1])) % 7 or 7
    return _days(now.date() - timedelta(days=back), 1, now.tzinfo)


def _named_month(match: re.Match[str], now: datetime) -> Span:
    """The named month of the given year, else the latest one not in the future."""
    month = MONTHS.index(match[1]) + 1
    if match[2]:
        return _month(int(match[2]), month, now.tzinfo)
    year = now.year if month <= now.month else now.year - 1
    return _month(year, month, now.tzinfo)


def _week(offset: int) -> Rule:
    def rule(match: re.Match[str], now: datetime) -> Span:
        monday = now.date() - timedelta(days=now.weekday(), weeks=offset)
        return _days(monday, 7, now.tzinfo)

    return rule


def _weekend(match: re.Match[str], now: datetime) -> Span:
    saturday = now.date() - timedelta(days=now.weekday() + 2)
    return _days(saturday, 2, now.tzinfo)


def _day_part(days_back: int, part: str | None = None) -> Rule:
    def rule(match: re.Match[str], now: datetime) -> Span:
        day = now.date() - timedelta(days=days_back)
        chosen = part or (match.group("part") if "part" in match.re.groupindex else None)
        if chosen:
            return _part_of_day(day, chosen, now.tzinfo)
        return _days(day, 1, now.tzinfo)

    return rule


def _this_month(offset: int) -> Rule:
    return lambda match, now: _month(now.year, now.month - offset, now.tzinfo)


def _this_year(offset: int) -> Rule:
    return lambda match, now: (
        _midnight(date(now.year - offset, 1, 1), now.tzinfo),
        _midnight(date(now.year - offset + 1, 1, 1), now.tzinfo),
    )


# Most specific first: "the day before yesterday" before "yesterday", "last night" before
# "last <weekday>".
RULES: tuple[tuple[re.Pattern[str], Rule], ...] = tuple(
    (re.compile(rf"\b{pattern}\b"), rule)
    for pattern, rule in (
        (r"(?:the )?day before yesterday", _day_part(2)),
        (r"yesterday(?: (?P<part>morning|afternoon|evening))?", _day_part(1)),
        (r"last night", _day_part(1, "night")),
        (r"this (?P<part>morning|afternoon|evening)", _day_part(0)),
        (r"tonight", _day_part(0, "evening")),
        (r"(?:earlier )?today", _day_part(0)),
        (rf"{_COUNT} (day|week|month|year)s? ago", _ago),
        (r"this week", _week(0)),
        (r"last week", _week(1)),
        (r"last weekend|over the weekend|this weekend", _weekend),
        (r"this month", _this_month(0)),
        (r"last month", _this_month(1)),
        (r"this year", _this_year(0)),
        (r"last year", _this_year(1)),
        (rf"(?:last |on |this past )?{_WEEKDAY}", _weekday),
        (rf"(?:in|during|last|since|back in) {_MONTH}(?:,? (\d{{4}}))?", _named_month),
        (rf"{_MONTH} (\d{{4}})", _named_month),
    )
)


def time_window(text: str, now: datetime) -> TimeWindow | None:
    """The window of time `text` asks about, in `now`'s time zone; None when it names none."""
    lowered = " ".join(text.lower().split())
    for pattern, rule in RULES:
        match = pattern.search(lowered)
        if match is None:
            continue
        start, end = rule(match, now)
        return TimeWindow(start.timestamp(), end.timestamp(), match[0])
    return None


def _ahead(match: re.Match[str], now: datetime) -> datetime:
    count, unit = _number(match[1]), match[2]
    if unit == "month":
        return _month_start(now.year, now.month + count, now.tzinfo)
    if unit == "year":
        return _midnight(date(now.year + count, 1, 1), now.tzinfo)
    days = count * (7 if unit == "week" else 1)
    return _midnight(now.date() + timedelta(days=days), now.tzinfo)


def _coming_weekday(match: re.Match[str], now: datetime) -> datetime:
    """The next such day after today ("on Friday" said on a Friday is a week away)."""
    ahead = (WEEKDAYS.index(match[1]) - now.weekday()) % 7 or 7
    return _midnight(now.date() + timedelta(days=ahead), now.tzinfo)


def _coming_month(match: re.Match[str], now: datetime) -> datetime:
    """The first day of the named month: this year's, unless it has begun already."""
    month = MONTHS.index(match[1]) + 1
    return _month_start(now.year if month > now.month else now.year + 1, month, now.tzinfo)


DueRule = Callable[[re.Match[str], datetime], datetime]


def _days_ahead(days: int, hour: int = 0) -> DueRule:
    return lambda match, now: (
        _midnight(now.date() + timedelta(days=days), now.tzinfo) + (timedelta(hours=hour))
    )


def _next_monday(match: re.Match[str], now: datetime) -> datetime:
    return _midnight(now.date() + timedelta(days=7 - now.weekday()), now.tzinfo)


def _coming_saturday(match: re.Match[str], now: datetime) -> datetime:
    return _midnight(now.date() + timedelta(days=(5 - now.weekday()) % 7 or 7), now.tzinfo)


def _next_month(match: re.Match[str], now: datetime) -> datetime:
    return _month_start(now.year, now.month + 1, now.tzinfo)


def _next_year(match: re.Match[str], now: datetime) -> datetime:
    return _midnight(date(now.year + 1, 1, 1), now.tzinfo)


# Phrases naming a time to come, most specific first: when a commitment is due.
DUE_RULES: tuple[tuple[re.Pattern[str], DueRule], ...] = tuple(
    (re.compile(rf"\b{pattern}\b"), rule)
    for pattern, rule in (
        (r"(?:the )?day after tomorrow", _days_ahead(2)),
        (r"tomorrow", _days_ahead(1)),
        (r"tonight|this evening", _days_ahead(0, TONIGHT.hour)),
        (r"this afternoon", _days_ahead(0, DAY_PARTS["afternoon"][0])),
        (r"today|later", _days_ahead(0)),
        (rf"in {_COUNT} (day|week|month|year)s?", _ahead),
        (r"next week", _next_monday),
        (r"(?:this|next) weekend", _coming_saturday),
        (r"next month", _next_month),
        (r"next year", _next_year),
        (rf"(?:on |by |next |this |until |before )?{_WEEKDAY}", _coming_weekday),
        (rf"(?:in|by|until|before) {_MONTH}", _coming_month),
    )
)


def due_time(text: str, now: datetime) -> float | None:
    """When something promised in `text` is due: the start of the first time to come it
    names ("tomorrow": tomorrow at midnight, "tonight": today at 18:00, "on Friday": the next
    Friday), in `now`'s time zone; None when it names none, or a time Lo-Bug does not keep
    ("in 300 years": `memory/limits.py`)."""
    lowered = " ".join(text.lower().split())
    for pattern, rule in DUE_RULES:
        match = pattern.search(lowered)
        if match is not None:
            try:
                at = rule(match, now).timestamp()
            except (ValueError, OverflowError):  # past the calendar's last year
                return None
            return at if time_problem(at) is None else None
    return None


# ---------------------------------------------------------------------- when a reminder rings
#
# `ring_time(text, now)`: when a reminder rings, in the user's time zone: "in 20 minutes",
# "in an hour", "in half an hour", "in 3 days", "in two weeks"; "at six", "at 6:30", "at 6 pm",
# "at 18:00", "at noon", "at midnight", optionally with a day, before or after it: "today",
# "tonight", "tomorrow", "(on) Friday". A clock time without am/pm is the next time it comes
# today (or tomorrow), both halves of the day counted ("at six" said at 14:00 is 18:00); on
# another day, 1 to 6 o'clock are the afternoon's and 7 to 12 the morning's ("tomorrow at six"
# is 18:00, "on Friday at nine" is 9:00); "tonight at 8" is 20:00. A day without a time rings
# at 9:00, "tonight" at `TONIGHT` (the evening's start, as `due_time` and `time_window` read
# it). A clock that is none ("at 25", "tomorrow at 24:00", "at 13 pm") is refused, never
# replaced by a default. The answer says the time chosen, so a wrong guess is heard at once.

# The numbers `when` reads ("one" to "twelve", "a", "a couple of"), and the minutes of a clock.
_NUMBER_WORDS = {
    **NUMBERS,
    **{"fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50},
    **{"forty five": 45, "forty-five": 45},
}
_NUMBER = r"(?:\d{1,3}|" + "|".join(sorted(map(re.escape, _NUMBER_WORDS), key=len)[::-1]) + ")"
# At most this far ahead (a year): a reminder is for a time the device will still be around.
MAX_AHEAD = timedelta(days=366)
MORNING_DEFAULT = time(9, 0)  # a day named without a time of day

_IN = re.compile(
    rf"in\s+(?:(?P<half>half\s+an\s+hour)|(?P<n>{_NUMBER})\s+(?P<unit>minutes?|mins?|hours?|days?|weeks?))"
)
_DAY = r"(?P<day>today|tonight|tomorrow|(?:on\s+)?(?:next\s+)?(?:" + "|".join(WEEKDAYS) + "))"
_CLOCK = (
    r"at\s+(?:(?P<named>noon|midnight)|(?P<hour>\d{1,2}|"
    + "|".join(w for w in _NUMBER_WORDS if _NUMBER_WORDS[w] <= 12 and " " not in w and len(w) > 2)
    + r")(?:(?::|\s)(?P<minute>\d{2}|fifteen|thirty|forty[\s-]five))?"
    r"(?:\s*(?P<meridian>a\.?\s?m\.?|p\.?\s?m\.?|o'?clock)"
    r"|\s+in\s+the\s+(?P<part>morning|afternoon|evening)|\s+at\s+night)?)"
)
# A day and a clock time, in either order, or either alone.
_AT = tuple(re.compile(p) for p in (rf"(?:{_DAY}\s+)?{_CLOCK}", rf"{_CLOCK}\s+{_DAY}", _DAY))


@dataclass(frozen=True)
class Ring:
    """A reminder's time as chosen and as it will be said back ("tomorrow at 18:00")."""

    at: datetime
    said: str


def ring_time(text: str, now: datetime) -> Ring | None:
    """When `text` (the whole time phrase, "at six", "tomorrow at 9 am", "in 20 minutes")
    asks a reminder to ring, after `now` (aware, the user's zone); None when it is not such a
    phrase or names a time past or more than a year ahead."""
    phrase = _normal(text)
    at = _relative(phrase, now) or _on_the_clock(phrase, now)
    if at is None or not now < at <= now + MAX_AHEAD:
        return None
    return Ring(at, said_time(at, now))


def is_time_phrase(text: str) -> bool:
    """Whether `text` is a whole time phrase `ring_time` reads (whatever the time now)."""
    phrase = _normal(text)
    return bool(_IN.fullmatch(phrase) or _at(phrase))


def _normal(text: str) -> str:
    return " ".join(text.lower().replace(".", ". ").split()).replace(". ", ".").strip(" .")


def said_time(at: datetime, now: datetime) -> str:
    """`at` as said back: "at 18:00", "tomorrow at 09:00", "on Friday at 09:00", "on
    2027-03-01 at 09:00"."""
    clock = at.strftime("%H:%M")
    days = (at.date() - now.date()).days
    if days == 0:
        return f"at {clock}"
    if days == 1:
        return f"tomorrow at {clock}"
    if days < 7:
        return f"on {at.strftime('%A')} at {clock}"
    return f"on {at.strftime('%Y-%m-%d')} at {clock}"


def _relative(phrase: str, now: datetime) -> datetime | None:
    match = _IN.fullmatch(phrase)
    if match is None:
        return None
    if match["half"]:
        return now + timedelta(minutes=30)
    count = _clock_number(match["n"])
    unit = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[match["unit"][0]]
    return now + timedelta(**{unit: count})


def _on_the_clock(phrase: str, now: datetime) -> datetime | None:
    match = _at(phrase)
    if match is None:
        return None
    groups = {k: v for k, v in match.groupdict().items() if v is not None}
    day = groups.get("day", "").replace("on ", "").strip()
    clock = _clock(groups)
    if not day:
        if clock is None:
            return None
        return _next_of(now, clock, groups)
    if clock is None and ("hour" in groups or "named" in groups):
        return None  # a clock that is none ("tomorrow at 24:00"): refused, never guessed
    date = _date_of(day, now)
    if clock is None:
        clock = (TONIGHT if day == "tonight" else MORNING_DEFAULT), True
    hour_minute, exact = clock
    if not exact:  # "tomorrow at six": 1 to 6 the afternoon's, "tonight at 8" the evening's
        hour = hour_minute.hour
        if day == "tonight" or hour <= 6:
            hour_minute = hour_minute.replace(hour=hour % 12 + 12)
    chosen = datetime.combine(date, hour_minute, now.tzinfo)
    return chosen if day != "today" else _next_of(now, clock, groups)


def _at(phrase: str) -> re.Match[str] | None:
    return next((m for m in (p.fullmatch(phrase) for p in _AT) if m is not None), None)


def _clock(groups: dict[str, str]) -> tuple[time, bool] | None:
    """The time of day asked for and whether it is exact (False: "six" may be 6 or 18)."""
    if "named" in groups:
        return (time(12, 0) if groups["named"] == "noon" else time(0, 0)), True
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


def _next_of(now: datetime, clock: tuple[time, bool], groups: dict[str, str]) -> datetime:
    """The first time after `now` the clock shows `clock` (either half of the day when it is
    not exact)."""
    hour_minute, exact = clock
    candidates = [hour_minute]
    if not exact and hour_minute.hour < 12:
        candidates.append(hour_minute.replace(hour=hour_minute.hour + 12))
    times = []
    for day in (now.date(), now.date() + timedelta(days=1)):
        times += [datetime.combine(day, t, now.tzinfo) for t in candidates]
    return min(t for t in times if t > now)


def _date_of(day: str, now: datetime) -> datetime:
    if day in ("today", "tonight"):
        return now
    if day == "tomorrow":
        return now + timedelta(days=1)
    weekday = WEEKDAYS.index(day.replace("next ", ""))
    ahead = (weekday - now.weekday()) % 7 or 7
    return now + timedelta(days=ahead)


def _clock_number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text]


def _minutes(text: str | None) -> int:
    if text is None:
        return 0
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.replace("-", " ")]
