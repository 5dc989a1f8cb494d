"""A turn between its preparation and its end: the user's message stored and the prompt built
(`PreparedTurn`, made by `Assistant`), then the answer stored (`conclude`) as the `Turn` a
surface gets back."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from lobug.backends.base import AbandonCheck, ChatMessage, ToolBox
from lobug.language.claims import known_words
from lobug.memory.reminders import DueReminders, NoReminders
from lobug.memory.voice_enrolment import HeardVoice
from lobug.memory.work_queue import Exchange
from lobug.store.household import answering
from lobug.store.models import Message
from lobug.store.protocol import MessageIntake
from lobug.turn.conversation import DeviceState
from lobug.turn.decision import Action, Decision
from lobug.turn.recall import asked_words
from lobug.turn.reply_guard import guard_metadata
from lobug.turn.request_tools import MEMORY_TOOLS, used_memory
from lobug.turn.spoken import SentenceLimit, SpokenLimit


@dataclass(frozen=True)
class TurnOptions:
    """How a turn is asked for (`Assistant.reply`, `reply_streaming`)."""

    agency: bool = False  # the model may act on the device's tools and the memory's
    abandoned: AbandonCheck | None = None  # the client stopped waiting
    spoken: SpokenLimit | None = None  # a voice turn: only this much of the answer is said
    # A text turn: only this much of the answer is shown (a voice turn's is `spoken`).
    written: SentenceLimit | None = None
    voice: HeardVoice | None = None  # what a voice turn heard of the voice
    heard_later: bool = False  # the caller settles the reminders said (`Turn.delivered`)
    # Read to its end before anyone reads it (a text turn): the due reminders follow the
    # answer as the server's own words instead of ringing as the stream's last piece.
    read_whole: bool = False


@dataclass
class Turn:
    device_id: str
    agent: str
    action: Action
    response: str
    user_message: Message | None  # None for a memory request ("forget that"): not logged
    assistant_message: Message | None
    timings_ms: dict[str, float] = field(default_factory=dict)
    rung: DueReminders = field(default_factory=NoReminders)  # the due reminders it said

    def delivered(self) -> None:
        """The response reached the device: the reminders it said are said (`heard_later`)."""
        self.rung.settle(self.response)

    @property
    def exchange(self) -> Exchange | None:
        """The answered exchange, for memory work; None for a turn not answered in words."""
        if self.action != "respond" or self.assistant_message is None or not self.user_message:
            return None
        return Exchange(self.user_message, self.assistant_message)


@dataclass
class PreparedTurn:
    """A turn whose user message is stored and whose prompt is built, run while its device
    is held; `conclude` stores the answer."""

    store: MessageIntake
    state: DeviceState
    user_message: Message | None
    messages: list[ChatMessage]
    timings: dict[str, float]
    clock: Stopwatch
    answer: str | None = None  # a memory request's or a recalled fact's: no model asked
    # Only this much of the answer is said or shown, and stored (`SpokenLimit` for a voice turn).
    limit: SentenceLimit | None = None
    # Due reminders, said after the answer (`conclude`), or as the stream's last piece.
    reminders: DueReminders = field(default_factory=NoReminders)
    rings_in_stream: bool = False
    heard_later: bool = False  # the caller settles the reminders said (`Turn.delivered`)
    draft_id: int | None = None  # the answer logged as far as it was said (`draft`)
    tools_used: list[dict[str, Any]] = field(default_factory=list)  # by the model
    tools: ToolBox | None = None  # the device's and the memory's, offered to the model
    unlog: Callable[[Message], None] = lambda message: None  # a memory request's message

    @property
    def model_acts(self) -> bool:
        """Whether the model answering may act on the memory: it is offered the memory's
        tools (or the answer is the server's own, `answer`)."""
        offered = self.tools is not None and MEMORY_TOOLS & {
            spec["function"]["name"] for spec in self.tools.specs
        }
        return bool(offered) or self.answer is not None

    @property
    def about_them(self) -> bool:
        """Whether the person asked about themselves ("What car do I drive?")."""
        return self.user_message is not None and bool(asked_words(self.user_message.content))

    @property
    def known(self) -> frozenset[str]:
        """The words of the turn's prompt: what a reply may name about the person (a memory
        request's answer is the server's own words, not the model's: all of them)."""
        own = [self.answer] if self.answer is not None and self.user_message is None else []
        results = [str(use.get("result", "")) for use in self.tools_used]
        prompt = (m["content"] for m in self.messages)
        return known_words([*prompt, self.reminders.words(), *own, *results])

    def draft(self, said: str) -> None:
        """Log the answer as far as it was said yet (a voice answer, at each sentence), so
        the words said before a crash are in the log; `conclude` stores it in its place."""
        if self.user_message is not None and said.strip():
            state = self.state
            self.draft_id = self.store.draft_reply(
                state.agent, state.device_id, said.strip(), self.user_message, self.draft_id
            )

    def conclude(self, decision: Decision) -> Turn:
        """Store the answer (with its memory work queued when it is a `respond`) and add it
        to the device's working memory; a memory request's answer is neither."""
        if self.limit is not None and decision.action == "respond":
            decision = replace(decision, text=self.limit.cut(decision.text))
        if decision.action == "respond" and not self.rings_in_stream:
            decision = replace(decision, text=self.reminders.after(decision.text))
        state = self.state
        assistant_message = None
        metadata = guard_metadata(decision, self.tools_used)
        if self.user_message is not None and used_memory(self.tools_used):
            self.unlog(self.user_message)  # kept as a spoken request is: not at all
        elif decision.text and self.user_message is not None:
            if decision.action == "respond":
                assistant_message = self.store.append_reply_for_memory_work(
                    state.agent,
                    state.device_id,
                    decision.text,
                    self.user_message,
                    metadata,
                    self.draft_id,
                )
            else:
                assistant_message = self.store.append_message(
                    state.agent,
                    state.device_id,
                    "assistant",
                    decision.text,
                    metadata=metadata,
                    speaker=answering(self.user_message.person_id),
                )
            state.remember("assistant", decision.text, self.user_message.person_id)
        self.clock.lap("persist_reply")
        if not self.heard_later:  # said: a stream is concluded once it was
            self.reminders.settle(decision.text)
        return Turn(
            device_id=state.device_id,
            agent=state.agent,
            action=decision.action,
            response=decision.text,
            user_message=self.user_message,
            assistant_message=assistant_message,
            timings_ms=self.timings,
            rung=self.reminders,
        )


class Stopwatch:
    def __init__(self, timings: dict[str, float]) -> None:
        self._timings = timings
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self._timings[name] = (now - self._last) * 1000
        self._last = now
