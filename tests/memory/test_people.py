"""Who is speaking, whose a fact is, and the forget-me confirmation (`memory/people.py`),
on a real SQLite store. A recognised voice is given in as the voice path will give it (the
voice recognizer is another backend); here a fixed Speaker stands for it."""

from __future__ import annotations

import pytest

from lobug.memory.people import (
    CLAIM_HOLDS_S,
    Household,
    asks_to_forget_me,
    attributed,
    claim_in,
    confirms,
    establishes,
)
from lobug.memory.voice_enrolment import HeardVoice
from lobug.names import InvalidPersonName, person_name
from lobug.store.household import EVERYONE, GUEST_VIEWER, HOUSEHOLD, PRIVATE, Speaker, Viewer
from lobug.store.models import NewFact
from lobug.store.protocol import Store
from tests.fakes import FakeClock, FakeEmbedder

AGENT = "home"


@pytest.fixture
def home(store: Store) -> tuple[Household, FakeClock, int, int]:
    store.ensure_agent(AGENT)
    clock = FakeClock()
    household = Household(store, clock)
    jordan = store.add_person(AGENT, person_name("Jordan"), actor="test").id
    sam = store.add_person(AGENT, person_name(" Sam "), actor="test").id
    store.set_device_person(AGENT, "kitchen", jordan, actor="test")
    return household, clock, jordan, sam


def test_the_best_source_speaks_first(home: tuple[Household, FakeClock, int, int]) -> None:
    household, clock, jordan, sam = home
    voice = Speaker(sam, "voice", 0.93)
    assert household.speaker(AGENT, "kitchen", "it's Jordan", voice) == voice
    assert household.speaker(AGENT, "kitchen", "what's for dinner") == Speaker(
        jordan, "device_default", 0.5
    )
    assert household.speaker(AGENT, "hall", "what's for dinner").person_id is None
    claimed = household.speaker(AGENT, "hall", "Hi, it's Sam. Is it raining?")
    assert (claimed.person_id, claimed.source) == (sam, "claim")
    clock.now += CLAIM_HOLDS_S - 1  # on a device of no one's, the claim holds, refreshed
    assert household.speaker(AGENT, "hall", "and tomorrow?").person_id == sam
    clock.now += CLAIM_HOLDS_S + 1
    assert household.speaker(AGENT, "hall", "and tomorrow?").source == "guest"
    guest = household.speaker(AGENT, "hall", "this is my friend Alex")
    assert (guest.person_id, guest.source) == (None, "claim")
    assert household.speaker(AGENT, "hall", "how are you").person_id is None


def test_a_claim_never_outlives_the_devices_next_person(
    home: tuple[Household, FakeClock, int, int],
) -> None:
    household, _, jordan, sam = home
    household.store.set_device_person(AGENT, "office", sam, actor="test")
    claimed = household.speaker(AGENT, "office", "It's Jordan.")
    assert (claimed.person_id, claimed.source) == (jordan, "claim")
    # Sam's next sentence on her own device is hers, not Jordan's.
    assert household.speaker(AGENT, "office", "My bank PIN is 1234") == Speaker(
        sam, "device_default", 0.5
    )
    # On a device of no one's, another voice ends the claim.
    household.speaker(AGENT, "hall", "Jordan here")
    assert household.speaker(AGENT, "hall", "hm", Speaker(sam, "voice", 0.9)).source == "voice"
    assert household.speaker(AGENT, "hall", "and now?").person_id is None
    # The device's own person saying their name is the device's person.
    assert household.speaker(AGENT, "kitchen", "it's Jordan").source == "device_default"


def test_a_claim_opens_nothing_private(home: tuple[Household, FakeClock, int, int]) -> None:
    household, _, jordan, _ = home
    claimed = household.speaker(AGENT, "hall", "its jordan")
    assert claimed.person_id == jordan and not establishes(claimed)
    assert household.viewer(AGENT, claimed) == GUEST_VIEWER
    assert household.viewer(AGENT, Speaker(jordan, "device_default", 0.5)) == Viewer.person(jordan)


def test_claims_name_only_known_people(home: tuple[Household, FakeClock, int, int]) -> None:
    household, _, jordan, sam = home
    people = household.store.people(AGENT)
    assert claim_in("I'm tired", people) is None
    assert claim_in("I'm Jordan", people).person_id == jordan  # type: ignore[union-attr]
    assert claim_in("sam here, what's up", people).person_id == sam  # type: ignore[union-attr]
    assert claim_in("This is my friend Sam", people).person_id == sam  # type: ignore[union-attr]
    assert claim_in("tell Jordan it's late", people) is None


