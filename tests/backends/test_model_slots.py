"""Which llama.cpp slot a call runs in (`ModelSlots`): a conversation's own, background work's
own, else the least recently used free one."""

from __future__ import annotations

import itertools
from contextlib import ExitStack

import pytest

from lobug.backends.base import ChatMessage
from lobug.backends.model_slots import ANY_SLOT, ModelSlots

STANDING: ChatMessage = {"role": "system", "content": "You are Lo-Bug."}


def conversation(name: str, turns: int) -> list[ChatMessage]:
    """A device's prompt: the standing prompt every device shares, then `turns` exchanges."""
    messages = [STANDING]
    for turn in range(turns):
        messages.append({"role": "user", "content": f"{name} asks question {turn}."})
        messages.append({"role": "assistant", "content": f"An answer to {name}'s {turn}."})
    return messages


def slots(count: int) -> ModelSlots:
    ticks = itertools.count()
    return ModelSlots(count, clock=lambda: float(next(ticks)))


def used(model_slots: ModelSlots, messages: list[ChatMessage]) -> int:
    with model_slots.person(messages) as slot:
        return slot


def test_a_conversation_comes_back_to_its_slot_after_others() -> None:
    model_slots = slots(5)
    kitchen = used(model_slots, conversation("kitchen", 2))
    for other in ("desk", "hall", "garage"):
        assert used(model_slots, conversation(other, 1)) != kitchen
    assert used(model_slots, conversation("kitchen", 3)) == kitchen


def test_a_slid_window_goes_to_the_slot_holding_its_messages() -> None:
    """Only the standing prompt is a common prefix: llama.cpp alone would pick another slot."""
    model_slots = slots(5)
    desk = used(model_slots, conversation("desk", 10))
    used(model_slots, conversation("hall", 1))
    slid = [STANDING, *conversation("desk", 12)[9:]]
    assert used(model_slots, slid) == desk


def test_the_shared_standing_prompt_alone_does_not_pick_a_slot() -> None:
    model_slots = slots(5)
    first = used(model_slots, conversation("kitchen", 1))
    assert used(model_slots, conversation("desk", 1)) != first


def test_a_new_conversation_takes_the_least_recently_used_free_slot() -> None:
    model_slots = slots(4)  # three for people
    oldest, middle, newest = (used(model_slots, conversation(n, 1)) for n in ("a", "b", "c"))
    assert len({oldest, middle, newest}) == 3
    assert used(model_slots, conversation("d", 1)) == oldest
    with model_slots.person(conversation("b", 2)) as busy:  # b's slot is in use
        assert busy == middle
        assert used(model_slots, conversation("e", 1)) == newest


def test_background_work_has_a_slot_no_person_is_given() -> None:
    model_slots = slots(3)
    given = {used(model_slots, conversation(name, 1)) for name in "abcdef"}
    assert given == {0, 1} and model_slots.background == 2


def test_a_conversation_waits_for_its_own_slot_while_it_is_in_use() -> None:
    """In use by the same conversation (a prompt read ahead): llama.cpp runs the next call
    in it after the first, and the prompt is still there."""
    model_slots = slots(5)
    with model_slots.person(conversation("desk", 2)) as reading_ahead:
        assert used(model_slots, conversation("desk", 3)) == reading_ahead


def test_a_message_two_devices_share_is_no_reason_to_wait_for_the_other() -> None:
    model_slots = slots(5)
    kitchen = conversation("kitchen", 3)
    hall = [STANDING, kitchen[1], *conversation("hall", 3)[1:]]  # one question alike
    with model_slots.person(kitchen) as answering:
        assert used(model_slots, hall) != answering
    assert used(model_slots, [*hall, {"role": "user", "content": "More?"}]) != answering


def test_with_every_slot_in_use_llama_cpp_chooses() -> None:
    model_slots = slots(3)
    with ExitStack() as stack:
        for name in ("a", "b"):
            stack.enter_context(model_slots.person(conversation(name, 1)))
        assert used(model_slots, conversation("c", 1)) == ANY_SLOT
    assert used(model_slots, conversation("c", 1)) in {0, 1}


def test_one_slot_serves_people_and_background_work() -> None:
    model_slots = slots(1)
    assert used(model_slots, conversation("a", 1)) == 0 and model_slots.background == 0


def test_no_slot_is_refused() -> None:
    with pytest.raises(ValueError, match="a slot at least"):
        ModelSlots(0)
