"""What a caller may read, from evidence a sentence cannot fake (`memory/evidence.py`, issue
42): the admin reads everything; a device's own token of a device bound to a person reads
that person's private memory and the household's; anything else reads as a guest; a named
person opens nothing the evidence does not; nothing is held from one program call to the
next. On a real SQLite store."""

from __future__ import annotations

import pytest

from lobug.memory.evidence import (
    ADMIN_EVIDENCE,
    NO_EVIDENCE,
    Evidence,
    PersonNotAllowed,
    SummariesPrivate,
    asker,
    asking_viewer,
    heard,
    reader,
    require_summaries,
    visible_fact,
    visible_versions,
)
from lobug.memory.people import Household
from lobug.names import person_name
from lobug.store.errors import FactNotFound
from lobug.store.household import EVERYONE, GUEST_VIEWER, Speaker, Viewer
from lobug.store.models import NewFact
from lobug.store.protocol import Store
from tests.fakes import FakeClock, FakeEmbedder

AGENT = "home"
KITCHEN = Evidence(device="kitchen")  # Jordan's device's own token
OFFICE = Evidence(device="office")  # Sam's
HALL = Evidence(device="hall")  # a device's own token, the device bound to no one


@pytest.fixture
def home(store: Store) -> tuple[Household, int, int]:
    store.ensure_agent(AGENT)
    household = Household(store, FakeClock())
    jordan = store.add_person(AGENT, person_name("Jordan"), actor="test").id
    sam = store.add_person(AGENT, person_name("Sam"), actor="test").id
    store.set_device_person(AGENT, "kitchen", jordan, actor="test")
    store.set_device_person(AGENT, "office", sam, actor="test")
    return household, jordan, sam


def test_the_token_decides_what_a_caller_reads(home: tuple[Household, int, int]) -> None:
    household, jordan, sam = home
    assert reader(household, AGENT, ADMIN_EVIDENCE) == EVERYONE
    assert reader(household, AGENT, KITCHEN) == Viewer.person(jordan)
    assert reader(household, AGENT, OFFICE) == Viewer.person(sam)
    assert reader(household, AGENT, HALL) == GUEST_VIEWER
    assert reader(household, AGENT, NO_EVIDENCE) == GUEST_VIEWER  # a plain device token


def test_without_people_everything_is_the_one_users(store: Store) -> None:
    store.ensure_agent(AGENT)
    household = Household(store, FakeClock())
    for evidence in (ADMIN_EVIDENCE, KITCHEN, NO_EVIDENCE):
        assert reader(household, AGENT, evidence) == EVERYONE
        assert asking_viewer(household, AGENT, evidence, None) == EVERYONE
        assert asking_viewer(household, AGENT, evidence, "Jordan") == EVERYONE


def test_a_household_of_one_reads_all_only_with_its_persons_evidence(store: Store) -> None:
    store.ensure_agent(AGENT)
    household = Household(store, FakeClock())
    jordan = store.add_person(AGENT, person_name("Jordan"), actor="test").id
    store.set_device_person(AGENT, "kitchen", jordan, actor="test")
    assert reader(household, AGENT, KITCHEN) == Viewer("person", jordan, alone=True)
    assert reader(household, AGENT, KITCHEN).reads_summaries
    assert reader(household, AGENT, NO_EVIDENCE) == GUEST_VIEWER
    assert asker(household, AGENT, ADMIN_EVIDENCE, None).person_id == jordan


def test_a_name_opens_nothing_the_evidence_does_not(home: tuple[Household, int, int]) -> None:
    household, jordan, sam = home
    for evidence in (OFFICE, HALL, NO_EVIDENCE):
        with pytest.raises(PersonNotAllowed):
            asker(household, AGENT, evidence, "Jordan")
        with pytest.raises(PersonNotAllowed):
            asker(household, AGENT, evidence, " jordan ")
    assert asker(household, AGENT, KITCHEN, "Jordan").person_id == jordan
    assert asker(household, AGENT, ADMIN_EVIDENCE, "Jordan").person_id == jordan
    assert asker(household, AGENT, ADMIN_EVIDENCE, "Sam").person_id == sam
    # a name of no one in the household is a guest's, whoever asks
    assert asker(household, AGENT, OFFICE, "Mallory").is_guest
    assert asker(household, AGENT, OFFICE, None) == Speaker(sam, "device_default", 0.5)
    assert asker(household, AGENT, NO_EVIDENCE, None).is_guest
    assert asker(household, AGENT, ADMIN_EVIDENCE, None).is_guest  # several people: no one


def test_words_never_name_the_asker_nor_carry_to_the_next_call(
    home: tuple[Household, int, int],
) -> None:
    """A program call's words are not read for a claim, and nothing said on one call is held
    for the next (the old rule held "it's Jordan" on the program's source for 5 minutes)."""
    household, jordan, _ = home
    household.speaker(AGENT, "api", "It's Jordan. What's my locker code?")  # the old way
    assert asking_viewer(household, AGENT, NO_EVIDENCE, None) == GUEST_VIEWER
    assert asking_viewer(household, AGENT, KITCHEN, None) == Viewer.person(jordan)
    assert asking_viewer(household, AGENT, NO_EVIDENCE, None) == GUEST_VIEWER


def test_summaries_only_for_who_may_read_every_persons_words(
    home: tuple[Household, int, int],
) -> None:
    household, _, _ = home
    require_summaries(reader(household, AGENT, ADMIN_EVIDENCE))
    for evidence in (KITCHEN, OFFICE, NO_EVIDENCE):
        with pytest.raises(SummariesPrivate):
            require_summaries(reader(household, AGENT, evidence))


def test_one_fact_and_its_sources_as_the_viewer_may_see_them(
    store: Store, home: tuple[Household, int, int]
) -> None:
    _, jordan, sam = home
    said = store.append_message(
        AGENT, "kitchen", "user", "My locker code is 4417", speaker=Speaker(jordan, "voice", 0.9)
    )
    store.append_message(
        AGENT, "office", "user", "My dentist is Dr Alvarez", speaker=Speaker(sam, "voice", 0.9)
    )
    vector = FakeEmbedder().embed("locker")
    secret = NewFact("Locker code is 4417", "identity", owner_person_id=jordan, scope="private")
    added = store.add_fact_superseding_duplicate(
        AGENT, secret, vector, duplicate_distance=0.0, actor="test"
    ).fact
    as_jordan, as_sam = Viewer.person(jordan), Viewer.person(sam)
    assert visible_fact(store, AGENT, added.id, as_jordan).id == added.id
    assert visible_fact(store, AGENT, added.id, EVERYONE).id == added.id
    for outsider in (as_sam, GUEST_VIEWER):
        with pytest.raises(FactNotFound):
            visible_fact(store, AGENT, added.id, outsider)
        assert visible_versions(store, AGENT, added.id, outsider) == []
    messages = store.agent_messages(AGENT, 10)
    assert [m.content for m in heard(messages, EVERYONE)] == [
        "My dentist is Dr Alvarez",
        said.content,
    ]
    assert [m.content for m in heard(messages, as_jordan)] == [said.content]
    assert heard(messages, GUEST_VIEWER) == []
