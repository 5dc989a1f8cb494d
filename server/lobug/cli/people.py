"""`lobug people`: a household's people (`memory/people.py`), on the local file or a server
(`--url`, an admin token). `list` (or `lobug people` alone), `add NAME [--device D] [--move]`,
`facts ID`, `device DEVICE ID|none [--move]`, `move FACT_ID private|household [--shareable]`,
`forget ID` (purges everything about the person) and `delete ID` (and removes them)."""

from __future__ import annotations

import click

from lobug.cli.access import MemoryAccess, memory_command
from lobug.cli.facts import FACT_COLUMNS
from lobug.cli.memory import ListByDefault
from lobug.cli.output import Output

PEOPLE_COLUMNS = [
    ("id", "id"),
    ("name", "name"),
    ("devices", "devices"),
    ("voice_profiles", "voices"),
    ("created_at", "added"),
]
MOVE_HELP = "take a device that is another person's (else refused)"
PERSON_FACT_COLUMNS = [*FACT_COLUMNS, ("scope", "scope"), ("shareable", "shareable")]


@click.group(cls=ListByDefault)
def people() -> None:
    """A household's people, their devices and their own facts; `lobug people` lists them."""


@people.command("list")
@memory_command
def list_people(memory: MemoryAccess, out: Output, agent: str) -> None:
    """The agent's people, with the devices whose default person they are."""
    out.table(memory.people(agent), PEOPLE_COLUMNS)


@people.command("add")
@memory_command
@click.argument("name")
@click.option("--device", "devices", multiple=True, help="a device they usually use")
@click.option("--move", is_flag=True, help=MOVE_HELP)
def add_person(
    memory: MemoryAccess, out: Output, agent: str, name: str, devices: tuple[str, ...], move: bool
) -> None:
    """Add a person to the household."""
    added = memory.add_person(agent, name, list(devices), move)
    said = f"added {added['name']} (id {added['id']})"
    out.said(said if not added.get("warning") else f"{said}\nwarning: {added['warning']}", added)


@people.command("facts")
@memory_command
@click.argument("person_id", type=click.IntRange(1))
def person_facts(memory: MemoryAccess, out: Output, agent: str, person_id: int) -> None:
    """The person's own current facts (private ones, and household ones they stated)."""
    out.table(memory.person_facts(agent, person_id), PERSON_FACT_COLUMNS)


@people.command("device")
@memory_command
@click.argument("device")
@click.argument("person", metavar="ID|none")
@click.option("--move", is_flag=True, help=MOVE_HELP)
def device_person(
    memory: MemoryAccess, out: Output, agent: str, device: str, person: str, move: bool
) -> None:
    """Make the person the default of DEVICE (`none`: the device has no default person)."""
    person_id = None if person.lower() == "none" else _person_id(person)
    found = memory.set_device_person(agent, device, person_id, move)
    out.said(f"{device}: {'no default person' if person_id is None else person_id}", found)


@people.command("move")
@memory_command
@click.argument("fact_id", type=click.IntRange(1))
@click.argument("scope", type=click.Choice(["private", "household"]))
@click.option("--shareable", is_flag=True, help="a household fact a guest may hear")
def move_fact(
    memory: MemoryAccess, out: Output, agent: str, fact_id: int, scope: str, shareable: bool
) -> None:
    """Move a fact between its owner's private memory and the household's."""
    moved = memory.move_fact(agent, fact_id, scope, shareable)
    out.said(
        f"fact {fact_id} is now {scope}{' and shareable' if moved['shareable'] else ''}", moved
    )


@people.command("forget")
@memory_command
@click.argument("person_id", type=click.IntRange(1))
@click.option("--yes", is_flag=True, help="do not ask")
def forget_person(memory: MemoryAccess, out: Output, agent: str, person_id: int, yes: bool) -> None:
    """Purge everything about the person: their private facts and what they said."""
    _forget(memory, out, agent, person_id, yes, delete=False)


@people.command("delete")
@memory_command
@click.argument("person_id", type=click.IntRange(1))
@click.option("--yes", is_flag=True, help="do not ask")
def delete_person(memory: MemoryAccess, out: Output, agent: str, person_id: int, yes: bool) -> None:
    """Forget everything about the person and remove them from the household."""
    _forget(memory, out, agent, person_id, yes, delete=True)


def _forget(
    memory: MemoryAccess, out: Output, agent: str, person_id: int, yes: bool, *, delete: bool
) -> None:
    if not yes:
        click.confirm(f"Erase everything about person {person_id}?", abort=True)
    done = memory.forget_person(agent, person_id, delete)
    said = f"{done['facts']} facts purged, {done['messages']} messages forgotten"
    out.said(f"{'deleted' if delete else 'forgot'} person {person_id}: {said}", done)


def _person_id(given: str) -> int:
    if not given.isdigit() or int(given) < 1:
        raise click.BadParameter(f"{given!r} is neither a person's id nor `none`")
    return int(given)
