from __future__ import annotations

from lobug.memory.assembly import TURN_SECTIONS, fit, memory_room, messages_tokens
from lobug.memory.context import MemoryContext
from lobug.store.models import Fact, ScoredFact
from lobug.tokens import estimate_tokens


def scored(n: int, text: str) -> ScoredFact:
    no_triple = (None, None, None, None)
    fact = Fact(n, "lobug", text, "identity", *no_triple, 1.0, None, (), 0, 0, None, None)
    return ScoredFact(fact, 1.0 - n / 10)


CONTEXT = MemoryContext(
    base_memory="The user is called Alex.",
    pinned=("The user is allergic to nuts",),
    facts=tuple(scored(n, f"The user visited city number {n} last summer") for n in range(6)),
)


def test_turn_notes_are_cut_to_their_budget_best_first_and_the_standing_part_stays() -> None:
    fitted = fit(CONTEXT, 60, TURN_SECTIONS)
    assert 1 <= len(fitted.facts) < 6
    assert fitted.facts == CONTEXT.facts[: len(fitted.facts)]
    assert estimate_tokens("\n\n".join(fitted.turn_sections())) <= 60
    assert (fitted.base_memory, fitted.pinned) == (CONTEXT.base_memory, CONTEXT.pinned)


def test_notes_within_the_budget_are_left_alone() -> None:
    assert fit(CONTEXT, 10_000, TURN_SECTIONS) == CONTEXT
    assert fit(CONTEXT, 0, TURN_SECTIONS).facts == ()


def test_the_room_for_memory_is_what_the_messages_leave_less_one_item() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    assert messages_tokens(messages) == estimate_tokens("Be brief.") + estimate_tokens("hi") + 8
    assert memory_room(1000, messages) == 1000 - messages_tokens(messages) - 4
