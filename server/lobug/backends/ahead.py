"""Answers started before their turn: while a person pauses after words that may end their
turn, the model already writes the answer to them, so that when the turn does end (the
server's endpointing waits out a short silence first, a device its own) the first words are
there, instead of the prompt only then being read and the answer only then begun.

`AnswersAhead.start` begins one for a device (replacing the one it had); the turn's
`AnswersAhead.stream` adopts it when the turn's prompt is the one it was started for, and
starts the answer anew otherwise (the one ahead is dropped). Until it is adopted, a thread
of its own reads the answer as fast as the model writes it (a stream left unread would hold
the model's loop, and every other call with it), up to the turn's token cap; once adopted,
the turn reads on at its own pace. `drop` stops it at its next token: the person spoke on,
or it was left (`TTL_S`). Nothing of it is stored or said unless a turn adopts it: the turn
stores what it says, as always."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from lobug.backends.base import AbandonCheck, ChatBackend, ChatMessage, ToolBox
from lobug.kept import DeviceKeep, Slot

log = logging.getLogger(__name__)

TTL_S = 20.0  # an answer ahead no turn adopted within this is dropped


@dataclass(frozen=True)
class Request:
    """What an answer is written for: equal requests get equal answers (as far as sampling)."""

    messages: tuple[ChatMessage, ...]
    max_tokens: int
    temperature: float


@dataclass
class Ahead:
    """One answer written ahead, by a pump thread reading the model's stream."""

    request: Request
    began: float = field(default_factory=time.perf_counter)
    pieces: list[str] = field(default_factory=list)
    failure: BaseException | None = None
    ended: bool = False  # the model's stream ended (its answer is whole in `pieces`)
    adopted: bool = False
    dropped: bool = False
    abandoned: AbandonCheck | None = None  # the adopting turn's
    lock: threading.Lock = field(default_factory=threading.Lock)
    left: threading.Event = field(default_factory=threading.Event)  # the pump has left
    stream: Iterator[str] | None = None
    pumping: bool = True  # the pump thread still reads the stream (nobody else may)
    expiry: threading.Timer | None = None

    def stopped(self) -> bool:
        """The model's stop check: dropped, or the adopting turn stopped waiting."""
        return self.dropped or (self.abandoned is not None and self.abandoned())

    def run(self, chat: ChatBackend) -> None:
        """The pump: the model's pieces into `pieces`, until adopted, dropped or ended."""
        try:
            self.stream = chat.stream(
                list(self.request.messages),
                max_tokens=self.request.max_tokens,
                temperature=self.request.temperature,
                abandoned=self.stopped,
            )
            while not (self.adopted or self.dropped):
                piece = next(self.stream, None)
                if piece is None:
                    self.ended = True
                    break
                self.pieces.append(piece)
        except BaseException as exc:  # handed to the turn that adopts it, if one does
            self.failure = exc
        finally:
            with self.lock:
                self.pumping = False
                if self.dropped:
                    self._close()
            self.left.set()

    def drop(self) -> None:
        """Stop it at its next token (no-op once adopted)."""
        with self.lock:
            if self.adopted or self.dropped:
                return
            self.dropped = True
            if not self.pumping:
                self._close()  # the pump has left: nobody else touches the stream
        self._stop_expiry()

    def adopt(self, abandoned: AbandonCheck | None) -> Iterator[str] | None:
        """The answer for its turn (None when it was dropped meanwhile): what was written
        ahead, then the rest as the model writes it."""
        with self.lock:
            if self.dropped:
                return None
            self.adopted, self.abandoned = True, abandoned
        self._stop_expiry()
        self.left.wait()  # the pump leaves after the piece it waits for
        return self._rest()

    def _stop_expiry(self) -> None:
        if self.expiry is not None:
            self.expiry.cancel()

    def _rest(self) -> Iterator[str]:
        try:
            yield from self.pieces
            if self.failure is not None:
                raise self.failure
            if not self.ended and self.stream is not None:
                yield from self.stream
        finally:
            self._close()

    def _close(self) -> None:
        close = getattr(self.stream, "close", None)
        if close is not None:
            close()


