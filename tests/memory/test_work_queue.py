from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from lobug.config import MemoryConfig
from lobug.memory.manager import ExchangeReport, MemoryManager
from lobug.memory.work_queue import MAX_ATTEMPTS, Exchange, MemoryWork, reembed_messages
from lobug.services.maintenance import STOP_WAIT_S, Maintenance
from lobug.store.models import FactQuery
from lobug.store.sqlite.engine import SQLiteStore
from tests.fakes import FakeChat, FakeEmbedder, unreachable
from tests.memory.test_manager import facts_reply
from tests.polling import eventually


def answered(store: SQLiteStore, user: str, reply: str) -> Exchange:
    """An exchange as a turn stores it: the reply and its queue row in one transaction."""
    asked = store.append_message("lobug", "default", "user", user)
    return Exchange(asked, store.append_reply_for_memory_work("lobug", "default", reply, asked))


@pytest.fixture
def new_work(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> Iterator[Callable[[], MemoryWork]]:
    """Opens queues as a starting server would (rows stored before count as left behind)."""
    opened: list[MemoryWork] = []

    def new() -> MemoryWork:
        opened.append(
            MemoryWork(store, MemoryManager(store, fake_chat, fake_embedder, MemoryConfig()))
        )
        return opened[-1]

    yield new
    for queue in opened:
        queue.close()


def held_extraction() -> tuple[FakeChat, threading.Event]:
    """A chat model whose fact extraction waits until the returned event is set."""
    chat = FakeChat()
    chat.extraction_gate = threading.Event()
    return chat, chat.extraction_gate


Learned = Future[ExchangeReport | None]


def one_running_one_waiting(
    store: SQLiteStore, embedder: FakeEmbedder
) -> tuple[
    MemoryWork, threading.Event, Future[ExchangeReport | None], Future[ExchangeReport | None]
]:
    """A queue whose first exchange is being learned (until the event is set) and whose
    second waits for it."""
    chat, gate = held_extraction()
    work = MemoryWork(store, MemoryManager(store, chat, embedder, MemoryConfig()))
    running = work.submit(answered(store, "I like tea", "Tea it is."))
    waiting = work.submit(answered(store, "I like jam", "Jam it is."))
    assert running is not None and waiting is not None and chat.extraction_started.wait(10)
    return work, gate, running, waiting


def test_the_reply_and_its_memory_work_are_queued_together(
    store: SQLiteStore, fake_chat: FakeChat, new_work: Callable[[], MemoryWork]
) -> None:
    exchange = answered(store, "My name is Alex", "Nice to meet you, Alex.")
    assert store.count_queued_exchanges() == 1
    fake_chat.enqueue(facts_reply("The user's name is Alex"))
    work = new_work()
    future = work.submit(exchange)
    assert future is not None
    future.result(timeout=10)
    assert work.pending == 0
    assert store.count_queued_exchanges() == 0
    assert [f.content for f in store.facts("lobug")] == ["The user's name is Alex"]


def test_jobs_run_one_at_a_time_on_the_queue_s_own_thread(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    chat, gate = held_extraction()
    work = MemoryWork(store, MemoryManager(store, chat, fake_embedder, MemoryConfig()))
    first = work.submit(answered(store, "I like tea", "Tea it is."))
    second = work.submit(answered(store, "I like jam", "Jam it is."))
    assert first is not None and second is not None
    assert chat.extraction_started.wait(10)
    assert work.pending == 2 and len(chat.extraction_requests()) == 0
    names = {t.name for t in threading.enumerate()}
    assert any(name.startswith("memory-work") for name in names)
    gate.set()
    second.result(timeout=10)
    assert work.pending == 0 and len(chat.extraction_requests()) == 2
    work.close()


def test_an_exchange_already_queued_is_not_queued_twice(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    chat, gate = held_extraction()
    work = MemoryWork(store, MemoryManager(store, chat, fake_embedder, MemoryConfig()))
    exchange = answered(store, "I like tea", "Tea it is.")
    first = work.submit(exchange)
    assert first is not None
    assert work.submit(exchange) is None
    gate.set()
    first.result(timeout=10)
    work.close()
    assert len(chat.extraction_requests()) == 1


def test_close_waits_for_the_job_in_progress_and_leaves_the_rest_queued(
    store: SQLiteStore, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    work, gate, running, waiting = one_running_one_waiting(store, fake_embedder)
    with caplog.at_level(logging.WARNING, logger="lobug.memory.work_queue"):
        work.close(timeout_s=0.05)  # the running job outlives the bounded wait
    assert "still running" in caplog.text
    assert waiting.cancelled() and work.pending == 1
    gate.set()
    running.result(timeout=10)
    assert work.pending == 0
    # The dropped one and the one stopped in its model call wait for the next process.
    assert [q.attempts for q in store.queued_exchanges(10, float("inf"))] == [0, 0]
    assert work.submit(answered(store, "I like figs", "Figs!")) is None  # closed


def test_close_returns_when_the_job_in_progress_ends_however_many_were_dropped(
    store: SQLiteStore, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    work, gate, running, waiting = one_running_one_waiting(store, fake_embedder)
    threading.Timer(0.2, gate.set).start()
    with caplog.at_level(logging.WARNING, logger="lobug.memory.work_queue"):
        work.close(timeout_s=20)  # a server stopping: it waited the whole 30 s before
    assert running.done() and waiting.cancelled()
    assert "still running" not in caplog.text


def test_work_interrupted_by_a_crash_is_resumed_by_the_next_process(
    tmp_path: Path, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    path = tmp_path / "memory.db"
    first = SQLiteStore(path)
    first.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    answered(first, "My name is Alex", "Nice to meet you, Alex.")
    first.close()  # killed before its job ran

    reopened = SQLiteStore(path)
    reopened.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    fake_chat.enqueue(facts_reply("The user's name is Alex"))
    work = MemoryWork(reopened, MemoryManager(reopened, fake_chat, fake_embedder, MemoryConfig()))
    assert work.resume() == 1
    work.close()
    assert [f.content for f in reopened.facts("lobug")] == ["The user's name is Alex"]
    assert reopened.count_queued_exchanges() == 0
    reopened.close()


def test_failed_extraction_is_retried_then_parked_with_its_error_never_dropped(
    store: SQLiteStore,
    fake_chat: FakeChat,
    new_work: Callable[[], MemoryWork],
    caplog: pytest.LogCaptureFixture,
) -> None:
    answered(store, "My name is Alex", "Nice to meet you, Alex.")
    work = new_work()
    fake_chat.fail_with = unreachable()
    for attempt in range(1, MAX_ATTEMPTS):
        assert work.resume() == 1
        assert store.queued_exchanges(10, float("inf"))[0].attempts == attempt
    with caplog.at_level(logging.WARNING, logger="lobug.memory.work_queue"):
        assert work.resume() == 1
    assert "parked message" in caplog.text and "lobug learning retry" in caplog.text
    assert (store.count_queued_exchanges(), store.count_parked_exchanges()) == (0, 1)
    [parked] = store.parked_exchanges(10)
    assert (parked.user.content, parked.attempts) == ("My name is Alex", MAX_ATTEMPTS)
    assert parked.error == "fake backend is down"
    assert work.resume() == 0  # no pass takes it again
    assert len(fake_chat.extraction_requests()) == MAX_ATTEMPTS


def test_unreadable_extraction_output_is_parked_then_learned_from_by_a_retry(
    store: SQLiteStore, fake_chat: FakeChat, new_work: Callable[[], MemoryWork]
) -> None:
    """Output in which no list of facts can be read was taken for "no facts": the exchange
    left the queue and its fact was lost."""
    answered(store, "My name is Alex", "Nice to meet you, Alex.")
    work = new_work()
    fake_chat.enqueue(*["Sure! The user is called Alex."] * MAX_ATTEMPTS)
    for _ in range(MAX_ATTEMPTS):
        assert work.resume() == 1
    [parked] = store.parked_exchanges(10)
    assert parked.error.startswith("unreadable fact-extraction output")
    assert "Alex" not in parked.error  # no word of the model's output is kept
    assert store.facts("lobug") == []

    fake_chat.enqueue(facts_reply("The user's name is Alex"))
    handed = work.retry_parked()
    assert len(handed) == 1
    handed[0].result(timeout=10)
    assert [f.content for f in store.facts("lobug")] == ["The user's name is Alex"]
    assert (store.count_queued_exchanges(), store.count_parked_exchanges()) == (0, 0)


def test_a_retry_failing_again_stays_parked_with_the_new_error(
    store: SQLiteStore, fake_chat: FakeChat, new_work: Callable[[], MemoryWork]
) -> None:
    answered(store, "I like tea", "Tea it is.")
    kept = answered(store, "I like jam", "Jam it is.")
    work = new_work()
    fake_chat.fail_with = unreachable()
    for _ in range(MAX_ATTEMPTS):
        work.resume()
    assert store.count_parked_exchanges() == 2
    fake_chat.fail_with = None
    fake_chat.enqueue("not json at all")
    [retried] = work.retry_parked([kept.assistant.id])  # only the one asked for
    retried.result(timeout=10)
    parked = {p.assistant.id: p for p in store.parked_exchanges(10)}
    assert len(parked) == 2 and parked[kept.assistant.id].attempts == MAX_ATTEMPTS + 1
    assert parked[kept.assistant.id].error.startswith("unreadable fact-extraction output")
    assert work.retry_parked([]) == []


def test_a_retry_after_the_model_is_back_learns_the_fact(
    store: SQLiteStore, fake_chat: FakeChat, new_work: Callable[[], MemoryWork]
) -> None:
    answered(store, "My name is Alex", "Nice to meet you, Alex.")
    work = new_work()
    fake_chat.fail_with = unreachable()
    work.resume()
    fake_chat.fail_with = None
    fake_chat.enqueue(facts_reply("The user's name is Alex"))
    assert work.resume() == 1
    assert [f.content for f in store.facts("lobug")] == ["The user's name is Alex"]


def test_resume_leaves_alone_the_exchanges_already_submitted(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    chat, gate = held_extraction()
    work = MemoryWork(store, MemoryManager(store, chat, fake_embedder, MemoryConfig()))
    submitted = work.submit(answered(store, "My name is Alex", "Nice to meet you, Alex."))
    assert submitted is not None and chat.extraction_started.wait(10)
    assert work.resume() == 0
    gate.set()
    submitted.result(timeout=10)
    work.close()
    assert store.count_queued_exchanges() == 0
    assert len(chat.extraction_requests()) == 1


def test_resume_waits_before_taking_this_process_s_recent_rows(
    tmp_path: Path, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    now = [1000.0]
    store = SQLiteStore(tmp_path / "memory.db", clock=lambda: now[0])
    store.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    work = MemoryWork(
        store, MemoryManager(store, fake_chat, fake_embedder, MemoryConfig()), clock=lambda: now[0]
    )
    now[0] += 1
    answered(store, "My name is Alex", "Nice to meet you, Alex.")  # response not sent yet
    assert work.resume() == 0
    now[0] += 120  # long past any request handler: left behind by a failed job
    assert work.resume() == 1
    work.close()
    store.close()


def test_messages_stored_while_the_embedder_failed_are_embedded_later(
    store: SQLiteStore, fake_embedder: FakeEmbedder
) -> None:
    kept = [
        store.append_embedded_message("lobug", "api", "user", f"note {i} about copper", None)
        for i in range(5)
    ]
    store.append_message("lobug", "default", "user", "a device turn, never embedded")
    query = fake_embedder.embed("note about copper")
    assert store.search_messages("lobug", query, 10) == []
    assert reembed_messages(store, fake_embedder.embed_batch, batch=2) == 5
    found = {hit.message.id for hit in store.search_messages("lobug", query, 10)}
    assert found == {m.id for m in kept}
    assert reembed_messages(store, fake_embedder.embed_batch) == 0


def test_maintenance_runs_every_task_and_survives_a_failing_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran = threading.Event()

    def broken(should_stop: Callable[[], bool]) -> int:
        raise RuntimeError("embedder down")

    def working(should_stop: Callable[[], bool]) -> int:
        ran.set()
        return 2

    maintenance = Maintenance([("broken", broken), ("working", working)], interval_s=3600)
    with caplog.at_level(logging.INFO, logger="lobug.services.maintenance"):
        assert maintenance.run_once() == {"working": 2}
        ran.clear()
        maintenance.start()
        assert ran.wait(10)
        maintenance.stop()
    assert "broken failed: embedder down" in caplog.text
    assert "working: 2" in caplog.text


def test_a_stop_waits_for_a_unit_of_work_at_most_its_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 29, finding 9: a unit of work longer than the stop's wait (a batch being
    embedded) is left to end with the process; the stop returns in time."""
    started, release = threading.Event(), threading.Event()

    def slow(should_stop: Callable[[], bool]) -> int:
        started.set()
        release.wait(30)
        return 1

    maintenance = Maintenance([("slow", slow)], interval_s=3600)
    maintenance.start()
    assert started.wait(10)
    began = time.monotonic()
    with caplog.at_level(logging.INFO, logger="lobug.services.maintenance"):
        maintenance.stop(STOP_WAIT_S)
    assert time.monotonic() - began < STOP_WAIT_S + 1
    assert "still in a unit of work" in caplog.text
    release.set()


def test_resume_stops_between_exchanges_when_asked(
    store: SQLiteStore, new_work: Callable[[], MemoryWork]
) -> None:
    for i in range(3):
        answered(store, f"fact number {i}", "Noted.")
    calls = iter([False, True])
    assert new_work().resume(should_stop=lambda: next(calls, True)) == 1
    assert store.count_queued_exchanges() == 2


def test_forgetting_while_the_exchange_is_learned_leaves_nothing_of_it(
    new_work: Callable[[], MemoryWork], store: SQLiteStore, fake_chat: FakeChat
) -> None:
    secret = "Quaxilotl"
    fake_chat.extraction_gate = threading.Event()
    fake_chat.enqueue(facts_reply(f"The user's cat is called {secret}"))
    exchange = answered(store, f"My cat is called {secret}", "What a name!")
    future = new_work().submit(exchange)
    assert future is not None and fake_chat.extraction_started.wait(5)
    store.forget_messages(
        "lobug", [exchange.user.id, exchange.assistant.id], actor="manual"
    )  # while the model is still extracting
    fake_chat.extraction_gate.set()
    report = future.result(timeout=10)
    assert report is not None and report.facts_added == []
    assert store.list_facts("lobug", FactQuery(include_history=True))[1] == 0
    database = Path(store.path)
    stored = b"".join(p.read_bytes() for p in database.parent.glob(database.name + "*"))
    assert secret.encode() not in stored


def test_a_restart_resumes_an_exchange_whose_messages_were_embedded_already(
    tmp_path: Path, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    """Issue 41: an exchange embedded before its extraction failed (or before the process
    stopped) was embedded again by every later attempt, and sqlite-vec's vec0 table takes no
    `INSERT OR REPLACE`: each start-up printed `UNIQUE constraint failed on message_vectors
    primary key`."""
    path = tmp_path / "memory.db"
    first = SQLiteStore(path)
    first.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    exchange = answered(first, "My name is Alex", "Nice to meet you, Alex.")
    fake_chat.enqueue("not json at all")  # embedded, then the extraction fails
    work = MemoryWork(first, MemoryManager(first, fake_chat, fake_embedder, MemoryConfig()))
    assert work.resume(queued_before=float("inf")) == 1
    work.close()
    first.close()

    reopened = SQLiteStore(path)
    reopened.bind_embedding(fake_embedder.model, fake_embedder.dimension)
    fake_chat.enqueue(facts_reply("The user's name is Alex"))
    memory = MemoryManager(reopened, fake_chat, fake_embedder, MemoryConfig())
    report = memory.process_exchange("lobug", exchange.user, exchange.assistant)
    assert report.errors == {}
    assert [f.content for f in reopened.facts("lobug")] == ["The user's name is Alex"]
    query = fake_embedder.embed("Nice to meet you, Alex.")
    assert exchange.assistant.id in {
        h.message.id for h in reopened.search_messages("lobug", query, 5)
    }
    reopened.close()


def test_a_failed_extraction_is_tried_again_soon_not_at_the_next_pass(
    store: SQLiteStore, fake_chat: FakeChat, fake_embedder: FakeEmbedder
) -> None:
    """Issue 41: a failed extraction waited for the maintenance pass (every 300 s, rows 60 s
    old): 'My dog's name is Biscuit' was learned 14 minutes late."""
    fake_chat.enqueue("not json at all", facts_reply("The user's dog's name is Biscuit"))
    memory = MemoryManager(store, fake_chat, fake_embedder, MemoryConfig())
    work = MemoryWork(store, memory, retry_after_s=0.01)
    first = work.submit(answered(store, "My dog's name is Biscuit", "What a name!"))
    assert first is not None
    first.result(timeout=10)
    assert eventually(lambda: store.count_queued_exchanges() == 0)  # no pass ran
    work.close()
    assert [f.content for f in store.facts("lobug")] == ["The user's dog's name is Biscuit"]
