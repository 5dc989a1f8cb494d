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

The words and phrases (which phrase names which time, what "at six pm" or "on Friday" says)
are `language/times.py`'s; this module gives them their times: windows, due times, clocks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from lobug.language.times import (
    DAY_PARTS,
    DUE_PHRASES,
    MONTHS,
    PAST_PHRASES,
    TONIGHT,
    WEEKDAYS,
    SaidDay,
    clock_phrase,
    count_of,
    duration_in,
)
from lobug.memory.limits import time_problem


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


Span = tuple[datetime, datetime]
Rule = Callable[[re.Match[str], datetime], Span]


def _ago(match: re.Match[str], now: datetime) -> Span:
    count, unit = count_of(match[1]), match[2]
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


# What each phrase of `language/times.py`'s `PAST_PHRASES` means, as a window of time.
_PAST_RULES: dict[str, Rule] = {
    "day before yesterday": _day_part(2),
    "yesterday": _day_part(1),
    "last night": _day_part(1, "night"),
    "this part of the day": _day_part(0),
    "tonight": _day_part(0, "evening"),
    "today": _day_part(0),
    "units ago": _ago,
    "this week": _week(0),
    "last week": _week(1),
    "weekend": _weekend,
    "this month": _this_month(0),
    "last month": _this_month(1),
    "this year": _this_year(0),
    "last year": _this_year(1),
    "weekday": _weekday,
    "in a month": _named_month,
    "month and year": _named_month,
}
# The phrases and their rules, most specific first (the order of `PAST_PHRASES`).
RULES: tuple[tuple[re.Pattern[str], Rule], ...] = tuple(
    (pattern, _PAST_RULES[name]) for name, pattern in PAST_PHRASES
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
    count, unit = count_of(match[1]), match[2]
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


# What each phrase of `language/times.py`'s `DUE_PHRASES` means: when a commitment is due.
_DUE_RULES: dict[str, DueRule] = {
    "day after tomorrow": _days_ahead(2),
    "tomorrow": _days_ahead(1),
    "tonight": _days_ahead(0, TONIGHT.hour),
    "this afternoon": _days_ahead(0, DAY_PARTS["afternoon"][0]),
    "today": _days_ahead(0),
    "in units": _ahead,
    "next week": _next_monday,
    "weekend": _coming_saturday,
    "next month": _next_month,
    "next year": _next_year,
    "weekday": _coming_weekday,
    "by a month": _coming_month,
}
# Phrases naming a time to come and their rules, most specific first (`DUE_PHRASES`'s order).
DUE_RULES: tuple[tuple[re.Pattern[str], DueRule], ...] = tuple(
    (pattern, _DUE_RULES[name]) for name, pattern in DUE_PHRASES
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

# At most this far ahead (a year): a reminder is for a time the device will still be around.
MAX_AHEAD = timedelta(days=366)
MORNING_DEFAULT = time(9, 0)  # a day named without a time of day


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
    return duration_in(phrase) is not None or clock_phrase(phrase) is not None


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
    ahead = duration_in(phrase)
    return None if ahead is None else now + ahead


def _on_the_clock(phrase: str, now: datetime) -> datetime | None:
    said = clock_phrase(phrase)
    if said is None:
        return None
    day, clock = said.day, said.clock
    if day is None:
        if clock is None:
            return None
        return _next_of(now, clock)
    if clock is None and said.clock_said:
        return None  # a clock that is none ("tomorrow at 24:00"): refused, never guessed
    date = _date_of(day, now)
    if clock is None:
        clock = (TONIGHT if day.evening else MORNING_DEFAULT), True
    hour_minute, exact = clock
    if not exact:  # "tomorrow at six": 1 to 6 the afternoon's, "tonight at 8" the evening's
        hour = hour_minute.hour
        if day.evening or hour <= 6:
            hour_minute = hour_minute.replace(hour=hour % 12 + 12)
    chosen = datetime.combine(date, hour_minute, now.tzinfo)
    return chosen if not day.today else _next_of(now, clock)


def _next_of(now: datetime, clock: tuple[time, bool]) -> datetime:
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


def _date_of(day: SaidDay, now: datetime) -> datetime:
    """The day named: so many days from today, or the next such weekday after today."""
    if day.weekday is None:
        return now + timedelta(days=day.ahead or 0)
    ahead = (day.weekday - now.weekday()) % 7 or 7
    return now + timedelta(days=ahead)
