"""Who joins a household and whose each device is (issue 42): only the admin adds people
(`Curation.welcome`); a device of one person's never silently becomes another's (`taken_from`);
and the first person added keeps what was known before as the household's, with a warning
(`first_people_warning`), so no one at a device loses what they told it."""

from __future__ import annotations

from dataclasses import dataclass

from lobug.store.errors import DeviceTaken
from lobug.store.household import Person
from lobug.store.household_protocol import PeopleStore


@dataclass(frozen=True)
class Welcomed:
    """A person just added, and what the admin should know about it (None: nothing)."""

    person: Person
    warning: str | None = None


def taken_from(
    store: PeopleStore, agent: str, device_id: str, person_id: int | None, *, move: bool
) -> None:
    """Raise DeviceTaken when `device_id` is another person's than `person_id` (None: a person
    not yet added) and the admin did not ask to `move` it."""
    bound = store.device_person(agent, device_id)
    if move or bound is None or bound == person_id:
        return
    owner = store.person(agent, bound).name
    raise DeviceTaken(
        f"device {device_id!r} is {owner}'s: move it explicitly (move=true, `--move`) "
        f"to take it from {owner}"
    )


def first_people_warning(kept: int) -> str | None:
    """What the admin is told when the household's first person is added, `kept` facts
    having been learnt before there were people."""
    if kept == 0:
        return None
    return (
        f"{kept} facts learnt before the household had people stay the household's, and "
        "anyone may hear them on any device, guests included, as before. To keep one from "
        "guests: `lobug people move FACT_ID household` (without --shareable)."
    )
