"""Who a caller of a program surface is, from evidence a sentence cannot fake (issue 42), and
what it may read: the one rule the memory API, `/v1`, `/memory/context`, MCP and the
dashboard ask.

Evidence that counts (`Evidence`, made by the surfaces from the request's token):
- the admin (an admin token or its dashboard session; the local process): reads everything;
- a device's own token (`LOBUG_BOUND_DEVICE_TOKENS`) of a device the admin bound to a person
  (`lobug people add Jordan --device kitchen`): that person's view, their private memory
  and the household's;
- nothing else: a plain device token, or no token on a server exposed without tokens, reads
  what a guest may (household facts marked shareable).
A household without people reads everything, as before people.

Not evidence: a name in a request (`/v1` `user`, `/memory/context` `person`, MCP `person`),
the `X-Device-Id` header, a sentence ("it's Jordan"). A program caller may name the person
its evidence is (the admin: anyone): the name says who asks; naming anyone else is refused
(`PersonNotAllowed`: 403 `person_not_allowed`). A program surface never holds a claim: each
call stands alone (`asker`).

Summaries, episodes, base memory and topics are made from every person's words: only a
viewer who `reads_summaries` sees them (`require_summaries`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lobug.memory.people import DEVICE_DEFAULT_CONFIDENCE, Household
from lobug.store.errors import FactNotFound
from lobug.store.household import EVERYONE, GUEST_SPEAKER, Speaker, Viewer
from lobug.store.models import Fact, Message
from lobug.store.protocol import FactReads


@dataclass(frozen=True)
class Evidence:
    """What a caller proved: the admin's credential, or a device's own token (`device`, the
    device it was issued to); neither: nothing (a guest)."""

    admin: bool = False
    device: str | None = None


ADMIN_EVIDENCE = Evidence(admin=True)
NO_EVIDENCE = Evidence()


class PersonNotAllowed(Exception):
    """A program caller named a person its evidence is not (403 `person_not_allowed`)."""


class SummariesPrivate(Exception):
    """Summaries, episodes, base memory or topics asked by a viewer who may not read what
    every person said (403 `summaries_private`)."""


PERSON_NOT_ALLOWED = (
    "This token may not ask as {name}: only the admin, or a device's own token of a device "
    "bound to {name} (LOBUG_BOUND_DEVICE_TOKENS), may name them"
)
SUMMARIES_PRIVATE = (
    "Summaries, episodes, base memory and topics are made from every person's words: in a "
    "household of several people only an admin token reads them"
)


def own_person(household: Household, agent: str, evidence: Evidence) -> int | None:
    """The person the evidence is: the person of the device whose own token was presented
    (None: no such token, or its device bound to no one of the household)."""
    if evidence.device is None:
        return None
    person_id = household.store.device_person(agent, evidence.device)
    known = {person.id for person in household.store.people(agent)}
    return person_id if person_id in known else None


def reader(household: Household, agent: str, evidence: Evidence) -> Viewer:
    """What a caller with `evidence` may read of `agent`'s memory (see the module)."""
    if evidence.admin:
        return EVERYONE
    person_id = own_person(household, agent, evidence)
    speaker = GUEST_SPEAKER if person_id is None else Speaker(person_id, "device_default", 1.0)
    return household.viewer(agent, speaker)


def asker(household: Household, agent: str, evidence: Evidence, named: str | None) -> Speaker:
    """Who asks through a program surface: the person `named` where the evidence allows it
    (PersonNotAllowed where not; a name of no one in the household: a guest); without a name,
    the evidence's person (the admin in a household of one: its person), else a guest. No
    claim is read from the words nor held for the next call."""
    people = household.store.people(agent)
    if not people:
        return GUEST_SPEAKER
    own = own_person(household, agent, evidence)
    if named is not None:
        speaker = household.named(agent, named)
        if speaker.is_guest or evidence.admin or speaker.person_id == own:
            return speaker
        raise PersonNotAllowed(PERSON_NOT_ALLOWED.format(name=named.strip()))
    if own is None and evidence.admin and len(people) == 1:
        own = people[0].id
    if own is None:
        return GUEST_SPEAKER
    return Speaker(own, "device_default", DEVICE_DEFAULT_CONFIDENCE)


def asking_viewer(
    household: Household, agent: str, evidence: Evidence, named: str | None
) -> Viewer:
    """What the one `asker` finds may read."""
    return household.viewer(agent, asker(household, agent, evidence, named))


# ---------------------------------------------------------------------- reads for a viewer


def require_summaries(viewer: Viewer) -> None:
    """SummariesPrivate unless `viewer` may read what every person's words made."""
    if not viewer.reads_summaries:
        raise SummariesPrivate(SUMMARIES_PRIVATE)


def heard(messages: Sequence[Message], viewer: Viewer) -> list[Message]:
    """The messages `viewer` may read again (`Viewer.hears`)."""
    return [message for message in messages if viewer.hears(message.person_id)]


def visible_fact(store: FactReads, agent: str, fact_id: int, viewer: Viewer) -> Fact:
    """The agent's fact `fact_id` (any version) if `viewer` may see it; FactNotFound as for
    a fact that does not exist otherwise (nothing says it is there)."""
    fact = store.agent_fact(agent, fact_id)
    if fact.id not in store.facts_by_ids([fact.id], viewer):
        raise FactNotFound(f"Agent {agent!r} has no fact {fact_id}")
    return fact


def visible_versions(store: FactReads, agent: str, fact_id: int, viewer: Viewer) -> list[Fact]:
    """The versions of the fact `viewer` may see, oldest first."""
    versions = store.fact_versions(agent, fact_id)
    seen = store.facts_by_ids([version.id for version in versions], viewer)
    return [version for version in versions if version.id in seen]
