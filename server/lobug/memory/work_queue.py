"""Durable memory work: what an answered exchange teaches is not lost to a crash.

The reply and its row in the store's `learning_queue` table are written in one transaction
(`Store.append_reply_for_memory_work`). After the response has gone out, the
request hands the exchange to `MemoryWork.submit`, which runs the memory work (facts, then the
cascades) on the queue's one thread and removes the row; `resume` runs what a crash left
behind, or what failed, from the maintenance thread, on that same thread. Fact extraction that
fails (model down, or output in which no list of facts can be read) is retried on later
passes (the first retry `RETRY_AFTER_S` after the failure, not at the next pass, up to six
minutes away), `MAX_ATTEMPTS` times in all, then *parked* with its last error: no pass takes it
again, `/health`, the dashboard and `lobug stats` count it, and `retry_parked` (`lobug
learning retry`) runs it again. Nothing is dropped.

When several exchanges wait, their facts are asked for in one model call
(`memory/batch_extraction.py`); each is still learned from, dequeued or counted as failed on
its own.

A purge (`memory/purges.py`) is durable work too: recorded in the store before its first
deletion and run by the request that asked for it; `resume` first finishes the purges a crash
(or a failure) left unfinished, before any exchange is learned from.

A message posted alone (memory API, `MemoryEngine`) waits in the queue as a lone row; unless an
answer makes it an exchange first, `resume` learns from it on its own once it is
`RESUME_AFTER_S` old (the quiet period), and `flush` at once.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from lobug.memory.batch_extraction import MAX_BATCH, FactBatches
from lobug.memory.manager import ExchangeReport, MemoryManager
from lobug.memory.purges import Purges
from lobug.store.models import Message, QueuedExchange, Vector
from lobug.store.protocol import WorkQueueStore

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
RESUME_BATCH = 50
# Parked exchanges handed back to the memory work by one retry, oldest first.
RETRY_BATCH = 1000
# A row is resumed only once it is this old, so an exchange stored a moment ago, whose
# response has not gone out yet (so it is not submitted yet), is never run twice.
RESUME_AFTER_S = 60.0
# A first failed extraction is tried again this long after, behind the work waiting; later
# ones wait for the maintenance passes, so a model down for minutes is not parked at once.
RETRY_AFTER_S = 30.0
CLOSE_WAIT_S = 30.0
# The last error of a failed exchange, as kept with its row.
MAX_ERROR_CHARS = 300
# How long the hand-over after a streamed response waits for the stream to store its reply
# (a client that hung up mid-step: the step in progress finishes first).
STREAM_END_WAIT_S = 60.0


@dataclass(frozen=True)
class Exchange:
    """A user's message and the reply stored with its row in the durable queue."""

    user: Message
    assistant: Message


def sides(exchange: Exchange) -> tuple[Message, Message]:
    """The user's and the assistant's side of an exchange as extraction reads them; a lone
    message (the same one on both sides in the queue) faces an empty other side."""
    if exchange.user.id != exchange.assistant.id:
        return exchange.user, exchange.assistant
    message = exchange.user
    silent = dataclasses.replace(message, content="")
    return (message, silent) if message.role == "user" else (silent, message)


class StreamedExchange:
    """The exchange a streamed reply stores when its stream ends, however it ends; `wait`
    gives it to the hand-over that runs after the response (None: nothing to learn from)."""

    def __init__(self) -> None:
        self._settled = threading.Event()
        self._exchange: Exchange | None = None
        self._lock = threading.Lock()

    def settle(self, exchange: Exchange | None) -> None:
        """Record what the stream stored; the first call wins."""
        with self._lock:
            if not self._settled.is_set():
                self._exchange = exchange
                self._settled.set()

    def wait(self, timeout_s: float = STREAM_END_WAIT_S) -> Exchange | None:
        if not self._settled.wait(timeout_s):
            log.warning("a stream did not end within %.0f s; its memory work waits", timeout_s)
            return None
        return self._exchange


