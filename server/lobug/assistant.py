"""One conversational turn, shared by every input path (text now, audio later).

Blocking: the API runs `reply` in a worker thread and `remember` as a background task.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from lobug.backends.base import ChatBackend
from lobug.config import Settings
from lobug.conversation import (
    DeviceState,
    SensorReading,
    build_messages,
    new_device_state,
    system_prompt,
)
from lobug.decision import Action, parse_reply
from lobug.memory.manager import ExchangeReport, MemoryManager
from lobug.memory.store import MemoryStore, Message

log = logging.getLogger(__name__)


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
        self, settings: Settings, store: MemoryStore, memory: MemoryManager, chat: ChatBackend
    ) -> None:
        self.settings = settings
        self.store = store
        self.memory = memory
        self.chat = chat
        self._devices: dict[str, DeviceState] = {}
        self._devices_lock = threading.Lock()
        self._learning = 0
        self._learning_lock = threading.Lock()

    @property
    def pending_learning(self) -> int:
        """Answered turns whose memory processing has not finished yet."""
        return self._learning

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

    def reply(self, device_id: str, text: str, *, agency: bool = False) -> Turn:
        """Persist the user's message, answer it with memory, persist the answer.

        Raises BackendError when the chat model fails; the user's message stays stored."""
        state = self.device(device_id)
        with state.lock:
            return self._reply_locked(state, text, agency)

    def _reply_locked(self, state: DeviceState, text: str, agency: bool) -> Turn:
        timings: dict[str, float] = {}
        clock = _Stopwatch(timings)
        user_message = self.store.append_message(state.agent, state.device_id, "user", text)
        state.remember("user", text)
        clock.lap("persist_user")

        context = self.memory.retrieve_context(state.agent, text)
        timings.update({f"retrieve_{k}": v for k, v in context.timings_ms.items()})
        clock.lap("retrieve")

        messages = build_messages(
            system_prompt(context, state.sensors, agency=agency),
            list(state.history),
            context_tokens=self.settings.llm_context_tokens,
            reply_tokens=self.settings.llm_max_tokens,
        )
        raw = self.chat.complete(
            messages,
            max_tokens=self.settings.llm_max_tokens,
            temperature=self.settings.llm_temperature,
        )
        clock.lap("llm")

        decision = parse_reply(raw)
        assistant_message = None
        if decision.text:
            assistant_message = self.store.append_message(
                state.agent, state.device_id, "assistant", decision.text
            )
            state.remember("assistant", decision.text)
        clock.lap("persist_reply")
        return Turn(
            device_id=state.device_id,
            agent=state.agent,
            action=decision.action,
            response=decision.text,
            user_message=user_message,
            assistant_message=assistant_message,
            timings_ms=timings,
        )

    def learning_job(self, turn: Turn) -> Callable[[], ExchangeReport] | None:
        """For an answered turn, the memory work (facts, cascades) to run in the background.

        Counted in `pending_learning` from now until the job finishes."""
        if turn.action != "respond" or turn.assistant_message is None:
            return None
        assistant_message = turn.assistant_message
        with self._learning_lock:
            self._learning += 1

        def learn() -> ExchangeReport:
            try:
                report = self.memory.process_exchange(
                    turn.agent, turn.user_message, assistant_message
                )
            finally:
                with self._learning_lock:
                    self._learning -= 1
            log.info(
                "memory: +%d facts, %d superseded, summarized=%s, distilled=%s, errors=%s",
                len(report.facts_added),
                len(report.facts_superseded),
                report.summarized,
                report.distilled,
                sorted(report.errors),
            )
            return report

        return learn


class _Stopwatch:
    def __init__(self, timings: dict[str, float]) -> None:
        self._timings = timings
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self._timings[name] = (now - self._last) * 1000
        self._last = now
