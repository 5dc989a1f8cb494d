"""A turn whose answer is said while the model writes it (`Assistant.reply_streaming`): the
device held until it is closed, each sentence checked by the reply guard as it is said, a
barge-in or a hang-up stopping the model, and what was said stored."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from types import TracebackType
from typing import TypeAlias

from lobug.turn.decision import Decision, read_action_prefix
from lobug.turn.prepared import PreparedTurn, Turn
from lobug.turn.reply_guard import (
    Chunks,
    GuardedReply,
    ReplyGuard,
    SecondTry,
    interrupted,
    stop_stream,
)

# After a refused streamed answer that said nothing: the turn's second answer, streamed.
Retry: TypeAlias = Callable[[], Iterator[str]]


class StreamingTurn(AbstractContextManager["StreamingTurn"]):
    """A turn whose answer is still being generated; see `Assistant.reply_streaming`.

    It holds its device from the moment it is made (the device's next turn waits) until it is
    closed, by `close()` or at the end of a `with` block: closing stops the model if it is
    still writing (the device hung up), stores what was said and lets the next turn in."""

    def __init__(
        self,
        held: AbstractContextManager[object],
        prepared: PreparedTurn,
        pieces: Iterator[str],
        guard: ReplyGuard,
        retry: Retry,
    ) -> None:
        """`held`: the device, held by its caller, freed when the turn is closed (or at once
        when reading the answer's action fails); `prepared`: the turn with its user message
        stored; `pieces`: the model's answer as it is written."""
        with ExitStack() as stack:
            stack.push(held)
            self._prepared, self._rest = prepared, pieces
            self._guard = guard.knowing(  # this turn's claims checked
                prepared.known, answer=prepared.about_them, acts=prepared.model_acts
            )
            self.action, self._head = read_action_prefix(pieces)
            prepared.clock.lap("llm_start")  # the prompt read, the action known
            self._held = stack.pop_all()  # started: the device stays held until `close`
        self.user_message = self._prepared.user_message
        self._retry = retry
        self._replacement: Decision | SecondTry | None = None  # set when the guard stepped in
        self._reply: GuardedReply | None = None  # the guarded loop, once asked for
        self._said: list[str] = []
        self._open = True
        self._closing = threading.Lock()
        self.turn: Turn | None = None

    @property
    def timings_ms(self) -> dict[str, float]:
        return self._prepared.timings

    def pieces(self) -> Iterator[str]:
        """The answer's text as it is generated (nothing for ignore/react)."""
        if self.action != "respond":
            return
        if self._head:
            self._said.append(self._head)
            yield self._head
        for piece in self._rest:
            self._said.append(piece)
            yield piece

    def limited(self, chunks: Chunks) -> Chunks:
        """`chunks` of only as much of the answer as the turn keeps (`PreparedTurn.limit`):
        pulling stops at its last sentence, so the model stops writing there too."""
        limit = self._prepared.limit
        if limit is None:
            return chunks
        return lambda pieces: chunks(limit.capped(pieces))

    def guarded(self, sentences: Chunks, separator: str = " ") -> GuardedReply:
        """The reply guard's loop over this turn's `sentences` (the pieces regrouped; joined
        by `separator`: "" for chunks that keep their spaces) as they are said
        (`GuardedReply.passed`); at a refused one, `refuse` settles what is stored."""
        self._reply = GuardedReply(self._guard, self.refuse, separator, sentences)
        return self._reply

    def refuse(self, problem: str, spoken: str) -> Decision | SecondTry | None:
        """The answer broke the reply guard after `spoken` (all that was said of it): stop
        the model. What was said stands, marked; when nothing was, the turn's second try is
        said in its place. None when the turn was closed meanwhile."""
        with self._closing:
            if not self._open:
                return None
            self._replacement = self._guard.refused(problem, spoken, self._stop_model, self._retry)
            if isinstance(self._replacement, SecondTry):  # the model is asked twice: timed
                self._prepared.clock.lap("llm")
            return self._replacement

    def said_so_far(self, spoken: str) -> None:
        """`spoken` (all said of the answer yet) is logged now, kept if the process dies."""
        with self._closing:
            if self._open:
                self._prepared.draft(spoken)

    def interrupt(self, spoken: str) -> None:
        """Barge-in after `spoken`: stop the model; `reply_guard.interrupted` is stored."""
        with self._closing:
            if self._open and not isinstance(self._replacement, Decision):
                self._stop_model()
                self._replacement = interrupted(spoken)

    def close(self) -> Turn | None:
        """Stop the model, store what was said, free the device; the stored turn (None when
        storing it failed before). Safe to call again, from any thread."""
        self._end(store=True)
        return self.turn

    def drop(self) -> None:
        """The answer failed before anyone read it (a turn read whole): stop the model and
        free the device, storing nothing of the answer (the user's message stays)."""
        self._end(store=False)

    def _end(self, store: bool) -> None:
        with self._closing:
            if not self._open:
                return
            self._open = False
            with self._held:  # the device is freed however storing goes
                self._stop_model()  # the device may have hung up mid-answer
                if store:
                    asked_twice = isinstance(self._replacement, SecondTry)
                    self._prepared.clock.lap("llm_retry" if asked_twice else "llm")
                    self.turn = self._prepared.conclude(self._decision())

    def _stop_model(self) -> None:
        stop_stream(self._rest)
        if isinstance(self._replacement, SecondTry):
            self._replacement.stop()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _decision(self) -> Decision:
        if isinstance(self._replacement, SecondTry) and self._reply is not None:
            return self._reply.decision()
        if isinstance(self._replacement, Decision):
            return self._replacement
        text = "".join(self._said).strip() if self.action == "respond" else self._head
        if self.action == "respond" and self._reply is not None and self._reply.acted:
            text = self._reply.text().strip()  # the words said, not the acting left out
        if self.action == "respond" and not text:
            return Decision("ignore", "")
        return Decision(self.action, text)
