"""A person first (issue 28): how one model is shared between the replies a person waits for
and background memory work (extraction, cascades, dreams, topics).

A person's calls never wait here: they go to the model at once, side by side (llama.cpp
decodes them in one batch over its slots; a model server takes them as it does). Background
calls run one at a time, first come first served, and only once no person's call has been in
flight for `QUIET_S`. A background call that is running when a person's call arrives stops at
its next step (a token, or a batch of its prompt) and gives the model back; it is run again
once the person's calls are done: nothing it was asked is lost (`gives_way`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass

# How long the model must have been free of a person's calls before background work starts
# (again): the calls of one turn come a few milliseconds apart (a reply, the reply guard's
# second try, the next turn's prompt read ahead), and a background call started between them
# would only be stopped again.
QUIET_S = 0.5

log = logging.getLogger(__name__)


class ModelTurns:
    """Who may use the model now: a person's calls at once, background calls in the gaps."""

    def __init__(self, quiet_s: float = QUIET_S, clock: Callable[[], float] = time.monotonic):
        self.quiet_s = quiet_s
        self._clock = clock
        self._condition = threading.Condition()
        self._people = 0  # a person's calls in flight
        self._person_left_at = -math.inf
        self._line: deque[object] = deque()  # background calls waiting, in arrival order
        self._background_busy = False
        self.stops = 0  # background calls stopped for a person (a figure for tests and logs)

    @property
    def people(self) -> int:
        return self._people

    @property
    def background_running(self) -> bool:
        """Whether a background call has the model now."""
        return self._background_busy

    def person_waiting(self) -> bool:
        """Asked by a running background call at each step: stop now?"""
        return self._people > 0

    @contextmanager
    def person(self) -> Iterator[None]:
        """A call a person waits for: never waits here."""
        with self._condition:
            self._people += 1
        try:
            yield
        finally:
            with self._condition:
                self._people -= 1
                self._person_left_at = self._clock()
                self._condition.notify_all()

    @contextmanager
    def background(self) -> Iterator[None]:
        """A background call: waits for its turn in line and for a quiet model."""
        me = object()
        with self._condition:
            self._line.append(me)
            try:
                while (wait := self._background_wait(me)) > 0:
                    self._condition.wait(None if math.isinf(wait) else wait)
            finally:
                self._line.remove(me)
                self._condition.notify_all()
            self._background_busy = True
        try:
            yield
        finally:
            with self._condition:
                self._background_busy = False
                self._condition.notify_all()

    def _background_wait(self, me: object) -> float:
        """Seconds until `me` may start (at most): infinite while it is not its turn."""
        if self._background_busy or self._line[0] is not me or self._people:
            return math.inf
        return self._person_left_at + self.quiet_s - self._clock()


@dataclass(frozen=True)
class Attempt:
    """What one run of a background call gave: its text, and whether it was finished (else
    it stopped for a person after `tokens` tokens)."""

    text: str
    finished: bool
    tokens: int = 0


def gives_way(
    turns: ModelTurns, run: Callable[[str, int], Attempt], *, resumable: bool, max_tokens: int
) -> str:
    """A background call run until it finishes: `run(text so far, tokens so far)` in the
    model's gaps, again after each time it stopped for a person. A `resumable` call goes on
    from the text it had (free text); any other starts again (JSON: a grammar starts at the
    beginning; its prompt is still cached, so starting again is cheap)."""
    text, tokens = "", 0
    while True:
        with turns.background():
            attempt = run(text, tokens)
            turns.stops += not attempt.finished
        if attempt.finished:
            return text + attempt.text
        log.debug("a background model call gave way to a person after %d tokens", attempt.tokens)
        if resumable:
            text, tokens = text + attempt.text, tokens + attempt.tokens
            if tokens >= max_tokens:
                return text


def until_a_person_comes(pieces: Generator[str, None, object], turns: ModelTurns) -> Attempt:
    """One try of a background call, streamed: its text once the stream is finished, or so
    far when a person's call arrives: the stream is closed then, and closing the connection
    stops the generation on Ollama, llama.cpp's server and vLLM, so the person's request
    does not wait behind it on a server that answers one request at a time."""
    text = []
    with closing(pieces):
        for piece in pieces:
            text.append(piece)
            if turns.person_waiting():
                return Attempt("".join(text), finished=False, tokens=len(text))
    return Attempt("".join(text), finished=True, tokens=len(text))
