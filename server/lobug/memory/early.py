"""Memory retrieved from the words heard so far, for the voice turn that follows (issue 30).

While a person speaks, each stretch of their words heard is looked up at once (`ahead`,
called as the model reads the prompt ahead: `Assistant.prime`). Once speech has ended, the
turn (`for_turn`) reuses that retrieval instead of embedding its words and searching again
on the critical path, when its words add nothing essential to those heard ahead:

- the same words (the person said no more after the last stretch heard): reused whole;
- the words heard ahead, at most one of them heard differently since, then at most
  `MAX_NEW_WORDS` more, no more than half of the whole: reused, with the facts that share
  the new words (a keyword search, no embedding: about a millisecond) merged in, one by one
  with those found ahead, at most `retrieval_top_k` in all;
- anything else is retrieved anew as any turn is: other words, new words that name a time
  ("... yesterday": its episodes and messages) or first ask about commitments, a look-up
  older than `MAX_AGE_S`, made for another agent or another viewer.

A look-up still running when the turn starts is waited for (it ends sooner than a new one);
a turn takes its device's look-up (a later turn never reuses it). Blocking: worker threads.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace

from lobug.memory.commitments import asks_about_commitments
from lobug.memory.context import MemoryContext
from lobug.memory.manager import MemoryManager
from lobug.memory.when import time_window
from lobug.store.household import Viewer
from lobug.store.models import ScoredFact

log = logging.getLogger(__name__)

MAX_NEW_WORDS = 4
MAX_AGE_S = 30.0
WAIT_S = 2.0  # the most a turn waits for a look-up of its words still running
KEPT_DEVICES = 256
WORD = re.compile(r"[\w']+")


@dataclass(frozen=True)
class Ahead:
    """One look-up made while the person spoke."""

    agent: str
    viewer: Viewer
    words: tuple[str, ...]
    at: float
    context: Future[MemoryContext]


def words_of(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(text.lower()))


def new_words(ahead: tuple[str, ...], final: tuple[str, ...]) -> tuple[str, ...] | None:
    """The words `final` adds to those heard `ahead`, or None when `final` does not go on
    from them (see the module: one word may differ; few new words)."""
    if not ahead or len(final) < len(ahead):
        return None
    differing = sum(a != b for a, b in zip(ahead, final, strict=False))
    added = final[len(ahead) :]
    if differing > 1 or len(added) > MAX_NEW_WORDS or 2 * len(added) > len(final):
        return None
    return added


class EarlyRecall:
    """Each device's latest look-up of the words heard so far, for its next turn."""

    def __init__(self, memory: MemoryManager, clock: Callable[[], float] = time.monotonic):
        self._memory, self._clock = memory, clock
        self._kept: OrderedDict[str, Ahead] = OrderedDict()
        self._lock = threading.Lock()

    def ahead(self, device: str, agent: str, words: str, viewer: Viewer) -> MemoryContext:
        """Retrieve for the words heard so far on `device`; kept for its turn."""
        found: Future[MemoryContext] = Future()
        with self._lock:
            self._kept[device] = Ahead(agent, viewer, words_of(words), self._clock(), found)
            self._kept.move_to_end(device)
            while len(self._kept) > KEPT_DEVICES:
                self._kept.popitem(last=False)
        try:
            context = self._memory.retrieve_context(agent, words, viewer)
        except BaseException as exc:  # retrieve_context does not raise; be safe for waiters
            found.set_exception(exc)
            raise
        found.set_result(context)
        return context

    def for_turn(self, device: str, agent: str, text: str, viewer: Viewer) -> MemoryContext:
        """The turn's memory for `text`: reused from the device's look-up ahead when the
        words allow it (see the module), else retrieved now."""
        with self._lock:
            kept = self._kept.pop(device, None)
        reused = self._reuse(kept, agent, text, viewer)
        return reused if reused is not None else self._memory.retrieve_context(agent, text, viewer)

    def _reuse(
        self, kept: Ahead | None, agent: str, text: str, viewer: Viewer
    ) -> MemoryContext | None:
        if kept is None or kept.agent != agent or kept.viewer != viewer:
            return None
        if self._clock() - kept.at > MAX_AGE_S:
            return None
        added = new_words(kept.words, words_of(text))
        if added is None or not self._cheap(added, text, " ".join(kept.words)):
            return None
        started = time.perf_counter()
        try:
            context = kept.context.result(timeout=WAIT_S)
        except Exception:
            return None
        waited = (time.perf_counter() - started) * 1000
        return self._with_new_words(context, agent, added, viewer, waited)

    def _cheap(self, added: tuple[str, ...], text: str, ahead: str) -> bool:
        """Whether the new words can be served by words alone: no time named in them, no
        first question about commitments."""
        if added and time_window(" ".join(added), self._memory.now()) is not None:
            return False
        return asks_about_commitments(ahead) or not asks_about_commitments(text)

    def _with_new_words(
        self,
        context: MemoryContext,
        agent: str,
        added: tuple[str, ...],
        viewer: Viewer,
        waited_ms: float,
    ) -> MemoryContext:
        timings = {"early_wait": waited_ms}
        facts = context.facts
        if added:
            started = time.perf_counter()
            facts = interleaved(facts, self._keyword_facts(agent, " ".join(added), viewer))
            facts = facts[: max(len(context.facts), self._memory.config.retrieval_top_k)]
            timings["early_keyword"] = (time.perf_counter() - started) * 1000
        return replace(context, facts=facts, timings_ms=timings)

    def _keyword_facts(self, agent: str, words: str, viewer: Viewer) -> tuple[ScoredFact, ...]:
        top_k = self._memory.config.retrieval_top_k
        if top_k == 0:
            return ()
        try:
            hits = self._memory.searcher.facts(agent, words, top_k, mode="keyword", viewer=viewer)
        except Exception:
            log.warning("the keyword search for the last words failed", exc_info=True)
            return ()
        return tuple(hit for hit in hits if not hit.fact.pinned)


def interleaved(
    first: tuple[ScoredFact, ...], second: tuple[ScoredFact, ...]
) -> tuple[ScoredFact, ...]:
    """One of each in turn, best first in each; a fact in both once."""
    merged: dict[int, ScoredFact] = {}
    for n in range(max(len(first), len(second))):
        for hits in (first, second):
            if n < len(hits):
                merged.setdefault(hits[n].fact.id, hits[n])
    return tuple(merged.values())