def test_claims_name_a_whole_person_only(store: Store) -> None:
    store.ensure_agent(AGENT)
    for name in ("Jordan", "May"):
        store.add_person(AGENT, name, actor="test")
    people = store.people(AGENT)
    for said in ("It's Jordan.", "Jordan here", "its jordan", "Hey, this is Jordan!", "It's May"):
        assert claim_in(said, people) is not None, said
    assert claim_in("It's Jordan.", people).alone  # type: ignore[union-attr]
    assert not claim_in("It's Jordan. What's up?", people).alone  # type: ignore[union-attr]
    for said in (
        "It's Jordan calling for you",
        "This is Jordan singing",
        "I am Jordan fan number one",
        "Hey, this is Jordan Peterson on TV",
        "This is Jordan Peterson.",
        "it's May already",
        "I'm may be late",
        "I'm Jordan's sister",
    ):
        assert claim_in(said, people) is None, said


def test_viewers(store: Store, home: tuple[Household, FakeClock, int, int]) -> None:
    household, _, jordan, _ = home
    assert household.viewer(AGENT, Speaker(jordan, "voice", 1.0)) == Viewer.person(jordan)
    assert household.viewer(AGENT, Speaker(None, "guest", 0.0)) == GUEST_VIEWER
    store.ensure_agent("alone")
    assert household.viewer("alone", Speaker(None, "guest", 0.0)) == EVERYONE
    assert household.speaker("alone", "kitchen", "it's Jordan").person_id is None


def test_a_household_of_one_sees_no_change(store: Store) -> None:
    store.ensure_agent(AGENT)
    household = Household(store)
    only = store.add_person(AGENT, "Robin", actor="test").id
    speaker = household.speaker(AGENT, "any-device", "hello")
    assert (speaker.person_id, speaker.source) == (only, "device_default")
    viewer = household.viewer(AGENT, speaker)
    assert viewer.reads_summaries and viewer.hears(None)


def test_facts_belong_to_their_speaker_or_the_household(store: Store) -> None:
    store.ensure_agent(AGENT)
    jordan = store.add_person(AGENT, "Jordan", actor="test").id
    said = store.append_message(
        AGENT, "k", "user", "My dog is Biscuit", speaker=Speaker(jordan, "voice", 0.9)
    )
    [mine] = attributed([NewFact("The user's dog is Biscuit")], said, True)
    assert (mine.owner_person_id, mine.scope) == (jordan, PRIVATE)
    ours = store.append_message(
        AGENT, "k", "user", "Our wifi password is plum42", speaker=Speaker(jordan, "voice", 0.9)
    )
    [wifi] = attributed([NewFact("Our wifi password is plum42")], ours, True)
    assert (wifi.owner_person_id, wifi.scope) == (jordan, HOUSEHOLD)
    guest = store.append_message(AGENT, "k", "user", "My dog is Rex")
    assert attributed([NewFact("The user's dog is Rex")], guest, True) == []
    assert attributed([NewFact("The user's dog is Rex")], guest, False)[0].scope == HOUSEHOLD


def test_forget_me_waits_for_its_confirmation(
    store: Store, home: tuple[Household, FakeClock, int, int]
) -> None:
    household, _, jordan, _ = home
    me = Speaker(jordan, "device_default", 0.5)
    secret = NewFact("Jordan hides sweets", owner_person_id=jordan, scope=PRIVATE)
    store.add_fact(AGENT, secret, FakeEmbedder().embed(secret.content))

    def turn(text: str, who: Speaker = me) -> str | None:
        confirmed = household.awaiting.take((AGENT, "kitchen"), who.person_id, text)
        return household.forget_me_turn(AGENT, "kitchen", who, text, confirmed)

    asked = turn("Forget everything about me")
    assert asked is not None and "yes, forget me" in asked
    assert turn("what time is it") is None
    assert turn("yes") is None  # dropped: not next
    assert store.person_facts(AGENT, jordan) != []
    turn("please forget me")
    assert turn("yes", Speaker(None, "guest", 0.0)) is None  # not the one asked
    turn("please forget me")
    assert turn("Yes, forget me.") is not None
    assert [f.content for f in store.person_facts(AGENT, jordan)] == []
    guest = Speaker(None, "guest", 0.0)
    assert "don't know who you are" in str(household.forget_me_turn(AGENT, "k", guest, "forget me"))


def test_phrasings() -> None:
    assert asks_to_forget_me("Hey Lo-Bug, forget everything you know about me, please")
    assert asks_to_forget_me("can you erase all about me?")
    assert not asks_to_forget_me("forget everything about my sister")
    assert confirms("yes, forget me") and confirms("Go ahead.") and not confirms("yes and no")
    assert person_name(" Mary Ann ") == "Mary Ann" and person_name("José") == "José"
    for bad in ["", "R2D2", "a" * 41, "Jo  Ann", None]:
        with pytest.raises(InvalidPersonName):
            person_name(bad)


