"""The memory a voice turn reuses from the look-up made while the person spoke."""

from __future__ import annotations

import threading
import time

import pytest

from lobug.config import MemoryConfig
from lobug.memory.commitments import COMMITMENT
from lobug.memory.context import MemoryContext
from lobug.memory.manager import MemoryManager
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import NewFact
from lobug.store.sqlite.engine import SQLiteStore
from lobug.turn.early import MAX_AGE_S, EarlyRecall, new_words, words_of
from tests.fakes import FakeChat, FakeClock, FakeEmbedder

AGENT = "lobug"
FACTS = (
    "The user's sister Emma lives in Berlin",
    "The user likes mushroom pizza",
    "The user's dentist is Doctor Okafor",
)


@pytest.fixture
def memory(store: SQLiteStore, fake_embedder: FakeEmbedder) -> MemoryManager:
    for text in FACTS:
        store.add_fact(AGENT, NewFact(text, "identity"), fake_embedder.embed(text))
    return MemoryManager(store, FakeChat(), fake_embedder, MemoryConfig())


def look_up(
    early: EarlyRecall, device: str, words: str, agent: str = AGENT, viewer: Viewer = EVERYONE
) -> MemoryContext:
    with early.looking_up(device, words) as recall:
        return recall(agent, words, viewer)


def contents(facts: tuple[object, ...]) -> list[str]:
    return [hit.fact.content for hit in facts]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("ahead", "final", "added"),
    [
        ("What about my sister", "What about my sister?", ()),
        ("What about my sister", "what about my sister Emma", ("emma",)),
        ("What about my sister", "What about my sista Emma", ("emma",)),  # one word differs
        ("What about my sister", "Who is my brother Emma", None),  # two differ
        ("What about my sister", "What about my sister and her dog in Berlin", None),  # half new
        (
            "Tell me what my sister Emma likes to eat",
            "Tell me what my sister Emma likes to eat and drink in Berlin these days",
            ("and", "drink", "in", "berlin", "these", "days"),
        ),
        (
            "Tell me what my sister Emma likes to eat",
            "Tell me what my sister Emma likes to eat and drink in Berlin these days now",
            None,  # 7 new
        ),
        ("What about", "What about my sister Emma", None),  # most of the words new
        ("", "Hello there", None),
        ("What about my sister Emma", "What about my", None),  # fewer words
    ],
)
def test_new_words(ahead: str, final: str, added: tuple[str, ...] | None) -> None:
    assert new_words(words_of(ahead), words_of(final)) == added


def test_the_same_words_reuse_the_look_up_without_embedding(
    memory: MemoryManager, fake_embedder: FakeEmbedder
) -> None:
    early = EarlyRecall(memory)
    ahead = look_up(early, "d1", "Where does my sister Emma live")
    calls = fake_embedder.calls
    turn = early.for_turn("d1", AGENT, "Where does my sister Emma live?", EVERYONE)
    assert fake_embedder.calls == calls
    assert contents(turn.facts) == contents(ahead.facts)
    assert contents(turn.facts)[0] == FACTS[0]
    assert "embed_query" not in turn.timings_ms


HEARD_AHEAD = "Tell me who my sister is and who"
SAID = "Tell me who my sister is and who my dentist is"


def turn_going_on(
    memory: MemoryManager,
    store: SQLiteStore,
    monkeypatch: pytest.MonkeyPatch,
    failing: str,
    error: Exception,
) -> tuple[MemoryContext, MemoryContext]:
    """The look-up of `HEARD_AHEAD`, then the turn that said `SAID`, while the store's
    `failing` raises `error`."""
    early = EarlyRecall(memory)
    ahead = look_up(early, "d1", HEARD_AHEAD)

    def fail(*_args: object) -> None:
        raise error

    monkeypatch.setattr(store, failing, fail)
    return ahead, early.for_turn("d1", AGENT, SAID, EVERYONE)


