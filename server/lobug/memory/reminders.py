"""Reminders said to a device: "remind me to call Anna at six", "what reminders do I have",
"cancel the reminder about Anna" (recognised with the other spoken requests in
`spoken_requests`), carried out without the model, and rung when due: appended to the device's
next answer on HTTP, said by a connected device that can be spoken to first.

A reminder belongs to someone (issue 42): the person who set it, as the turn knows them by
evidence (`owner_of`: the viewer's person), or the household when no person is known. Only
its owner hears it listed, cancels it, or hears it rung: on their own devices (bound to them,
or the only person's), or in a turn where they are the viewer; the household's ring anywhere
(`owners_at`). At most `MAX_WAITING_PER_OWNER` wait for one owner and `MAX_WAITING_PER_DEVICE`
were set on one device; past that, the answer says so and nothing is stored.

Ringing is at least once: the due ones are claimed (`claim_due`), said as one short message
however many there are ("You have 12 reminders due; the first three are ..."), and marked said
only once that message was delivered (`Ringing.settle`); a claim never settled (a cut answer,
a killed process) lapses after `CLAIM_S` and they ring again.

When a reminder rings is read by the one time parser, `when.ring_time`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

from lobug.language.text import second_person
from lobug.memory.when import ring_time, said_time
from lobug.store.household import Viewer
from lobug.store.models import Reminder
from lobug.store.protocol import ReminderStore, Store

MAX_LISTED = 3  # reminders named when they are listed; the rest counted
MAX_RUNG_NAMED = 3  # due reminders named in the message that rings them; the rest counted
MAX_WAITING_PER_OWNER = 100
MAX_WAITING_PER_DEVICE = 100
CLAIM_S = 120.0  # a claim not settled within this lapses: the reminder rings again
HOUSEHOLD: tuple[int | None, ...] = (None,)  # the owners whose reminders ring anywhere


# ---------------------------------------------------------------------- whose


def owner_of(viewer: Viewer) -> int | None:
    """Whose a reminder set by `viewer` is: their person's, or the household's (None)."""
    return viewer.person_id if viewer.kind == "person" else None


def hears(viewer: Viewer, reminder: Reminder) -> bool:
    """Whether `viewer` may hear, list or cancel `reminder`: the household's are everyone's,
    a person's their own."""
    owner = reminder.owner_person_id
    return viewer.sees_everything or owner is None or owner == owner_of(viewer)


def owners_at(
    store: Store,
    agent: str,
    device_id: str,
    viewer: Viewer | None = None,
    *,
    proven: bool = True,
) -> tuple[int | None, ...]:
    """Whose reminders ring on `device_id` now: the household's, the device's person's (bound
    to it, where the turn comes from the device by evidence: `Household.proven`; or a
    household's only person), and the viewer's when a turn knows them."""
    owners: list[int | None] = [*HOUSEHOLD]
    bound = store.device_person(agent, device_id) if proven else None
    if bound is None:
        people = store.people(agent)
        bound = people[0].id if len(people) == 1 else None
    if bound is not None:
        owners.append(bound)
    if viewer is not None and (person := owner_of(viewer)) is not None:
        owners.append(person)
    return tuple(dict.fromkeys(owners))


# ---------------------------------------------------------------------- set, listed, cancelled


def set_for(
    store: ReminderStore,
    agent: str,
    device_id: str,
    viewer: Viewer,
    what: str,
    when: str,
    now: datetime,
    *,
    actor: str,
) -> str:
    """Store `viewer`'s reminder of `what` at `when` (a time phrase); say back when it will
    ring, or why it was not stored (no time to come, a cap reached)."""
    ring = ring_time(when, now)
    about = second_person(to_phrase(what))
    if ring is None:
        return f"I can only remind you {about} at a time still to come, within a year."
    owner = owner_of(viewer)
    refused = at_cap(*store.count_waiting_reminders(agent, owner, device_id))
    if refused is not None:
        return refused
    store.add_reminder(
        agent, device_id, what, ring.at.timestamp(), actor=actor, owner_person_id=owner
    )
    return f"Okay, I'll remind you {about} {ring.said}."


def at_cap(owned: int, on_device: int) -> str | None:
    """The answer when no more reminders are kept (for this owner or on this device)."""
    if owned >= MAX_WAITING_PER_OWNER:
        return (
            f"You have {owned} reminders waiting already, the most I keep for one person. "
            "Cancel some, then ask me again."
        )
    if on_device >= MAX_WAITING_PER_DEVICE:
        return (
            f"This device has {on_device} reminders waiting already, the most I keep for one "
            "device. Cancel some, then ask me again."
        )
    return None


