"""One conversational turn, shared by every input path (text and voice).

Blocking: the API runs `reply` in a worker thread; the memory work after an answered turn
(`Turn.exchange`) is handed to the services' `MemoryWork` queue once the response is sent.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from functools import partial

from lobug.backends.ahead import AnswersAhead
from lobug.backends.base import AbandonCheck, ChatBackend, ChatMessage, Embedder
from lobug.config import Settings
from lobug.memory.assembly import TURN_SECTIONS, ContextRequest, Recall, assemble
from lobug.memory.context import MemoryContext
from lobug.memory.curation import Curation
from lobug.memory.manager import MemoryManager
from lobug.memory.reminders import DueReminders, owners_at
from lobug.memory.voice_enrolment import HeardVoice
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import VOICE, Message, ScoredFact
from lobug.store.protocol import Store
from lobug.turn.conversation import (
    DeviceState,
    SensorReading,
    new_device_state,
    said,
    turn_messages,
)
from lobug.turn.devices import DeviceStates
from lobug.turn.early import EarlyRecall
from lobug.turn.prepared import PreparedTurn, Stopwatch, Turn, TurnOptions
from lobug.turn.recall import answer_from_memory
from lobug.turn.reply_guard import (
    ReplyGuard,
    careful_stream,
    text_chunks,
)
from lobug.turn.request_tools import (
    RequestTurn,
    memory_tools,
    with_memory_tools,
)
from lobug.turn.session import DeviceSession
from lobug.turn.spoken import SentenceLimit, SpokenLimit
from lobug.turn.spoken_curation import answer_request
from lobug.turn.streaming import StreamingTurn

log = logging.getLogger(__name__)


class Assistant:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        memory: MemoryManager,
        chat: ChatBackend,
        embedder: Embedder,
    ) -> None:
        self.settings = settings
        self.store = store
        self.memory = memory
        self.chat = chat
        limits = settings.reply_limits(chat.reply_tokens, chat.reply_temperature)
        self.reply_tokens, self.temperature = limits
        # A text turn's answer, and its notes
        self.written = SentenceLimit(
            settings.text_max_sentences, notes_tokens=settings.text_notes_tokens
        )
        # What a device's turns share, the domain's part (who speaks, what waits for a "yes",
        # a voice being learnt) included: one keep, one lock, dropped by one eviction rule.
        keep = memory.device_keep
        self._devices = DeviceStates(settings.max_devices, self._warm, keep=keep)
        self.curation = Curation(
            store, embedder, settings.memory, self.rewarm, searcher=memory.searcher
        )
        self.guard = ReplyGuard(settings.language)
        self._early = EarlyRecall(memory, keep=keep)  # a voice turn's memory, as it is heard
        self._ahead = AnswersAhead(chat, keep)  # a voice turn's answer, begun in the person's pause

    def session(self, device_id: str) -> DeviceSession:
        """The device as a surface asks for it: its turn gate, tools, the answer ahead."""
        return DeviceSession(device_id, self._devices, self._ahead)

    def _warm(self, device_id: str) -> DeviceState:
        agent = self.settings.agent_for_device(device_id)
        size = self.settings.memory.working_memory_size
        recent = self.store.recent_messages(agent, device_id, size)
        return new_device_state(device_id, agent, size, (said(m) for m in recent))

    def rewarm(self, agent: str) -> None:
        """Refill the working memory of the agent's devices from the log (after a forget);
        empty it when the agent was deleted (reading its log would create it again)."""
        states = self._devices.of_agent(agent)
        deleted = bool(states) and self.store.find_agent(agent) is None
        for state in states:
            size = state.size
            recent = [] if deleted else self.store.recent_messages(agent, state.device_id, size)
            state.refill(said(m) for m in recent)

    def reply(
        self,
        device_id: str,
        text: str,
        *,
        agency: bool = False,
        abandoned: AbandonCheck | None = None,
        spoken: SpokenLimit | None = None,
        voice: HeardVoice | None = None,
        heard_later: bool = False,
    ) -> Turn:
        """Persist the user's message, answer it with memory, persist the answer (only as
        much of it as `spoken` lets be said, for a voice turn). `heard_later`: the due
        reminders said are marked said once the caller delivered them (`Turn.delivered`).

        A turn answered whole is a streamed turn read to its end (`reply_streaming`): the same
        stages, the same guard, sentence by sentence, and a second ask only when the first
        answer had nothing that passed.

        Raises BackendError when the chat model fails, and Abandoned when the client stopped
        waiting before the model started on it; either way the user's message stays stored."""
        written = self.written  # a voice turn's `spoken` limit goes before it
        asked = TurnOptions(agency, abandoned, spoken, written, voice, heard_later, read_whole=True)
        streaming = self._streamed(device_id, text, asked)
        try:
            for _ in streaming.guarded(streaming.limited(text_chunks), "").passed(
                streaming.pieces()
            ):
                pass
        except BaseException:
            streaming.drop()  # nobody read any of it: nothing of the answer is stored
            raise
        turn = streaming.close()
        assert turn is not None  # stored, or it raised
        return turn

    def _unlog(self, message: Message) -> None:
        """Take a memory request the model carried out out of the log and working memory."""
        self.curation.forget_messages(message.agent, [message.id], actor=VOICE)

    def understands_requests(self) -> bool:
        """Whether the model understands memory requests (its tools: `memory/request_tools.py`),
        so the phrase rules are not asked."""
        return self.settings.understanding == "auto" and self.chat.supports_tools

    def reply_streaming(
        self,
        device_id: str,
        text: str,
        *,
        agency: bool = False,
        abandoned: AbandonCheck | None = None,
        spoken: SpokenLimit | None = None,
        voice: HeardVoice | None = None,
        heard_later: bool = False,
    ) -> StreamingTurn:
        """Like `reply`, but the answer arrives in pieces as the model generates it.

        The action is known when this returns (an [IGNORE]/[REACT] prefix is read first); the
        caller consumes `pieces` and then closes the turn (`close()` or a `with` block)."""
        asked = TurnOptions(agency, abandoned, spoken, voice=voice, heard_later=heard_later)
        return self._streamed(device_id, text, asked)

    def _streamed(self, device_id: str, text: str, asked: TurnOptions) -> StreamingTurn:
        with ExitStack() as held:  # the device is held until the turn is closed
            state = held.enter_context(self._devices.turn(device_id))
            prepared, pieces = self._start_stream(state, text, asked)
            retry = partial(
                careful_stream,
                self.chat,
                prepared.messages,
                self.settings.language,
                self.reply_tokens,
                asked.abandoned,
            )
            return StreamingTurn(held.pop_all(), prepared, pieces, self.guard, retry)

    def _start_stream(
        self,
        state: DeviceState,
        text: str,
        asked: TurnOptions,
    ) -> tuple[PreparedTurn, Iterator[str]]:
        """The turn prepared on its held device, and its answer's pieces (a memory request's
        answer, or the model's, adopted from the one begun ahead where it fits), with the due
        reminders as the last piece of an answer said as it comes."""
        limit = asked.spoken or asked.written
        prepared = self._prepare(state, text, asked.agency, limit, asked.voice)
        if prepared.user_message is not None:  # a memory request's answer is kept whole
            # the memory's own answer is shown whole; a voice turn says it within its limit
            prepared.limit = limit if prepared.answer is None else asked.spoken
        prepared.rings_in_stream, prepared.heard_later = not asked.read_whole, asked.heard_later
        if prepared.answer is not None:
            self._ahead.drop(state.device_id)
            stream: Iterator[str] = iter([prepared.answer])
        else:
            stream = self._ahead.stream(
                state.device_id,
                prepared.messages,
                None if prepared.tools is None else prepared.tools.recording(prepared.tools_used),
                max_tokens=self._reply_tokens(asked.spoken),
                temperature=self.temperature,
                abandoned=asked.abandoned,
                timings=prepared.timings,
            )
        return prepared, prepared.reminders.ringing(stream) if prepared.rings_in_stream else stream

    def _reply_tokens(self, spoken: SpokenLimit | None) -> int:
        limit = self.reply_tokens
        return limit if spoken is None else min(limit, spoken.max_tokens)

    def _prepare(
        self,
        state: DeviceState,
        text: str,
        agency: bool,
        limit: SentenceLimit | None = None,
        voice: HeardVoice | None = None,
    ) -> PreparedTurn:
        """`limit`: the answer's (a voice turn's spoken one, a text turn's written one), which
        bounds the turn's notes. `voice`: what a voice turn heard of the voice
        (`memory/voice_enrolment.py`)."""
        timings: dict[str, float] = {}
        clock = Stopwatch(timings)
        household = self.memory.household
        recognised = None if voice is None else voice.person
        speaker = household.speaker(state.agent, state.device_id, text, recognised)
        now = self.memory.now()
        rules = not self.understands_requests()
        answer = answer_request(self.curation, household, state, speaker, text, now, voice, rules)
        if answer is not None:
            clock.lap("memory_request")
            return PreparedTurn(self.store, state, None, [], timings, clock, answer=answer)
        user_message = self.store.append_message(
            state.agent, state.device_id, "user", text, speaker=speaker
        )
        state.remember("user", text, speaker.person_id)
        clock.lap("persist_user")

        viewer = household.viewer(state.agent, speaker)
        history, recall = state.shown(viewer=viewer), partial(self._early.for_turn, state.device_id)
        messages, context = self._prompt(
            state.agent, text, state.sensors, history, agency, limit, viewer, recall
        )
        timings.update({f"retrieve_{k}": v for k, v in context.timings_ms.items()})
        clock.lap("retrieve")
        recalled = self._recalled(text, context.facts, history)
        proven = household.proven(state.device_id)
        owners = owners_at(self.store, state.agent, state.device_id, viewer, proven=proven)
        due = DueReminders(self.store, state.agent, state.device_id, self.memory.clock, owners)
        prepared = PreparedTurn(
            self.store, state, user_message, messages, timings, clock, recalled, reminders=due
        )
        prepared.tools = state.tools
        if not rules:
            prepared.unlog = self._unlog
            turn = RequestTurn(state.agent, state.device_id, viewer, now, user_message.id)
            prepared.tools = with_memory_tools(
                state.tools, memory_tools(self.curation, household, turn)
            )
        return prepared

    def _recalled(
        self, said: str, facts: Sequence[ScoredFact], history: list[ChatMessage]
    ) -> str | None:
        """The server's own answer to the turn (`recall.answer_from_memory`), if it has one;
        a model that made the person up is asked nothing about them."""
        before = [m["content"] for m in history if m["role"] == "user"]
        only_memory = not self.chat.answers_about_the_person
        return answer_from_memory(said, facts, memory_only=only_memory, said_before=before)

    def _prompt(
        self,
        agent: str,
        query: str,
        sensors: SensorReading | None,
        history: list[ChatMessage],
        agency: bool,
        limit: SentenceLimit | None,
        viewer: Viewer = EVERYONE,
        recall: Recall | None = None,
    ) -> tuple[list[ChatMessage], MemoryContext]:
        """The turn's messages, with memory for `query` from the one assembler (the notes
        fitted to the `limit`'s budget; found by `recall`), and that memory."""
        request = ContextRequest(
            max_tokens=None if limit is None else limit.notes_tokens,
            fitted=TURN_SECTIONS,
            history=history,
            viewer=viewer,
            recall=recall,
        )
        context = assemble(self.memory, agent, query, request).context
        messages = turn_messages(
            context,
            sensors,
            history,
            agency=agency,
            context_tokens=self.settings.llm_context_tokens,
            reply_tokens=self.reply_tokens,
            notes_last=self.chat.caches_prompt_prefix,
            language=self.settings.language,
        )
        return (messages if limit is None else limit.instructed(messages)), context

    def prime(
        self,
        device_id: str,
        *,
        agency: bool = False,
        spoken: SpokenLimit | None = None,
        heard: str = "",
        answer: bool = False,
    ) -> None:
        """`_prime`, best effort: a turn that finds nothing read reads its prompt itself, so
        a failure here is logged, never raised. Called after each turn, voice or text, while
        its person hears or reads the answer (`api/voice.py`, `api/device.py`, the xiaozhi
        session), and as the next voice turn's person starts and goes on speaking
        (`voice/listening.py`): the turn then reads only its notes and words."""
        try:
            self._prime(device_id, agency=agency, spoken=spoken, heard=heard, answer=answer)
        except Exception:
            log.debug("reading the next prompt of %s failed", device_id, exc_info=True)

    def _prime(
        self,
        device_id: str,
        *,
        agency: bool,
        spoken: SpokenLimit | None,
        heard: str,
        answer: bool,
    ) -> None:
        """Have the model read the device's next prompt as far as it is known before the turn
        starts: without `heard` (nothing said yet) the standing prompt and the history; with
        the words `heard` so far, also their notes and those words, so a turn whose person
        said no more finds its whole prompt read. Built as `reply` builds it, the history as
        it will be with the words added; read only by a model that caches prompt prefixes,
        while the memory for `heard` is looked up for any model, kept for the turn. To
        `answer` (the person paused after `heard`), a model that `answers_ahead` begins the
        answer to them (`backends/ahead.py`): the turn adopts it if they said no more. The
        model reads nothing while a turn of the device is under way: that turn has stored the
        words and reads its own prompt (a prompt read from its state would not be the
        turn's, and would take the model from it)."""
        with self._early.looking_up(device_id, heard, may_end=answer) as ahead:
            state = self._devices.get(device_id)
            viewer = self.memory.household.viewer_at(state.agent, state.device_id, heard)
            if heard:
                ahead(state.agent, heard, viewer)  # kept for the turn (`memory/early.py`)
            answer = answer and bool(heard) and self._ahead.may_begin(state.tools)
            if not (self.chat.caches_prompt_prefix or answer):
                return
            with self._devices.between_turns(device_id) as idle:
                if idle is None:
                    return
                history = idle.shown(coming=1, viewer=viewer)
                if heard:
                    history.append({"role": "user", "content": heard})
                sensors = idle.sensors if heard else None
                messages, _ = self._prompt(
                    idle.agent, heard, sensors, history, agency, spoken, viewer, ahead
                )
                if answer:  # begun before the turn can look for it
                    tokens = self._reply_tokens(spoken)
                    temperature = self.temperature
                    self._ahead.start(
                        device_id, messages, max_tokens=tokens, temperature=temperature
                    )
        if not answer:
            self.chat.prefill(messages)
