"""Reminders (issue 30, item 4): "remind me to call Anna at six" is stored with the time it
rings, said back; "what reminders do I have" and "cancel the reminder about Anna" work by
voice or text; a due reminder is said once, after the device's next answer (HTTP) or as the
last piece of a streamed one, whichever device or turn comes first; both engines."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from lobug.config import MemoryConfig, Settings
from lobug.memory.manager import MemoryManager
from lobug.memory.reminders import CLAIM_S, MAX_WAITING_PER_DEVICE, MAX_WAITING_PER_OWNER
from lobug.memory.spoken_requests import (
    CancelReminder,
    ListReminders,
    SetReminder,
    recognise_memory_request,
)
from lobug.memory.when import due_time, ring_time
from lobug.names import person_name
from lobug.store.protocol import Store
from lobug.turn.assistant import Assistant
from tests.fakes import FakeChat, FakeEmbedder

ZONE = ZoneInfo("Europe/Berlin")
THURSDAY_2PM = datetime(2026, 11, 26, 14, 0, tzinfo=ZONE)


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at.timestamp()

    def __call__(self) -> float:
        return self.at

    def forward(self, **delta: float) -> None:
        self.at += timedelta(**delta).total_seconds()


@pytest.mark.parametrize(
    ("phrase", "rings"),
    [
        ("at six", "2026-11-26 18:00"),  # the next six o'clock: this evening
        ("at 6 am", "2026-11-27 06:00"),
        ("at 18:00", "2026-11-26 18:00"),
        ("at 6:30 p.m.", "2026-11-26 18:30"),
        ("at noon", "2026-11-27 12:00"),
        ("tonight at 11", "2026-11-26 23:00"),
        ("tomorrow at six", "2026-11-27 18:00"),
        ("tomorrow at 9", "2026-11-27 09:00"),
        ("tomorrow", "2026-11-27 09:00"),
        ("on Monday at 10 am", "2026-11-30 10:00"),
        ("at 7 in the morning", "2026-11-27 07:00"),
        ("in 20 minutes", "2026-11-26 14:20"),
        ("in half an hour", "2026-11-26 14:30"),
        ("in two hours", "2026-11-26 16:00"),
    ],
)
def test_a_time_phrase_rings_at_the_time_people_mean(phrase: str, rings: str) -> None:
    ring = ring_time(phrase, THURSDAY_2PM)
    assert ring is not None
    assert ring.at.strftime("%Y-%m-%d %H:%M") == rings


@pytest.mark.parametrize("phrase", ["at 25", "in 9999 hours", "at the shop", "soon", ""])
def test_a_time_that_is_not_one_or_too_far_rings_never(phrase: str) -> None:
    assert ring_time(phrase, THURSDAY_2PM) is None


def test_requests_are_recognised_whole_and_ordinary_turns_are_not() -> None:
    assert recognise_memory_request("Remind me to look at the car at six") == SetReminder(
        "look at the car", "at six"
    )
    assert recognise_memory_request("Can you remind me at 7 pm to take my pills?") == (
        SetReminder("take my pills", "at 7 pm")
    )
    assert recognise_memory_request("Do I have any reminders?") == ListReminders()
    assert recognise_memory_request("Delete the reminder about the dentist") == CancelReminder(
        "the dentist"
    )
    for ordinary in (
        "Remind me to call Anna",  # no time: the model answers (and may ask when)
        "Did you remind me at six?",
        "My sister reminds me of my mother at six",
        "What time is it?",
    ):
        assert recognise_memory_request(ordinary) is None, ordinary


@pytest.mark.both_engines
def test_a_reminder_rings_once_whichever_device_claims_it(store: Store) -> None:
    early = store.add_reminder("home", "desk", "call Anna", 100.0, actor="voice")
    late = store.add_reminder("home", "desk", "water the plants", 500.0, actor="voice")
    everyone = (None,)
    assert store.claim_due_reminders("home", "kitchen", 50.0, everyone, 60) == []
    rung = store.claim_due_reminders("home", "kitchen", 150.0, everyone, 60)
    assert [r.id for r in rung] == [early.id]
    assert store.claim_due_reminders("home", "desk", 160.0, everyone, 60) == []  # claimed
    store.mark_reminders_said([early.id], "kitchen", 170.0)
    assert store.claim_due_reminders("home", "desk", 10_000.0, everyone, 60) == [late]
    store.release_reminders([late.id])  # not said: it rings again
    assert [r.id for r in store.waiting_reminders("home")] == [late.id]
    assert [r.id for r in store.cancel_reminders("home", [late.id, early.id], actor="cli")] == [
        late.id
    ]
    assert store.waiting_reminders("home") == []
    assert store.claim_due_reminders("home", "desk", 10_000.0, everyone, 60) == []
    actions = [(e.action, e.target) for e in store.audit_entries("home", 10)]
    assert ("create", "reminder") in actions and ("cancel", "reminder") in actions
    store.delete_agent("home", actor="cli")
    assert store.waiting_reminders("home") == []


@pytest.fixture
def clock() -> Clock:
    return Clock(THURSDAY_2PM)


@pytest.fixture
def assistant(
    store: Store, fake_chat: FakeChat, fake_embedder: FakeEmbedder, clock: Clock
) -> Assistant:
    settings = Settings(memory=MemoryConfig(timezone="Europe/Berlin"), dream_at="")
    memory = MemoryManager(store, fake_chat, fake_embedder, settings.memory, clock=clock)
    return Assistant(settings, store, memory, fake_chat, fake_embedder)


@pytest.mark.both_engines
def test_set_listed_said_once_after_the_next_answer_and_cancelled_by_voice(
    assistant: Assistant, fake_chat: FakeChat, clock: Clock
) -> None:
    said = assistant.reply("desk", "Remind me to call my mother at six").response
    assert said == "Okay, I'll remind you to call your mother at 18:00."
    assistant.reply("desk", "Remind me tomorrow at 9 to water the plants")
    listed = assistant.reply("kitchen", "What reminders do I have?").response
    assert listed == (
        "You have 2 reminders: to call your mother at 18:00, and to water the plants "
        "tomorrow at 09:00."
    )
    fake_chat.enqueue("It is sunny.")
    assert assistant.reply("desk", "How is the weather?").response == "It is sunny."  # not due
    clock.forward(hours=4, minutes=1)
    fake_chat.enqueue("It is raining.", "Good evening.")
    answered = assistant.reply("kitchen", "And now?")
    assert answered.response == "It is raining. You asked me to remind you to call your mother."
    assert answered.assistant_message is not None
    assert answered.assistant_message.content == answered.response  # the log keeps what was said
    assert assistant.reply("desk", "Hello").response == "Good evening."  # said once
    cancelled = assistant.reply("desk", "Cancel the reminder about the plants").response
    assert cancelled == "Okay, I cancelled the reminder to water the plants."
    assert assistant.reply("desk", "What are my reminders?").response == "You have no reminders."


@pytest.mark.both_engines
def test_a_streamed_answer_says_a_due_reminder_as_its_last_piece(
    assistant: Assistant, fake_chat: FakeChat, store: Store, clock: Clock
) -> None:
    assistant.reply("desk", "Remind me in 10 minutes to check the oven")
    clock.forward(minutes=11)
    fake_chat.enqueue("Dinner smells good.")
    with assistant.reply_streaming("desk", "What smells so good?") as streaming:
        pieces = list(streaming.pieces())
    assert pieces[-1] == " You asked me to remind you to check the oven."
    assert streaming.turn is not None
    assert (
        streaming.turn.response
        == "Dinner smells good. You asked me to remind you to check the oven."
    )
    assert store.waiting_reminders("lobug") == []


def test_a_time_already_past_is_said_back_not_stored(assistant: Assistant, store: Store) -> None:
    said = assistant.reply("desk", "Remind me in 400 days to renew my passport").response
    assert (
        said
        == "I can only remind you to renew your passport at a time still to come, within a year."
    )
    assert store.waiting_reminders("lobug") == []


# ------------------------------------------------------------------ issue 42: owned, bounded


def household(store: Store) -> tuple[int, int]:
    """Jordan on the kitchen device, Sam on the office one; the hall is nobody's."""
    jordan = store.add_person("lobug", person_name("Jordan"), actor="test").id
    sam = store.add_person("lobug", person_name("Sam"), actor="test").id
    store.set_device_person("lobug", "kitchen", jordan, actor="test")
    store.set_device_person("lobug", "office", sam, actor="test")
    return jordan, sam


