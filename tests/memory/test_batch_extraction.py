"""Several waiting exchanges' facts from one model call (issue 41, item 4), each still learned
from on its own: grounded in its own words, stored with its own sources, dequeued or counted
as failed by itself."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from lobug.backends.base import ChatMessage
from lobug.backends.sharing import ModelTurns
from lobug.config import MemoryConfig
from lobug.memory.batch_extraction import MAX_BATCH, split_by_exchange
from lobug.memory.manager import MemoryManager
from lobug.memory.work_queue import MAX_ATTEMPTS, Exchange, MemoryWork
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeChat, FakeEmbedder, unreachable
from tests.memory.test_manager import facts_reply
from tests.memory.test_work_queue import answered

SAID = [
    ("My name is Alex", "Nice to meet you, Alex."),
    ("I have a dog called Rex", "Rex is a fine name."),
    ("I work as a nurse in Lisbon", "That sounds demanding."),
    ("I play the cello on Sundays", "Lovely."),
]
FACTS = [
    "The user's name is Alex",
    "The user has a dog called Rex",
    "The user works as a nurse in Lisbon",
    "The user plays the cello on Sundays",
]


def batch_reply(*numbered: tuple[Any, str]) -> str:
    return json.dumps(
        {"facts": [{"exchange": n, "fact": f, "type": "identity"} for n, f in numbered]}
    )


@pytest.fixture
def queue_of(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> Iterator[Callable[[FakeChat], MemoryWork]]:
    opened: list[MemoryWork] = []

    def new(chat: FakeChat) -> MemoryWork:
        opened.append(MemoryWork(store, MemoryManager(store, chat, fake_embedder, MemoryConfig())))
        return opened[-1]

    yield new
    for work in opened:
        work.close()


def queued(store: SQLiteStore, said: Sequence[tuple[str, str]] = SAID) -> list[Exchange]:
    return [answered(store, user, reply) for user, reply in said]


def sources_by_fact(store: SQLiteStore) -> dict[str, tuple[int, ...]]:
    return {fact.content: fact.source_message_ids for fact in store.facts("lobug")}


def ids(exchange: Exchange) -> tuple[int, int]:
    return exchange.user.id, exchange.assistant.id


def test_four_waiting_exchanges_are_asked_in_one_call_each_fact_with_its_sources(
    store: SQLiteStore, fake_chat: FakeChat, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    exchanges = queued(store)
    fake_chat.batch_replies.append(batch_reply(*((n, f) for n, f in enumerate(FACTS, 1))))
    assert queue_of(fake_chat).flush() == 4
    assert len(fake_chat.extraction_requests()) == 1
    (asked,) = fake_chat.batch_extraction_requests()
    assert "Exchange 4\nUser: I play the cello on Sundays" in asked[-1]["content"]
    assert sources_by_fact(store) == {f: ids(e) for f, e in zip(FACTS, exchanges, strict=True)}
    assert store.count_queued_exchanges() == 0


def test_a_fact_numbered_for_another_exchange_is_not_grounded_there(
    store: SQLiteStore, fake_chat: FakeChat, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    exchanges = queued(store)
    fake_chat.batch_replies.append(
        batch_reply((2, FACTS[0]), (9, FACTS[2]), ("3", FACTS[2]), (4, FACTS[3]))
    )
    assert queue_of(fake_chat).flush() == 4
    assert len(fake_chat.extraction_requests()) == 1
    # Alex's name, numbered as the dog's exchange, is no fact of either; out of range: dropped
    assert sources_by_fact(store) == {FACTS[3]: ids(exchanges[3])}
    assert store.count_queued_exchanges() == 0  # no facts found is no failure


def test_a_failed_batch_falls_back_to_one_call_per_exchange(
    store: SQLiteStore, fake_chat: FakeChat, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    exchanges = queued(store)
    fake_chat.batch_replies.append("Sure! Here are the facts you asked for.")
    fake_chat.enqueue(*(facts_reply(fact) for fact in FACTS))
    assert queue_of(fake_chat).flush() == 4
    assert len(fake_chat.batch_extraction_requests()) == 1
    assert len(fake_chat.extraction_requests()) == 1 + 4
    assert sources_by_fact(store) == {f: ids(e) for f, e in zip(FACTS, exchanges, strict=True)}


def test_a_batch_whose_facts_name_no_exchange_falls_back(
    store: SQLiteStore, fake_chat: FakeChat, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    queued(store)
    fake_chat.batch_replies.append(facts_reply(FACTS[0]))  # the numbering ignored
    fake_chat.enqueue(facts_reply(FACTS[0]))
    assert queue_of(fake_chat).flush() == 4
    assert len(fake_chat.extraction_requests()) == 1 + 4
    assert list(sources_by_fact(store)) == [FACTS[0]]


def test_exchanges_a_reply_cut_short_never_reached_are_asked_alone(
    store: SQLiteStore, fake_chat: FakeChat, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    exchanges = queued(store)
    whole = batch_reply((1, FACTS[0]), (2, FACTS[1]))
    fake_chat.batch_replies.append(whole[: whole.rindex("]")])  # the token limit came
    fake_chat.enqueue(facts_reply(FACTS[2]), facts_reply(FACTS[3]))
    assert queue_of(fake_chat).flush() == 4
    assert len(fake_chat.extraction_requests()) == 1 + 2  # the third and fourth alone
    assert sources_by_fact(store) == {f: ids(e) for f, e in zip(FACTS, exchanges, strict=True)}


def test_each_exchange_of_a_failing_batch_counts_its_own_failures_until_parked(
    store: SQLiteStore, fake_chat: FakeChat, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    queued(store)
    fake_chat.fail_with = unreachable()
    work = queue_of(fake_chat)
    for _ in range(MAX_ATTEMPTS):
        work.flush()
    assert len(store.parked_exchanges(10, None)) == 4
    assert len(fake_chat.batch_extraction_requests()) == MAX_ATTEMPTS
    assert len(fake_chat.extraction_requests()) == MAX_ATTEMPTS * (1 + 4)


def test_fewer_than_three_waiting_are_asked_one_by_one_as_before(
    store: SQLiteStore, fake_chat: FakeChat, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    queued(store, SAID[:2])
    fake_chat.enqueue(facts_reply(FACTS[0]), facts_reply(FACTS[1]))
    assert queue_of(fake_chat).flush() == 2
    assert fake_chat.batch_extraction_requests() == []
    assert len(fake_chat.extraction_requests()) == 2
    assert (
        fake_chat.extraction_requests()[0][-1]["content"]
        == f"User: {SAID[0][0]}\nAssistant: {SAID[0][1]}"
    )


def test_exchanges_submitted_while_the_model_is_busy_are_asked_together(
    store: SQLiteStore, fake_embedder: FakeEmbedder, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    chat = FakeChat()
    chat.extraction_gate = threading.Event()
    work = queue_of(chat)
    first = work.submit(answered(store, "Hello there", "Hi!"))
    assert first is not None and chat.extraction_started.wait(10)
    later = [work.submit(exchange) for exchange in queued(store)]
    chat.enqueue(facts_reply(), *(facts_reply(fact) for fact in FACTS))
    chat.extraction_gate.set()
    for future in later:
        assert future is not None
        future.result(timeout=10)
    assert len(chat.extraction_requests()) == 2  # the first alone, the next four together
    assert len(chat.batch_extraction_requests()) == 1
    assert sorted(sources_by_fact(store)) == sorted(FACTS)


def test_more_waiting_than_a_batch_holds_go_in_batches_of_four(
    store: SQLiteStore, fake_chat: FakeChat, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    said = [(f"I have a cat called Cat{n}", "Nice.") for n in range(MAX_BATCH + 3)]
    queued(store, said)
    assert queue_of(fake_chat).flush() == len(said)
    assert len(fake_chat.batch_extraction_requests()) == 2  # 4, then the last 3


class SignallingTurns(ModelTurns):
    """`ModelTurns` that says when a background call asked for the model."""

    def __init__(self) -> None:
        super().__init__(quiet_s=0.0)
        self.background_asked = threading.Event()

    @contextmanager
    def background(self) -> Iterator[None]:
        self.background_asked.set()
        with super().background():
            yield


class SharedChat(FakeChat):
    """The fake behind `ModelTurns`, as the real backends share one model: background calls
    wait while a person's call is in flight. `served` lists whose calls ran, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.turns = SignallingTurns()
        self.served: list[str] = []

    def complete(
        self, messages: Sequence[ChatMessage], *, background: bool = False, **options: Any
    ) -> str:
        with self.turns.background() if background else self.turns.person():
            self.served.append("background" if background else "person")
            return super().complete(messages, background=background, **options)


def test_a_person_s_turn_during_a_batch_is_served_first(
    store: SQLiteStore, queue_of: Callable[[FakeChat], MemoryWork]
) -> None:
    chat = SharedChat()
    queued(store)
    work = queue_of(chat)
    with chat.turns.person():  # a person's reply being written
        learning = threading.Thread(target=work.flush)
        learning.start()
        assert chat.turns.background_asked.wait(10)
        assert chat.complete([{"role": "user", "content": "Hi"}], max_tokens=32) == "Okay."
        assert chat.extraction_requests() == []  # the batch waits for the person
    learning.join(30)
    assert chat.served[0] == "person"
    assert len(chat.batch_extraction_requests()) == 1 and store.count_queued_exchanges() == 0


def test_split_by_exchange_drops_numbers_out_of_range_and_marks_what_a_cut_never_reached() -> None:
    items: list[dict[str, Any]] = [{"exchange": 1}, {"exchange": 0}, {"exchange": True}]
    assert split_by_exchange(items, 3, whole=True) == [[items[0]], [], []]
    assert split_by_exchange(items, 3, whole=False) == [[items[0]], None, None]