def listed_for(store: ReminderStore, agent: str, viewer: Viewer, now: datetime) -> str:
    """The reminders waiting that `viewer` may hear, as said."""
    return listed([r for r in store.waiting_reminders(agent) if hears(viewer, r)], now)


def cancel_for(
    store: ReminderStore, agent: str, viewer: Viewer, topic: str | None, *, actor: str
) -> str:
    """Cancel `viewer`'s waiting reminders about `topic` (all of theirs when None); say which."""
    waiting = [r for r in store.waiting_reminders(agent) if hears(viewer, r)]
    chosen = about(waiting, topic)
    if not chosen:
        named = "" if topic is None else f" about {second_person(topic)}"
        return f"You have no reminders{named}."
    cancelled = store.cancel_reminders(agent, [r.id for r in chosen], actor=actor)
    if len(cancelled) == 1:
        return f"Okay, I cancelled the reminder {second_person(to_phrase(cancelled[0].what))}."
    return f"Okay, I cancelled {len(cancelled)} reminders."


# ---------------------------------------------------------------------- said back


def to_phrase(what: str) -> str:
    """What to be reminded of as it follows "remind you": "to call Anna", "about the dentist"."""
    first = what.split(maxsplit=1)[0].lower() if what.strip() else ""
    return what if first in ("about", "that", "of", "to") else f"to {what}"


def rung(due: Sequence[Reminder]) -> str:
    """The due reminders as one short message: each said when there are few, the first
    `MAX_RUNG_NAMED` and the count when there are more."""
    if not due:
        return ""
    if len(due) <= MAX_RUNG_NAMED:
        return " ".join(
            f"You asked me to remind you {second_person(to_phrase(r.what))}." for r in due
        )
    named = [second_person(to_phrase(r.what)) for r in due[:MAX_RUNG_NAMED]]
    return (
        f"You have {len(due)} reminders due; the first {MAX_RUNG_NAMED} are: "
        f"{', '.join(named[:-1])}, and {named[-1]}."
    )


class Ringing:
    """Due reminders claimed for one device, and their message: `settle` it with what was
    delivered (marked said when the message was, released to ring again when not)."""

    def __init__(
        self, store: ReminderStore, device_id: str, due: list[Reminder], clock: Callable[[], float]
    ) -> None:
        self._store, self._device, self._clock = store, device_id, clock
        self.due = due
        self.message = rung(due)
        self._settled = not due

    def settle(self, delivered: str) -> None:
        """Once: said when `delivered` (what reached the person) holds the whole message."""
        if self._settled:
            return
        self._settled = True
        ids = [r.id for r in self.due]
        if self.message in delivered:
            self._store.mark_reminders_said(ids, self._device, self._clock())
        else:
            self._store.release_reminders(ids)


def claim_due(
    store: ReminderStore,
    agent: str,
    device_id: str,
    owners: Sequence[int | None],
    clock: Callable[[], float],
) -> Ringing:
    """Claim the reminders of `owners` due now, for `device_id` (none another claim holds)."""
    due = store.claim_due_reminders(agent, device_id, clock(), owners, CLAIM_S)
    return Ringing(store, device_id, due, clock)


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
    """One turn's due reminders (of `owners`), looked up once: their words (for the reply
    guard: a reminder's names are known) before the reply, and their message, claimed once,
    when it is said, settled with what was delivered (no write at all on a turn with none
    due)."""

    def __init__(
        self,
        store: ReminderStore,
        agent: str,
        device_id: str,
        clock: Callable[[], float],
        owners: Sequence[int | None] = HOUSEHOLD,
    ) -> None:
        self._store, self._agent, self._device, self._clock = store, agent, device_id, clock
        self._owners = tuple(owners)
        self._due: list[Reminder] | None = None
        self._ringing: Ringing | None = None

    def _looked_up(self) -> list[Reminder]:
        if self._due is None:
            now = self._clock()
            self._due = [
                r
                for r in self._store.waiting_reminders(self._agent)
                if r.ring_at <= now and r.owner_person_id in self._owners
            ]
        return self._due

    def words(self) -> str:
        """What the reminders due now, as they would be named, are about (nothing claimed)."""
        return " ".join(r.what for r in self._looked_up()[:MAX_RUNG_NAMED])

    def claim(self) -> str:
        """The due reminders' message, claimed for this turn ("" when none); the same text
        when asked again."""
        if self._ringing is None:
            if not self._looked_up():
                return ""
            self._ringing = claim_due(
                self._store, self._agent, self._device, self._owners, self._clock
            )
        return self._ringing.message

    def settle(self, delivered: str) -> None:
        """What the person got (`delivered`): the claimed reminders in it are said, the
        others ring again."""
        if self._ringing is not None:
            self._ringing.settle(delivered)

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
        self._due, self._ringing, self._owners = [], None, HOUSEHOLD