@pytest.mark.both_engines
def test_a_reminder_is_its_setters_to_list_cancel_and_hear(
    assistant: Assistant, fake_chat: FakeChat, store: Store, clock: Clock
) -> None:
    jordan, _ = household(store)
    said = assistant.reply("kitchen", "Remind me in 10 minutes to take my insulin").response
    assert said.startswith("Okay, I'll remind you to take your insulin")
    assert [r.owner_person_id for r in store.waiting_reminders("lobug")] == [jordan]
    assistant.reply("hall", "Remind me in 5 minutes to feed the cat")  # a guest's: the household's
    assert assistant.reply("office", "What reminders do I have?").response == (
        "You have 1 reminder: to feed the cat at 14:05."
    )
    assert assistant.reply("hall", "Cancel all my reminders").response == (
        "Okay, I cancelled the reminder to feed the cat."
    )
    assert [r.owner_person_id for r in store.waiting_reminders("lobug")] == [jordan]
    clock.forward(minutes=11)
    fake_chat.enqueue("Sure.", "Sure.", "Hi.")
    assert assistant.reply("office", "Hello").response == "Sure."  # not Sam's, not here
    assert assistant.reply("hall", "Hello").response == "Sure."
    assert assistant.reply("kitchen", "Hello").response == (
        "Hi. You asked me to remind you to take your insulin."
    )
    assert store.waiting_reminders("lobug") == []


