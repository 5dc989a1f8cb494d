"""One conversational turn, shared by every input path (text now, audio later).

Blocking: the API runs `reply` in a worker thread and `remember` as a background task.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from lobug.backends.base import AbandonCheck, ChatBackend, ChatMessage
from lobug.config import Settings
from lobug.conversation import (
    DeviceState,
    SensorReading,
    new_device_state,
    turn_messages,
)
from lobug.decision import Action, Decision, parse_reply
from lobug.memory.learning import LearningQueue
from lobug.memory.manager import ExchangeReport, MemoryManager
from lobug.store.models import Message
from lobug.store.protocol import Store

log = logging.getLogger(__name__)

PREFIX_PROBE_CHARS = len("[IGNORE]")


@dataclass
class Turn:
    device_id: str
    agent: str
    action: Action
    response: str
    user_message: Message
    assistant_message: Message | None
    timings_ms: dict[str, float] = field(default_factory=dict)


class Assistant:
    def __init__(
        self, settings: Settings, store: Store, memory: MemoryManager, chat: ChatBackend
    ) -> None:
        self.settings = settings
        self.store = store
        self.memory = memory
        self.chat = chat
        self._devices: dict[str, DeviceState] = {}
        self._devices_lock = threading.Lock()
        self.learning = LearningQueue(store, memory)

    @property
    def pending_learning(self) -> int:
        """Answered turns whose memory processing has not finished yet."""
        return self.learning.pending

    def device(self, device_id: str) -> DeviceState:
        """The device's state, its working memory warmed from the log on first use."""
        with self._devices_lock:
            state = self._devices.get(device_id)
            if state is None:
                agent = self.settings.agent_for_device(device_id)
                size = self.settings.memory.working_memory_size
                recent = self.store.recent_messages(agent, device_id, size)
                state = new_device_state(
                    device_id, agent, size, ((m.role, m.content) for m in recent)
                )
                self._devices[device_id] = state
            return state

    def update_sensors(self, device_id: str, reading: SensorReading) -> None:
        self.device(device_id).sensors = reading

    def reply(
        self,
        device_id: str,
        text: str,
        *,
        agency: bool = False,
        abandoned: AbandonCheck | None = None,
    ) -> Turn:
        """Persist the user's message, answer it with memory, persist the answer.

        Raises BackendError when the chat model fails, and Abandoned when the client stopped
        waiting before the model started on it; either way the user's message stays stored."""
        state = self.device(device_id)
        with state.lock:
            prepared = self._prepare(state, text, agency)
            raw = self.chat.complete(
                prepared.messages,
                max_tokens=self.settings.llm_max_tokens,
                temperature=self.settings.llm_temperature,
                abandoned=abandoned,
            )
            prepared.clock.lap("llm")
            return self._finish(state, prepared, parse_reply(raw))

    def reply_streaming(
        self,
        device_id: str,
        text: str,
        *,
        agency: bool = False,
        abandoned: AbandonCheck | None = None,
    ) -> StreamingTurn:
        """Like `reply`, but the answer arrives in pieces as the model generates it.

        The action is known when this returns (an [IGNORE]/[REACT] prefix is read first); the
        caller consumes `pieces` and then calls `finish()`, which persists the answer and
        releases the device for its next turn."""
        state = self.device(device_id)
        state.lock.acquire()
        try:
            prepared = self._prepare(state, text, agency)
            stream = self.chat.stream(
                prepared.messages,
                max_tokens=self.settings.llm_max_tokens,
                temperature=self.settings.llm_temperature,
                abandoned=abandoned,
            )
            action, head = read_action_prefix(stream)
        except BaseException:
            state.lock.release()
            raise
        return StreamingTurn(self, state, prepared, action, head, stream)

    def _prepare(self, state: DeviceState, text: str, agency: bool) -> _Prepared:
        timings: dict[str, float] = {}
        clock = _Stopwatch(timings)
        user_message = self.store.append_message(state.agent, state.device_id, "user", text)
        state.remember("user", text)
        clock.lap("persist_user")

        context = self.memory.retrieve_context(state.agent, text)
        timings.update({f"retrieve_{k}": v for k, v in context.timings_ms.items()})
        clock.lap("retrieve")

        messages = turn_messages(
            context,
            state.sensors,
            list(state.history),
            agency=agency,
            context_tokens=self.settings.llm_context_tokens,
            reply_tokens=self.settings.llm_max_tokens,
            notes_last=self.chat.caches_prompt_prefix,
        )
        return _Prepared(user_message, messages, timings, clock)

    def _finish(self, state: DeviceState, prepared: _Prepared, decision: Decision) -> Turn:
        assistant_message = None
        if decision.text:
            if decision.action == "respond":
                assistant_message = self.store.append_reply_for_memory_work(
                    state.agent, state.device_id, decision.text, prepared.user_message
                )
            else:
                assistant_message = self.store.append_message(
                    state.agent, state.device_id, "assistant", decision.text
                )
            state.remember("assistant", decision.text)
        prepared.clock.lap("persist_reply")
        return Turn(
            device_id=state.device_id,
            agent=state.agent,
            action=decision.action,
            response=decision.text,
            user_message=prepared.user_message,
            assistant_message=assistant_message,
            timings_ms=prepared.timings,
        )

    def learning_job(self, turn: Turn) -> Callable[[], ExchangeReport] | None:
        """For an answered turn, the memory work (facts, cascades) to run in the background.

        Counted in `pending_learning` from now until the job finishes; queued in the store
        since the reply was, so a crash before it finishes does not lose it."""
        if turn.action != "respond" or turn.assistant_message is None:
            return None
        return self.learning.job(turn.user_message, turn.assistant_message)


