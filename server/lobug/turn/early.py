"""Memory retrieved from the words heard so far, for the voice turn that follows (issue 30).

While a person speaks, each stretch of their words heard is looked up at once (`looking_up`,
as the model reads the prompt ahead: `Assistant.prime`). Once speech has ended, the turn
(`for_turn`) reuses that retrieval instead of embedding its words and searching again on the
critical path, when its words add nothing essential to those heard ahead:

- the same words (the person said no more after the last stretch heard): reused whole;
- the words heard ahead, at most one of them heard differently since, then at most
  `MAX_NEW_WORDS` more, no more than half of the whole: reused, the facts found ahead
  fused anew with those that name the whole's words, as a search fuses them (a keyword
  search, no embedding, no vector search: about a millisecond; the vector of the words
  ahead stands for the whole's); a time the words name that those heard ahead did not
  ("... yesterday") has its episodes and messages read by time (no search), as a turn's
  own retrieval reads them;
- anything else is retrieved anew as any turn is: other words, new words that first ask
  about commitments, a look-up older than `MAX_AGE_S`, made for another agent or another
  viewer.

The same rule decides whether a later look-up ahead of words that may end the turn is made
at all: words that extend those of a look-up by so little (the last stretch, heard after a
guess at it while it was spoken) are served by it, so the look-up the turn reuses was made
from the partial words, not started when the last words arrive (as the turn itself starts).
A guess at words still being said is always looked up anew (off the turn's path). A look-up
is registered before it starts, and one still running when the turn starts is waited for (it
ends sooner than a new one would); a turn takes its device's look-up (a later turn never
reuses it). Blocking: worker threads.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial

from lobug.kept import DeviceKeep, Slot
from lobug.language.text import words_of as text_words
from lobug.memory import episodes
from lobug.memory.assembly import Recall
from lobug.memory.commitments import COMMITMENT, asks_about_commitments
from lobug.memory.context import MemoryContext
from lobug.memory.manager import MemoryManager
from lobug.memory.when import time_window
from lobug.store.household import Viewer
from lobug.store.models import FactHit, ScoredFact

log = logging.getLogger(__name__)

# The words a guess cannot have heard: guesses come each second of speech (`listening`) and
# take about 0.3 s, so the last words of a turn may add up to ~5 to the last guess (3.5 words
# a second). LoCoMo's questions, their turns stored as facts, the last k words new, recall@5
# of the evidence: fused anew (`_facts_going_on`) 0.605 at k = 6 and 0.564 at k = 4, where
# retrieval anew found 0.668 and 0.625; the keyword merge this replaced, 0.533 and 0.528.
MAX_NEW_WORDS = 6
MAX_AGE_S = 30.0
WAIT_S = 2.0  # the most a turn waits for a look-up of its words still running


@dataclass(frozen=True)
class Found:
    """What a look-up ahead found, and for whom."""

    agent: str
    viewer: Viewer
    context: MemoryContext


@dataclass(frozen=True)
class Ahead:
    """One look-up made while the person spoke (`found` None: it found nothing usable)."""

    words: tuple[str, ...]
    at: float
    found: Future[Found | None]


def words_of(text: str) -> tuple[str, ...]:
    """The words of `text`, lower case (`text.words_of`, the one word splitter)."""
    return tuple(text_words(text))


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
    """Each device's latest look-up of the words heard so far, for its next turn: kept in
    the device's keep (`lobug.kept`), dropped with the device."""

    def __init__(
        self,
        memory: MemoryManager,
        clock: Callable[[], float] = time.monotonic,
        keep: DeviceKeep | None = None,
    ):
        self._memory, self._clock = memory, clock
        self._kept: Slot[Ahead] = (keep or DeviceKeep()).slot("early recall")

    @contextmanager
    def looking_up(self, device: str, words: str, *, may_end: bool = True) -> Iterator[Recall]:
        """Register a look-up of the words heard so far on `device` at once (a turn that
        starts meanwhile waits for it), then yield the recall that makes it (agent, words,
        viewer -> context); kept for the device's turn. Left without a result (the block
        raised first), the turn finds nothing to reuse. Words that may end the turn (the
        person paused after them) are served by the look-up kept when they extend its words
        by little (see the module); a guess at words still being said (not `may_end`) is
        looked up anew, so that the words the turn ends with are few beyond those of the
        last look-up."""
        kept = self._kept.get(device)
        if kept is not None and may_end and self._extends(kept, words):
            # Words that a look-up already made serves (the last stretch heard after a guess
            # at it): that one is kept for the turn, and serves this prompt as it will serve
            # the turn's.
            yield partial(self._served, kept)
            return
        found: Future[Found | None] = Future()
        if words_of(words):
            self._kept.put(device, Ahead(words_of(words), self._clock(), found))

        def recall(agent: str, query: str, viewer: Viewer) -> MemoryContext:
            known = found.result() if found.done() else None
            asked = (agent, viewer, words_of(query))
            if known is not None and (known.agent, known.viewer, words_of(words)) == asked:
                return known.context  # asked again for the same words (the prompt read)
            context = self._memory.retrieve_context(agent, query, viewer)
            if not found.done() and words_of(query) == words_of(words):
                found.set_result(Found(agent, viewer, context))
            return context

        try:
            yield recall
        finally:
            if not found.done():
                found.set_result(None)

    def for_turn(self, device: str, agent: str, text: str, viewer: Viewer) -> MemoryContext:
        """The turn's memory for `text`: reused from the device's look-up ahead when the
        words allow it (see the module), else retrieved now."""
        kept = self._kept.pop(device)
        if kept is None:
            return self._memory.retrieve_context(agent, text, viewer)
        return self._served(kept, agent, text, viewer)

    def _served(self, kept: Ahead, agent: str, text: str, viewer: Viewer) -> MemoryContext:
        reused = self._reuse(kept, agent, text, viewer)
        return reused if reused is not None else self._memory.retrieve_context(agent, text, viewer)

    def _extends(self, kept: Ahead, text: str) -> bool:
        """Whether `kept` may serve `text` (see the module), once it has found something."""
        if self._clock() - kept.at > MAX_AGE_S:
            return False
        added = new_words(kept.words, words_of(text))
        return added is not None and self._cheap(text, " ".join(kept.words))

    def _reuse(
        self, kept: Ahead | None, agent: str, text: str, viewer: Viewer
    ) -> MemoryContext | None:
        if kept is None or not self._extends(kept, text):
            return None
        started = time.perf_counter()
        try:
            found = kept.found.result(timeout=WAIT_S)
        except Exception:  # still running after WAIT_S: retrieved anew
            return None
        if found is None or found.agent != agent or found.viewer != viewer:
            return None
        waited = (time.perf_counter() - started) * 1000
        said = (text, " ".join(kept.words), new_words(kept.words, words_of(text)) or ())
        return self._with_new_words(found.context, agent, said, viewer, waited)

    @staticmethod
    def _cheap(text: str, ahead: str) -> bool:
        """Whether the new words can be served cheaply: not a first question about
        commitments (a time they name is read by time, `_window`)."""
        return asks_about_commitments(ahead) or not asks_about_commitments(text)

    def _with_new_words(
        self,
        context: MemoryContext,
        agent: str,
        said: tuple[str, str, tuple[str, ...]],
        viewer: Viewer,
        waited_ms: float,
    ) -> MemoryContext:
        text, ahead, added = said
        timings = {"early_wait": waited_ms}
        context = self._window(context, agent, text, ahead, viewer)
        facts = context.facts
        if added:
            started = time.perf_counter()
            facts = self._facts_going_on(context, agent, text, viewer)
            timings["early_fused"] = (time.perf_counter() - started) * 1000
        return replace(context, facts=facts, timings_ms=timings)

    def _window(
        self, context: MemoryContext, agent: str, text: str, ahead: str, viewer: Viewer
    ) -> MemoryContext:
        """`context` with the episodes and messages of a time the last words named ("...
        yesterday"): read by time, no search."""
        now = self._memory.now()
        window = time_window(text, now)
        if window is None or window == time_window(ahead, now):
            return context
        try:
            dated = episodes.of_window(self._memory.searcher, agent, window)
        except Exception:
            log.warning("reading the episodes of %s failed", window.phrase, exc_info=True)
            return context
        dated = episodes.seen_by(dated, viewer)
        summaries = episodes.with_episodes(dated, context.summaries, episodes.RELEVANT_EPISODES)
        return replace(context, summaries=summaries.episodes, messages=dated.messages)

    def _facts_going_on(
        self, context: MemoryContext, agent: str, text: str, viewer: Viewer
    ) -> tuple[ScoredFact, ...]:
        """The facts for `text`, which goes on from the words heard ahead: those found for
        them (by a meaning close to the whole's: their vector) fused anew with the facts
        that name `text`'s words, as a search fuses them (a keyword search: no embedding,
        no vector search). The ahead's facts when that fails."""
        ahead = [
            FactHit(hit.fact.id, hit.similarity, hit.fact.created_at, hit.fact.user_score)
            for hit in context.facts
            if not listed_commitment(hit)
        ]
        try:
            return self._memory.relevant_facts(
                agent, text, context.query_vector, viewer, vector_hits=ahead
            )
        except Exception:
            log.warning("fusing the facts found ahead with the last words failed", exc_info=True)
            return context.facts


def listed_commitment(hit: ScoredFact) -> bool:
    """Whether `hit` is a commitment a question about them listed (`with_commitments`, at
    similarity 1), not one a search found: listed again, first, when the words still ask."""
    return hit.fact.fact_type == COMMITMENT and hit.similarity >= 1.0