@pytest.mark.both_engines
def test_reminders_are_capped_per_person_and_per_device(
    assistant: Assistant, store: Store, clock: Clock
) -> None:
    jordan, _ = household(store)
    for n in range(MAX_WAITING_PER_OWNER):
        store.add_reminder("lobug", "hall", f"thing {n}", 2e9, actor="t", owner_person_id=jordan)
    refused = assistant.reply("kitchen", "Remind me in 5 minutes to call Anna").response
    assert refused.startswith("You have 100 reminders waiting already")
    for n in range(MAX_WAITING_PER_DEVICE):
        store.add_reminder("lobug", "office", f"thing {n}", 2e9, actor="t")
    refused = assistant.reply("office", "Remind me in 5 minutes to call Anna").response
    assert refused.startswith("This device has 100 reminders waiting already")
    assert len(store.waiting_reminders("lobug")) == 200  # nothing stored past a cap


def test_many_due_reminders_are_said_as_one_short_message(
    assistant: Assistant, fake_chat: FakeChat, store: Store, clock: Clock
) -> None:
    at = clock() - 60
    for n in range(1500):
        store.add_reminder("lobug", "desk", f"do thing number {n}", at + n / 1000, actor="t")
    fake_chat.enqueue("Hello.")
    said = assistant.reply("desk", "Hi").response
    assert said == (
        "Hello. You have 1500 reminders due; the first 3 are: to do thing number 0, to do "
        "thing number 1, and to do thing number 2."
    )
    assert store.waiting_reminders("lobug") == []


def test_a_reminder_is_said_only_once_delivered_and_rings_again_when_not(
    assistant: Assistant, fake_chat: FakeChat, store: Store, clock: Clock
) -> None:
    store.add_reminder("lobug", "desk", "water the plants", clock() - 1, actor="t")
    fake_chat.enqueue("One.", "Two.", "Three.")
    turn = assistant.reply("desk", "Hi", heard_later=True)
    assert turn.response == "One. You asked me to remind you to water the plants."
    assert len(store.waiting_reminders("lobug")) == 1  # claimed, not yet delivered
    assert assistant.reply("desk", "Hi").response == "Two."  # claimed: not said twice
    clock.forward(seconds=CLAIM_S + 1)  # never delivered (the process was killed): it lapses
    assert assistant.reply("desk", "Hi").response.endswith("water the plants.")
    assert store.waiting_reminders("lobug") == []


def test_a_streamed_answer_cut_before_its_reminder_leaves_it_to_ring_again(
    assistant: Assistant, fake_chat: FakeChat, store: Store, clock: Clock
) -> None:
    store.add_reminder("lobug", "desk", "check the oven", clock() - 1, actor="t")
    fake_chat.enqueue("Dinner smells good.")
    with assistant.reply_streaming("desk", "What smells so good?") as streaming:
        first = next(streaming.pieces())
        streaming.interrupt(first)  # the person spoke over it
    assert [r.what for r in store.waiting_reminders("lobug")] == ["check the oven"]
    fake_chat.enqueue("Yes.")
    assert assistant.reply("desk", "Hi").response.endswith("to check the oven.")


@pytest.mark.parametrize(
    ("phrase", "rings"),
    [
        ("tonight", "2026-11-26 18:00"),  # the evening's start, as `due_time` reads it
        ("tomorrow at 24:00", None),
        ("tomorrow at 25", None),
        ("on Friday at 13 pm", None),
        ("tomorrow at 0:75", None),
        ("in 0 minutes", None),
    ],
)
def test_tonight_means_one_thing_and_a_clock_that_is_none_is_refused(
    phrase: str, rings: str | None
) -> None:
    ring = ring_time(phrase, THURSDAY_2PM)
    assert (ring and ring.at.strftime("%Y-%m-%d %H:%M")) == rings
    tonight = due_time("tonight", THURSDAY_2PM)
    assert tonight is not None and datetime.fromtimestamp(tonight, ZONE).hour == 18