@dataclass
class _Prepared:
    user_message: Message
    messages: list[ChatMessage]
    timings: dict[str, float]
    clock: _Stopwatch


class StreamingTurn:
    """A turn whose answer is still being generated; see `Assistant.reply_streaming`."""

    def __init__(
        self,
        assistant: Assistant,
        state: DeviceState,
        prepared: _Prepared,
        action: Action,
        head: str,
        rest: Iterator[str],
    ) -> None:
        self.action = action
        self.user_message = prepared.user_message
        self._assistant = assistant
        self._state = state
        self._prepared = prepared
        self._head = head
        self._rest = rest
        self._said: list[str] = []
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

    def finish(self) -> Turn:
        """Stop the model if it is still writing (the device hung up), persist what was said
        and let the device's next turn in. Safe to call twice."""
        if self.turn is not None:
            return self.turn
        try:
            close = getattr(self._rest, "close", None)
            if close is not None:
                close()  # the device hung up mid-answer: stop the model
            self._prepared.clock.lap("llm")
            text = "".join(self._said).strip() if self.action == "respond" else self._head
            decision = Decision(self.action, text)
            if self.action == "respond" and not text:
                decision = Decision("ignore", "")
            self.turn = self._assistant._finish(self._state, self._prepared, decision)
        finally:
            self._state.lock.release()
        return self.turn


def read_action_prefix(stream: Iterator[str]) -> tuple[Action, str]:
    """Read just enough of a streamed reply to know its action.

    Returns the action and the text read so far: for `respond` the start of the answer, for
    `react` the reaction text (the rest of the stream), for `ignore` nothing."""
    head = ""
    for piece in stream:
        head += piece
        stripped = head.lstrip()
        if len(stripped) >= PREFIX_PROBE_CHARS or not _could_be_prefix(stripped):
            break
    decision = parse_reply(head)
    if decision.action == "respond":
        return "respond", head.lstrip()
    if decision.action == "react":
        rest = "".join(stream)
        return "react", parse_reply(head + rest).text
    for _ in stream:  # drain, so the model is free for the next request
        pass
    return "ignore", ""


def _could_be_prefix(text: str) -> bool:
    upper = text.upper()
    return any(p.startswith(upper) or upper.startswith(p) for p in ("[IGNORE]", "[REACT]"))


class _Stopwatch:
    def __init__(self, timings: dict[str, float]) -> None:
        self._timings = timings
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self._timings[name] = (now - self._last) * 1000
        self._last = now
