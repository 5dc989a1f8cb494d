"""Durable memory work: what an answered exchange teaches is not lost to a crash.

The reply and its row in the store's `learning_queue` are written in one transaction
(`Store.append_reply_for_memory_work`). `job` runs the memory work (facts, then
the cascades) right after the answer and removes the row; `resume` runs what a crash left
behind, or what failed, from the maintenance thread. Fact extraction that fails (model down,
garbage output) is retried on later passes, up to `MAX_ATTEMPTS`, then dropped with a log line.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from lobug.memory.manager import ExchangeReport, MemoryManager
from lobug.store.models import Message, Vector
from lobug.store.protocol import Store

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
RESUME_BATCH = 50
# A row is resumed only once it is this old, so a job created a moment ago by a request
# handler (its row committed, the job not yet registered) is never run twice.
RESUME_AFTER_S = 60.0


class LearningQueue:
    def __init__(
        self, store: Store, memory: MemoryManager, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.memory = memory
        self._clock = clock
        # Rows queued before this process started cannot belong to one of its jobs.
        self._started = clock()
        self._in_flight: set[int] = set()
        self._lock = threading.Lock()

    @property
    def pending(self) -> int:
        """Jobs handed out in this process that have not finished yet."""
        with self._lock:
            return len(self._in_flight)

    def job(self, user: Message, assistant: Message) -> Callable[[], ExchangeReport]:
        """The memory work for a queued exchange, counted in `pending` until it finishes."""
        with self._lock:
            self._in_flight.add(assistant.id)

        def learn() -> ExchangeReport:
            try:
                return self._process(user, assistant)
            finally:
                with self._lock:
                    self._in_flight.discard(assistant.id)

        return learn

    def resume(self, should_stop: Callable[[], bool] = lambda: False) -> int:
        """Run the queued exchanges no job of this process is working on: those left by an
        earlier process, and those that failed; return how many were run."""
        done = 0
        after = 0
        queued_before = max(self._started, self._clock() - RESUME_AFTER_S)
        while batch := self.store.queued_exchanges(RESUME_BATCH, queued_before, after):
            for exchange in batch:
                if should_stop():
                    return done
                after = exchange.assistant.id
                with self._lock:
                    if exchange.assistant.id in self._in_flight:
                        continue
                self.job(exchange.user, exchange.assistant)()
                done += 1
        return done

    def _process(self, user: Message, assistant: Message) -> ExchangeReport:
        report = self.memory.process_exchange(assistant.agent, user, assistant)
        log.info(
            "memory: +%d facts, %d superseded, summarized=%s, distilled=%s, errors=%s",
            len(report.facts_added),
            len(report.facts_superseded),
            report.summarized,
            report.distilled,
            sorted(report.errors),
        )
        if "extract_facts" not in report.errors:
            self.store.dequeue_exchange(assistant.id)
            return report
        attempts = self.store.count_failed_attempt(assistant.id)
        if attempts >= MAX_ATTEMPTS:
            log.warning(
                "memory: giving up on message %d after %d failed attempts", assistant.id, attempts
            )
            self.store.dequeue_exchange(assistant.id)
        return report


def reembed_messages(
    store: Store,
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