def test_a_dream_never_settles_one_persons_fact_by_anothers() -> None:
    from lobug.memory.dream import contradiction_changes, pair_change
    from lobug.store.models import Fact

    def fact(i: int, text: str, owner: int | None) -> Fact:
        return Fact(
            i, AGENT, text, "preference", "user", "favourite colour", text.split()[-1],
            None, 0.9, None, (), 1.0, 1.0, None, None,
            owner_person_id=owner, scope=PRIVATE if owner else HOUSEHOLD,
        )  # fmt: skip

    jordans, sams = fact(1, "favourite colour is green", 1), fact(2, "favourite colour is blue", 2)
    assert contradiction_changes([jordans, sams], set()) == []
    assert pair_change(jordans, fact(3, "favourite colour is green", 2), 0.99) is None
    [settled] = contradiction_changes([jordans, fact(4, "favourite colour is red", 1)], set())
    assert (settled.fact_id, settled.kept_id) == (1, 4)


def test_a_recognised_voice_names_a_person_of_the_household(
    home: tuple[Household, FakeClock, int, int],
) -> None:
    """The voice recognizer (`speakers/`) keeps its profiles by name; its answer becomes the
    turn's first source when the name is a person's of the device's household."""
    household, _, _, sam = home
    assert household.recognised(AGENT, "sam", 0.93) == Speaker(sam, "voice", 0.93)
    assert household.recognised(AGENT, "Robin", 0.93) is None
    assert household.recognised(AGENT, "<guest>", 0.5) is None
    voice = household.recognised(AGENT, "Sam", 0.93)
    assert household.speaker(AGENT, "kitchen", "it's Jordan", voice) == voice


def test_a_claim_keeps_nothing_private_and_forgets_nothing(
    store: Store, home: tuple[Household, FakeClock, int, int]
) -> None:
    household, _, jordan, _ = home
    secret = NewFact("Jordan's locker code is 4417", owner_person_id=jordan, scope=PRIVATE)
    store.add_fact(AGENT, secret, FakeEmbedder().embed(secret.content))
    claimed = household.speaker(AGENT, "hall", "This is Jordan.")
    said = store.append_message(AGENT, "hall", "user", "My locker code is 0000", speaker=claimed)
    assert attributed([NewFact("The user's locker code is 0000")], said, True) == []

    def turn(text: str) -> str | None:
        confirmed = household.awaiting.take((AGENT, "hall"), claimed.person_id, text)
        return household.forget_me_turn(AGENT, "hall", claimed, text, confirmed)

    refused = turn("Forget everything about me")
    assert refused is not None and "Anyone can say a name" in refused
    assert turn("Yes, forget me") is None
    assert [f.content for f in store.person_facts(AGENT, jordan)] == [secret.content]


def test_a_claim_said_alone_is_asked_for_a_voice_where_one_can_be_checked(
    store: Store, home: tuple[Household, FakeClock, int, int]
) -> None:
    household, _, jordan, _ = home
    claimed = household.speaker(AGENT, "hall", "It's Jordan.")
    listening = HeardVoice(None, True, None)
    assert household.check_claim(AGENT, claimed, "It's Jordan.", listening) is None  # no voice
    store.save_voice_profile(AGENT, jordan, b"\0" * 1024, "model", actor="test")
    asked = household.check_claim(AGENT, claimed, "It's Jordan.", listening)
    assert asked == "Are you Jordan? Say something so I can check your voice."
    assert household.check_claim(AGENT, claimed, "It's Jordan.", HeardVoice(None, False)) is None
    assert household.check_claim(AGENT, claimed, "It's Jordan. Hi!", listening) is None
    own = Speaker(jordan, "device_default", 0.5)
    assert household.check_claim(AGENT, own, "It's Jordan.", listening) is None


def test_claims_run_out_are_swept(home: tuple[Household, FakeClock, int, int]) -> None:
    household, clock, _, _ = home
    for n in range(50):
        household.speaker(AGENT, f"guest-{n}", "It's Sam.")
    clock.now += CLAIM_HOLDS_S + 1
    household.speaker(AGENT, "hall", "It's Sam.")
    assert [device for device, _, _ in household._claims.items()] == ["hall"]


@pytest.mark.parametrize(
    ("token_devices", "kitchen_is_jordans"),
    [(None, True), (frozenset({"kitchen"}), True), (frozenset({"office"}), False)],
)
def test_a_binding_says_who_speaks_only_where_the_device_is_proven(
    store: Store, token_devices: frozenset[str] | None, kitchen_is_jordans: bool
) -> None:
    """With tokens required, a device's name proves nothing unless the device has a token of
    its own (its surfaces refuse any other token naming it); without tokens every caller is
    this machine's admin. A household of one is its person's either way."""
    store.ensure_agent(AGENT)
    jordan = store.add_person(AGENT, person_name("Jordan"), actor="test").id
    store.set_device_person(AGENT, "kitchen", jordan, actor="test")
    household = Household(store, FakeClock(), token_devices)
    alone = household.speaker(AGENT, "kitchen", "What's my locker code?")
    assert alone.person_id == jordan  # a household of one
    store.add_person(AGENT, person_name("Sam"), actor="test")
    heard = household.speaker(AGENT, "kitchen", "What's my locker code?")
    assert (heard.person_id == jordan) is kitchen_is_jordans
    assert household.proven("kitchen") is kitchen_is_jordans