def test_a_few_new_words_are_fused_with_the_facts_found_ahead_without_a_search_by_meaning(
    memory: MemoryManager,
    fake_embedder: FakeEmbedder,
    store: SQLiteStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = fake_embedder.calls
    searched = AssertionError("the turn searched by meaning")
    ahead, turn = turn_going_on(memory, store, monkeypatch, "nearest_fact_hits", searched)
    assert fake_embedder.calls == calls + 1  # the look-up's; none on the turn's path
    assert FACTS[2] in contents(turn.facts)  # "dentist", heard last
    assert FACTS[0] in contents(ahead.facts)
    assert FACTS[0] in contents(turn.facts)  # found ahead, fused anew
    assert "early_fused" in turn.timings_ms


def test_a_guess_is_looked_up_anew_and_words_that_may_end_the_turn_are_served_by_it(
    memory: MemoryManager, fake_embedder: FakeEmbedder
) -> None:
    early = EarlyRecall(memory)
    look_up(early, "d1", "Tell me who my sister is")
    calls = fake_embedder.calls
    with early.looking_up("d1", "Tell me who my sister is and who", may_end=False) as recall:
        recall(AGENT, "Tell me who my sister is and who", EVERYONE)
    assert fake_embedder.calls == calls + 1  # a guess, while the person speaks: anew
    with early.looking_up("d1", "Tell me who my sister is and who my dentist is") as recall:
        recall(AGENT, "Tell me who my sister is and who my dentist is", EVERYONE)
    assert fake_embedder.calls == calls + 1  # the guess's look-up serves them
    turn = early.for_turn("d1", AGENT, "Tell me who my sister is and who my dentist is", EVERYONE)
    assert fake_embedder.calls == calls + 1
    assert FACTS[2] in contents(turn.facts)


def test_commitments_a_question_listed_ahead_are_listed_first_again(
    memory: MemoryManager, fake_embedder: FakeEmbedder, store: SQLiteStore
) -> None:
    promise = NewFact("The user will call Anna", COMMITMENT, due_at=1_900_000_000.0)
    store.add_fact(AGENT, promise, fake_embedder.embed(promise.content))
    early = EarlyRecall(memory)
    ahead = look_up(early, "d1", "What did I promise to do")
    assert contents(ahead.facts)[0] == promise.content
    calls = fake_embedder.calls
    turn = early.for_turn("d1", AGENT, "What did I promise to do for my sister Emma", EVERYONE)
    assert fake_embedder.calls == calls
    assert "early_fused" in turn.timings_ms
    assert contents(turn.facts)[0] == promise.content
    assert contents(turn.facts).count(promise.content) == 1
    assert FACTS[0] in contents(turn.facts)  # "sister Emma", heard last


def test_a_failing_fusion_costs_the_new_words_facts_not_the_turn(
    memory: MemoryManager, store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = RuntimeError("the full-text index is gone")
    ahead, turn = turn_going_on(memory, store, monkeypatch, "keyword_fact_hits", gone)
    assert contents(turn.facts) == contents(ahead.facts)


@pytest.mark.parametrize(
    "final",
    [
        "Who is my dentist by the way",  # other words
        "Where does my sister Emma live what did I promise",  # a first ask about commitments
    ],
)
def test_other_words_are_retrieved_anew(
    memory: MemoryManager, fake_embedder: FakeEmbedder, final: str
) -> None:
    early = EarlyRecall(memory)
    look_up(early, "d1", "Where does my sister Emma live")
    calls = fake_embedder.calls
    turn = early.for_turn("d1", AGENT, final, EVERYONE)
    assert fake_embedder.calls == calls + 1
    assert "embed_query" in turn.timings_ms


def test_a_look_up_serves_one_turn_of_its_device_its_agent_and_viewer_while_fresh(
    memory: MemoryManager, fake_embedder: FakeEmbedder
) -> None:
    clock = FakeClock()
    early = EarlyRecall(memory, clock)
    words = "Where does my sister Emma live"

    def embeds(device: str, agent: str = AGENT, viewer: Viewer = EVERYONE) -> bool:
        calls = fake_embedder.calls
        early.for_turn(device, agent, words, viewer)
        return fake_embedder.calls > calls

    look_up(early, "d1", words)
    assert embeds("d2")  # another device's
    assert not embeds("d1")
    assert embeds("d1")  # taken by the turn before
    look_up(early, "d1", words)
    assert embeds("d1", agent="other")
    look_up(early, "d1", words)
    assert embeds("d1", viewer=Viewer.person(7))
    look_up(early, "d1", words)
    clock.now += MAX_AGE_S + 1
    assert embeds("d1")


def test_a_turn_waits_for_the_look_up_of_its_words_still_running(
    memory: MemoryManager, fake_embedder: FakeEmbedder
) -> None:
    early = EarlyRecall(memory)
    words = "Where does my sister Emma live"
    turns: list[MemoryContext] = []
    with early.looking_up("d1", words) as recall:
        turn = threading.Thread(
            target=lambda: turns.append(early.for_turn("d1", AGENT, words, EVERYONE))
        )
        turn.start()
        calls = fake_embedder.calls
        recall(AGENT, words, EVERYONE)
        turn.join(timeout=10)
    assert fake_embedder.calls == calls + 1  # one look-up, not two
    assert contents(turns[0].facts)[0] == FACTS[0]


def test_a_look_up_that_failed_leaves_the_turn_to_retrieve_at_once(
    memory: MemoryManager, fake_embedder: FakeEmbedder
) -> None:
    early = EarlyRecall(memory)
    with pytest.raises(RuntimeError), early.looking_up("d1", "Where does my sister live"):
        raise RuntimeError("the prime failed before its look-up")
    started = time.monotonic()
    turn = early.for_turn("d1", AGENT, "Where does my sister live", EVERYONE)
    assert time.monotonic() - started < 1
    assert "embed_query" in turn.timings_ms


def test_a_time_the_last_words_name_is_read_by_time_without_a_search(
    memory: MemoryManager, fake_embedder: FakeEmbedder, store: SQLiteStore
) -> None:
    store.append_message(AGENT, "d1", "user", "We planted tomatoes in the garden")
    early = EarlyRecall(memory)
    look_up(early, "d1", "What did we talk about")
    calls = fake_embedder.calls
    turn = early.for_turn("d1", AGENT, "What did we talk about today?", EVERYONE)
    assert fake_embedder.calls == calls
    said = [hit.message.content for hit in turn.messages]
    assert "We planted tomatoes in the garden" in said