class MemoryWork:
    """The queue of memory work after replies, run one exchange at a time on one thread."""

    def __init__(
        self,
        store: WorkQueueStore,
        memory: MemoryManager,
        *,
        clock: Callable[[], float] = time.time,
        retry_after_s: float = RETRY_AFTER_S,
        purges: Purges | None = None,
    ) -> None:
        self.store = store
        self.memory = memory
        self.purges = purges
        self._clock = clock
        self.retry_after_s = retry_after_s
        self._retries: list[threading.Timer] = []
        # Rows queued before this process started cannot belong to one of its submissions.
        self._started = clock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-work")
        self._in_flight: dict[int, Future[ExchangeReport | None]] = {}
        self._waiting: dict[int, Exchange] = {}  # submitted, not started, in queue order
        self._ahead: list[Exchange] = []  # what `resume` submits next
        self._batches = FactBatches(
            memory.chat, memory.config.max_facts_per_exchange, memory.language
        )
        self._closed = False
        self._lock = threading.Lock()

    @property
    def pending(self) -> int:
        """Exchanges submitted in this process whose memory work has not finished yet."""
        with self._lock:
            return len(self._in_flight)

    def submit(self, exchange: Exchange) -> Future[ExchangeReport | None] | None:
        """Queue the exchange's memory work; None when it is queued already or the queue is
        closed (its row then waits in the store for the next process's `resume`)."""
        key = exchange.assistant.id
        with self._lock:
            if self._closed or key in self._in_flight:
                return None
            future = self._executor.submit(self._run, exchange)
            self._in_flight[key] = future
            self._waiting[key] = exchange
        future.add_done_callback(lambda _: self._forget(key))
        return future

    def resume(
        self, should_stop: Callable[[], bool] = lambda: False, queued_before: float | None = None
    ) -> int:
        """Run the queued exchanges nobody submitted in this process: those left by an earlier
        process, those that failed and lone messages past their quiet period (all queued
        before `queued_before`, by default `RESUME_AFTER_S` ago), one at a time (the next
        few shown to the memory work, which may ask for their facts together); return how
        many were run. The unfinished purges begun as long ago go first."""
        done = 0
        after = 0
        if queued_before is None:
            queued_before = max(self._started, self._clock() - RESUME_AFTER_S)
        if self.purges is not None and (finished := self.purges.resume(should_stop, queued_before)):
            log.info("memory: finished %d purges left unfinished", finished)
        try:
            while batch := self.store.queued_exchanges(RESUME_BATCH, queued_before, after):
                for position, queued in enumerate(batch):
                    if should_stop() or self._closed:
                        return done
                    after = queued.assistant.id
                    ran = self._resume_first(batch[position : position + MAX_BATCH])
                    if ran is None:
                        return done
                    done += ran
        finally:
            self._show_ahead([])
        return done

    def _resume_first(self, window: Sequence[QueuedExchange]) -> int | None:
        """Run the first exchange of `window`, the others shown as the next to come: 1 when
        it ran, 0 when it was at work already, None when the queue closed under us."""
        self._show_ahead(window[1:])
        future = self.submit(Exchange(window[0].user, window[0].assistant))
        if future is None:
            return 0
        try:
            future.result()
        except CancelledError:
            return None
        return 1

    def _show_ahead(self, queued: Sequence[QueuedExchange]) -> None:
        with self._lock:
            self._ahead = [Exchange(q.user, q.assistant) for q in queued]

    def retry_parked(self, ids: Sequence[int] | None = None) -> list[Future[ExchangeReport | None]]:
        """Hand the parked exchanges (those whose reply has an id of `ids`, when given) to
        the memory work again, oldest first, at most `RETRY_BATCH`: each one learned from
        leaves the queue, each failing again stays parked with its new error. One future
        per exchange handed over (none for one already at work)."""
        handed = []
        for parked in self.store.parked_exchanges(RETRY_BATCH, ids):
            future = self.submit(Exchange(parked.user, parked.assistant))
            if future is not None:
                handed.append(future)
        return handed

    def flush(self) -> int:
        """Wait for the work submitted so far, then run everything still queued, lone
        messages included, now; return how many exchanges this call ran."""
        with self._lock:
            running = list(self._in_flight.values())
        wait(running)
        return self.resume(queued_before=math.inf)

    def close(self, timeout_s: float = CLOSE_WAIT_S) -> bool:
        """Take no more work, drop what has not started, stop the exchange in progress at its
        next step and wait (bounded) for it; return whether none is still at work.
        Unfinished exchanges keep their rows, untouched, for the next process."""
        with self._lock:
            self._closed = True
            running = list(self._in_flight.values())
            for timer in self._retries:
                timer.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)
        # Only the exchange in progress: `wait` never counts a future cancelled before it
        # started as done (it would wait out the whole timeout for the dropped ones).
        started = [future for future in running if not future.cancelled()]
        _, unfinished = wait(started, timeout=timeout_s)
        if unfinished:
            log.warning("memory work still running after %.0f s; resumed next start", timeout_s)
        return not unfinished

    def _stopping(self) -> bool:
        return self._closed

    def _forget(self, key: int) -> None:
        with self._lock:
            self._in_flight.pop(key, None)
            self._waiting.pop(key, None)
        self._batches.discard(key)

    def _run(self, exchange: Exchange) -> ExchangeReport | None:
        try:
            self._ask_with_those_waiting(exchange)
            return self._process(exchange)
        except Exception:  # nobody waits on this thread: say it, keep the row for a retry
            log.exception("memory work for message %d failed", exchange.assistant.id)
            return None

    def _ask_with_those_waiting(self, exchange: Exchange) -> None:
        """Ask for the facts of `exchange` and of those waiting behind it in one call, when
        enough wait, submitted or about to be resumed (`FactBatches.prepare`)."""
        key = exchange.assistant.id
        with self._lock:
            self._waiting.pop(key, None)
            behind = {**self._waiting, **{e.assistant.id: e for e in self._ahead}}
        behind.pop(key, None)
        self._batches.prepare(sides(exchange), [sides(e) for e in behind.values()], self._stopping)

    def _process(self, exchange: Exchange) -> ExchangeReport:
        user, assistant = sides(exchange)
        found = self._batches.take(assistant.id)
        report = self.memory.process_exchange(
            assistant.agent, user, assistant, self._stopping, fact_items=found
        )
        if report.unlearned:
            log.info("memory: message %d left queued for the next start", assistant.id)
            return report
        log.info(
            "memory: +%d facts, %d superseded, summarized=%s, distilled=%s, errors=%s",
            len(report.facts_added),
            len(report.facts_superseded),
            report.summarized,
            report.distilled,
            sorted(report.errors),
        )
        error = report.errors.get("extract_facts")
        if error is None:
            self.store.dequeue_exchange(assistant.id)
            return report
        attempts = self.store.count_failed_attempt(assistant.id, error[:MAX_ERROR_CHARS])
        if attempts == 1:
            self._retry_soon(exchange)
        if attempts >= MAX_ATTEMPTS:
            log.warning(
                "memory: parked message %d after %d failed attempts (%s); "
                "`lobug learning retry` runs it again",
                assistant.id,
                attempts,
                error[:MAX_ERROR_CHARS],
            )
            self.store.park_exchange(assistant.id)
        return report

    def _retry_soon(self, exchange: Exchange) -> None:
        """Submit the exchange again `retry_after_s` from now, unless the queue closes first."""
        timer = threading.Timer(self.retry_after_s, self.submit, args=(exchange,))
        timer.daemon = True
        with self._lock:
            if self._closed:
                return
            self._retries = [t for t in self._retries if t.is_alive()]
            self._retries.append(timer)
            timer.start()


def reembed_messages(
    store: WorkQueueStore,
    embed_batch: Callable[[list[str]], list[Vector]],
    batch: int = 32,
    should_stop: Callable[[], bool] = lambda: False,
) -> int:
    """Embed the messages of the store's embedding backlog; return how many."""
    done = 0
    while not should_stop() and (messages := store.messages_to_embed(batch)):
        vectors = embed_batch([m.content for m in messages])
        store.add_message_vectors(list(zip(messages, vectors, strict=True)))
        done += len(messages)
        if len(messages) < batch:
            break
    return done