class AnswersAhead:
    """The answers written ahead, one a device at most: kept in the device's keep
    (`lobug.kept`), stopped when the device is dropped."""

    def __init__(self, chat: ChatBackend, keep: DeviceKeep | None = None) -> None:
        self.chat = chat
        self._ahead: Slot[Ahead] = (keep or DeviceKeep()).slot("answer ahead", Ahead.drop)
        self.adopted = self.missed = 0  # turns that found their answer ahead, or another one

    def start(
        self,
        device_id: str,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
    ) -> None:
        """Begin writing the answer to `messages` for the device's next turn."""
        ahead = Ahead(Request(tuple(messages), max_tokens, temperature))
        with self._ahead.keep.lock:
            earlier = self._ahead.get(device_id)
            if earlier is not None and earlier.request == ahead.request:
                return  # the same words heard again: the answer to them is being written
            self._ahead.put(device_id, ahead)
        if earlier is not None:
            earlier.drop()
        ahead.expiry = threading.Timer(TTL_S, self._expire, args=(device_id, ahead))
        ahead.expiry.daemon = True
        ahead.expiry.start()
        pump = threading.Thread(target=ahead.run, args=(self.chat,), name="answer-ahead")
        pump.daemon = True
        pump.start()

    def drop(self, device_id: str) -> None:
        """Stop the device's answer ahead, if any (the person speaks on)."""
        ahead = self._ahead.pop(device_id)
        if ahead is not None:
            ahead.drop()

    def may_begin(self, tools: ToolBox | None) -> bool:
        """Whether a turn's answer may be begun ahead: by a model that `answers_ahead`, and
        one that will not call the device's `tools`."""
        return self.chat.answers_ahead and not self.calls(tools)

    def calls(self, tools: ToolBox | None) -> bool:
        """Whether the model would call `tools` while it answers: such an answer is never
        begun ahead (a tool call changes the device)."""
        return tools is not None and self.chat.supports_tools

    def stream(
        self,
        device_id: str,
        messages: Sequence[ChatMessage],
        tools: ToolBox | None = None,
        *,
        max_tokens: int,
        temperature: float,
        abandoned: AbandonCheck | None = None,
        timings: dict[str, float] | None = None,
    ) -> Iterator[str]:
        """The turn's answer: the device's answer ahead when it was begun for this very
        request, else the model's stream begun now (the one ahead, if any, dropped), with
        the device's `tools` (`ChatBackend.stream_with_tools`). `timings` gets `ahead`: how
        long before the answer ahead had been begun (0: none)."""
        ahead = self._ahead.pop(device_id)
        if timings is not None:
            timings["ahead"] = 0.0
        request = Request(tuple(messages), max_tokens, temperature)
        if ahead is not None and ahead.request == request and not self.calls(tools):
            rest = ahead.adopt(abandoned)
            if rest is not None:
                self.adopted += 1
                if timings is not None:
                    timings["ahead"] = (time.perf_counter() - ahead.began) * 1000
                return rest
        if ahead is not None:
            ahead.drop()
            self.missed += 1
            why = _diff(ahead.request, request)
            log.debug("%s: the answer ahead was for another prompt (%s)", device_id, why)
        return self.chat.stream_with_tools(
            messages, tools, max_tokens=max_tokens, temperature=temperature, abandoned=abandoned
        )

    def _expire(self, device_id: str, ahead: Ahead) -> None:
        self._ahead.pop_if(device_id, ahead)
        ahead.drop()


def _diff(ahead: Request, turn: Request) -> str:
    """Where the turn's request differs from the one the answer ahead was begun for (a log
    line's words: never the text)."""
    if (ahead.max_tokens, ahead.temperature) != (turn.max_tokens, turn.temperature):
        return "its limits"
    if len(ahead.messages) != len(turn.messages):
        return f"{len(ahead.messages)} messages, not {len(turn.messages)}"
    pairs = enumerate(zip(ahead.messages, turn.messages, strict=True))
    differ = [f"message {n} ({b['role']})" for n, (a, b) in pairs if a != b]
    return differ[0] if differ else "the device's tools"
