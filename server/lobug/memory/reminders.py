"""Reminders said to a device: "remind me to call Anna at six", "what reminders do I have",
"cancel the reminder about Anna" (recognised with the other spoken requests in
`spoken_requests`), carried out without the model, and rung once when due (`ring_due`):
appended to the device's next answer on HTTP, said by a connected device that can be spoken
to first.

When a reminder rings (`ring_time`), in the user's time zone: "in 20 minutes", "in an hour",
"in half an hour", "in 3 days", "in two weeks"; "at six", "at 6:30", "at 6 pm", "at 18:00",
"at noon", "at midnight", optionally with a day, before or after it: "today", "tonight",
"tomorrow", "(on) Friday".
A clock time without am/pm is the next time it comes today (or tomorrow), both halves of the
day counted ("at six" said at 14:00 is 18:00); on another day, 1 to 6 o'clock are the
afternoon's and 7 to 12 the morning's ("tomorrow at six" is 18:00, "on Friday at nine" is
9:00); "tonight at 8" is 20:00. A day without a time rings at 9:00 ("tonight": 20:00). The
answer says the time it chose, so a wrong guess is heard at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from lobug.memory.when import NUMBERS, WEEKDAYS
from lobug.store.models import Reminder
from lobug.store.protocol import ReminderStore
from lobug.text import second_person

# The numbers `when` reads ("one" to "twelve", "a", "a couple of"), and the minutes of a clock.
_NUMBER_WORDS = {
    **NUMBERS,
    **{"fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50},
    **{"forty five": 45, "forty-five": 45},
}
_NUMBER = r"(?:\d{1,3}|" + "|".join(sorted(map(re.escape, _NUMBER_WORDS), key=len)[::-1]) + ")"
# At most this far ahead (a year): a reminder is for a time the device will still be around.
MAX_AHEAD = timedelta(days=366)
MORNING_DEFAULT = time(9, 0)
TONIGHT_DEFAULT = time(20, 0)
MAX_LISTED = 3

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
    count = _number(match["n"])
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
    date = _date_of(day, now)
    if clock is None:
        clock = (TONIGHT_DEFAULT if day == "tonight" else MORNING_DEFAULT), True
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
    hour, minute = _number(groups["hour"]), _minutes(groups.get("minute"))
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


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text]


def _minutes(text: str | None) -> int:
    if text is None:
        return 0
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.replace("-", " ")]


# ---------------------------------------------------------------------- said back


def to_phrase(what: str) -> str:
    """What to be reminded of as it follows "remind you": "to call Anna", "about the dentist"."""
    first = what.split(maxsplit=1)[0].lower() if what.strip() else ""
    return what if first in ("about", "that", "of", "to") else f"to {what}"


def ring_due(store: ReminderStore, agent: str, device_id: str, now: float) -> str:
    """Claim the agent's reminders due by `now` for `device_id` and say them ("" when none):
    each is said once, whichever device or turn claims it first."""
    due = store.ring_due_reminders(agent, device_id, now)
    return " ".join(f"You asked me to remind you {second_person(to_phrase(r.what))}." for r in due)


def listed(reminders: list[Reminder], now: datetime) -> str:
    """The waiting reminders as said: "You have 2 reminders: to call Anna at 18:00, and to
    water the plants tomorrow at 09:00."."""
    if not reminders:
        return "You have no reminders."
    said = [
        f"{second_person(to_phrase(r.what))} "
        f"{said_time(datetime.fromtimestamp(r.ring_at, now.tzinfo), now)}"
        for r in reminders[:MAX_LISTED]
    ]
    more = len(reminders) - len(said)
    if more:
        said.append(f"{more} more")
    count = "1 reminder" if len(reminders) == 1 else f"{len(reminders)} reminders"
    joined = said[0] if len(said) == 1 else ", ".join(said[:-1]) + ", and " + said[-1]
    return f"You have {count}: {joined}."


def about(reminders: list[Reminder], topic: str | None) -> list[Reminder]:
    """The reminders whose words hold every word of `topic` (all of them when None)."""
    if topic is None:
        return reminders
    wanted = _words(topic) - {"my", "the", "a", "an", "to", "about", "me"}
    return [r for r in reminders if wanted and wanted <= _words(r.what)]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w']+", text.lower()))


class DueReminders:
    """One turn's due reminders, looked up once: their words (for the reply guard: a
    reminder's names are known) before the reply, and their sentence, claimed once, when it
    is said (no write at all on a turn with none due)."""

    def __init__(
        self, store: ReminderStore, agent: str, device_id: str, clock: Callable[[], float]
    ) -> None:
        self._store, self._agent, self._device, self._clock = store, agent, device_id, clock
        self._due: list[Reminder] | None = None
        self._said: str | None = None

    def _looked_up(self) -> list[Reminder]:
        if self._due is None:
            now = self._clock()
            self._due = [r for r in self._store.waiting_reminders(self._agent) if r.ring_at <= now]
        return self._due

    def words(self) -> str:
        """What the reminders due now are about (nothing is claimed)."""
        return " ".join(r.what for r in self._looked_up())

    def claim(self) -> str:
        """The due reminders as said, claimed for this turn ("" when none); the same text
        when asked again."""
        if self._said is None:
            due = self._looked_up()
            self._said = (
                ring_due(self._store, self._agent, self._device, self._clock()) if due else ""
            )
        return self._said

    def after(self, answer: str) -> str:
        """The answer with the due reminders said after it (claimed)."""
        said = self.claim()
        return f"{answer} {said}".strip() if said else answer

    def ringing(self, stream: Iterator[str]) -> Iterator[str]:
        """`stream`, then the due reminders as its last piece once it has ended (not claimed
        when the stream is stopped first: they ring at a later turn)."""
        try:
            yield from stream
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        if said := self.claim():
            yield " " + said


class NoReminders(DueReminders):
    """A turn that rings nothing (a memory request's, a test's)."""

    def __init__(self) -> None:
        self._due, self._said = [], ""
