"""One xiaozhi connection: the hello, then listening, turns and barge-in.

The device's Opus frames are decoded to 16 kHz PCM and handed, as a WAV stream, to the same
hearing as the HTTP path's (`Voice.hear_arriving`: transcription while the person speaks,
the prompt read ahead); a turn is the HTTP path's turn (`Voice.answer_streaming`: the same
memory, reply guard, log and memory work), only its sound travels as Opus with `tts`
messages around each sentence. The turn ends at `listen stop`, or in `auto` and `realtime`
modes where the server's endpointing says (`lobug.voice.endpointing`). `abort` (or, in
`realtime`, speech while the answer plays) stops sending at once, stops the model and the
synthesis after the step in progress, and stores what was said, marked interrupted."""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import numpy as np

from lobug.audio import STREAMING_DATA_SIZE, wav_header
from lobug.backends.base import SpeechNotReady, ToolBox, VoiceActivity
from lobug.services import Services
from lobug.turn.devices import DeviceBusy
from lobug.voice.endpointing import Ask, Endpointer, asked_in_thread
from lobug.voice.listening import Heard
from lobug.voice.pipeline import StreamedVoice
from lobug.xiaozhi import frames, messages, offered, unasked
from lobug.xiaozhi.limits import (
    HELLO_TIMEOUT_S,
    IDLE_TIMEOUT_S,
    MAX_FRAMES_PER_S,
    MAX_MCP_TOOLS,
    MAX_UTTERANCE_S,
    RATE_WINDOW_S,
    SAMPLE_RATE_IN,
    TOOL_CALL_S,
    CloseCode,
    ProtocolError,
)
from lobug.xiaozhi.opus import OpusDecoder
from lobug.xiaozhi.speaking import Finish, Reply
from lobug.xiaozhi.timing import TurnClock

log = logging.getLogger(__name__)

EMOTION_RESPOND = ("neutral", "🙂")
EMOTION_REACT = ("happy", "😊")
BUSY = "Still answering you: ask again when I'm done."
MCP_INITIALIZE_ID, MCP_TOOLS_ID = 1, 2


class Link(Protocol):
    """The WebSocket as the session needs it (a Starlette WebSocket in `routes`)."""

    async def receive(self) -> str | bytes | None: ...  # None: the device closed

    async def send_text(self, text: str) -> None: ...

    async def send_bytes(self, data: bytes) -> None: ...


@dataclass
class FrameRate:
    """Frames received in the last `RATE_WINDOW_S`; ProtocolError past the limit."""

    times: list[float] = field(default_factory=list)

    def count(self, now: float) -> None:
        self.times = [t for t in self.times if now - t < RATE_WINDOW_S]
        self.times.append(now)
        if len(self.times) > MAX_FRAMES_PER_S * RATE_WINDOW_S:
            raise ProtocolError(CloseCode.POLICY_VIOLATION, "audio frames arrive too fast")


class Utterance:
    """What the person says in one turn, heard while it arrives."""

    def __init__(
        self,
        svc: Services,
        device: str,
        mode: str,
        vad: Callable[[], VoiceActivity],
        on_end: Callable[[Utterance], None],
        *,
        answering: bool = False,
    ) -> None:
        """`answering`: it begins while the last turn is answered (`realtime` listens on);
        its first bytes leave that turn's prompt read (`listening.ReadAhead`)."""
        self.mode = mode
        self._on_end = on_end
        self.timings: dict[str, float] = {}
        self.clock = TurnClock()
        self.endpointer = (
            Endpointer(vad(), self._turn_end_asker(svc)) if mode in ("auto", "realtime") else None
        )
        self._pcm: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._samples = 0
        self.closed = False
        self.last_voice_at = 0.0  # perf_counter of the frame that held the last speech
        # Speech again after a pause: the answer begun in the pause is not the turn's.
        self._spoke_on = svc.assistant.session(device).spoke_again
        words = self._heard if self.endpointer else None
        self.hearing: asyncio.Task[Heard] = asyncio.create_task(
            svc.voice.hear_arriving(
                device, self._pieces(), self.timings, words, read_standing=not answering
            )
        )

    def _turn_end_asker(self, svc: Services) -> Ask | None:
        """The turn-end model asked in a worker thread, where there is one."""
        model = svc.speech.turn_end
        return None if model is None else asked_in_thread(model, self._answered)

    def _answered(self) -> None:
        """The turn-end model answered: its answer may end the turn on its own."""
        if self.endpointer is not None and self.endpointer.ended and not self.closed:
            self._on_end(self)

    def _heard(self, words: str, covered: int) -> None:
        """The words so far (`listening.WordsHeard`): they may end the turn on their own."""
        if self.endpointer is not None and not self.closed:
            self.clock.mark("words", again=True)  # the last words before the end
            self.endpointer.heard(words, covered)
            if self.endpointer.ended:
                self._on_end(self)

    @property
    def ended(self) -> bool:
        return self.closed or (self.endpointer is not None and self.endpointer.ended)

    @property
    def spoke(self) -> bool:
        return self.endpointer is not None and self.endpointer.spoke

    @property
    def barging_in(self) -> bool:
        return self.endpointer is not None and self.endpointer.barging_in

    def add(self, pcm: np.ndarray) -> None:
        if self.closed:
            return
        self._pcm.put_nowait(pcm.astype("<i2").tobytes())
        self._samples += len(pcm)
        if self.endpointer is not None:
            voiced_before = self.endpointer.last_voice_s
            self.endpointer.feed(pcm)
            if self.endpointer.last_voice_s > voiced_before:
                self.last_voice_at = time.perf_counter()
                self._spoke_on()
        if self._samples >= MAX_UTTERANCE_S * SAMPLE_RATE_IN:
            self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._pcm.put_nowait(None)

    async def _pieces(self) -> AsyncIterator[bytes]:
        yield wav_header(SAMPLE_RATE_IN, STREAMING_DATA_SIZE)
        while (piece := await self._pcm.get()) is not None:
            yield piece


class Session:
    """One connection of one device; `run` until it closes."""

    def __init__(
        self,
        svc: Services,
        link: Link,
        device: str,
        version: int,
        vad: Callable[[], VoiceActivity],
    ) -> None:
        self.svc, self.link, self.device, self.version = svc, link, device, version
        self.vad = vad
        self.id = uuid.uuid4().hex
        self.rate = svc.settings.xiaozhi.output_rate
        self.tools: list[dict[str, Any]] = []  # the device's MCP tools
        self.offered: ToolBox | None = None  # ...as its turns' model is offered them
        self.utterance: Utterance | None = None
        self.reply: Reply | None = None
        self._decoder: OpusDecoder | None = None
        self._frames = FrameRate()
        self._tasks: set[asyncio.Task[None]] = set()
        self._sending = asyncio.Lock()
        self._gone = threading.Event()  # the device has left: a turn not started is dropped
        self._calls: dict[int, asyncio.Future[dict[str, Any]]] = {}  # tools/call by id
        self._call_ids = itertools.count(MCP_TOOLS_ID + 1)
        self._ringing: asyncio.Task[None] | None = None
        self.left = asyncio.Event()  # set when the device has gone (what it was told is stored)

    # ------------------------------------------------------------------ the connection

    async def run(self) -> tuple[CloseCode, str]:
        """Serve the device until it leaves; the close code and reason to close with."""
        try:
            await self._greet()
            self._ringing = asyncio.create_task(unasked.ring_reminders(self))
            while (data := await self._receive(IDLE_TIMEOUT_S, "idle")) is not None:
                await self._on_data(data)
            return CloseCode.NORMAL, ""
        except ProtocolError as exc:
            log.info("xiaozhi %s closed: %s", self.device, exc.reason)
            return exc.code, exc.reason
        finally:
            await self._end()

    async def _receive(self, timeout_s: float, what: str) -> str | bytes | None:
        try:
            return await asyncio.wait_for(self.link.receive(), timeout_s)
        except TimeoutError:
            raise ProtocolError(CloseCode.POLICY_VIOLATION, f"{what} timeout") from None

    async def _greet(self) -> None:
        data = await self._receive(HELLO_TIMEOUT_S, "hello")
        if data is None:
            return
        hello = messages.parse(data) if isinstance(data, str) else None
        if not isinstance(hello, messages.Hello):
            raise ProtocolError(CloseCode.PROTOCOL_ERROR, "the first message must be a hello")
        self._decoder = OpusDecoder(hello.audio.sample_rate)
        await self.send(messages.server_hello(self.id, self.rate))
        if hello.mcp:
            await self._ask_tools()

    async def _ask_tools(self) -> None:
        init = messages.mcp_request(
            MCP_INITIALIZE_ID,
            "initialize",
            {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "lobug"}},
        )
        await self.send(messages.mcp(self.id, init))
        await self.send(messages.mcp(self.id, messages.mcp_request(MCP_TOOLS_ID, "tools/list")))

    async def _end(self) -> None:
        self._gone.set()
        self.left.set()
        offered.withdraw_tools(self)
        if self._ringing is not None:  # a reminder being said is stored as far as it was said
            await asyncio.wait({self._ringing}, timeout=30)
        if self.reply is not None:
            self.reply.abort()
        if self.utterance is not None:
            self.utterance.close()
        for task in list(self._tasks):  # the turn closes and stores what was said
            await asyncio.wait({task}, timeout=30)

    async def send(self, message: dict[str, Any]) -> None:
        async with self._sending:
            await self.link.send_text(messages.dumps(message))

    async def send_audio(self, packet: bytes) -> None:
        async with self._sending:
            await self.link.send_bytes(frames.pack(self.version, packet))

    # ------------------------------------------------------------------ what arrives

    async def _on_data(self, data: str | bytes) -> None:
        if isinstance(data, str):
            await self._on_message(messages.parse(data))
            return
        frame = frames.unpack(self.version, data)
        if frame.kind == frames.JSON:
            await self._on_message(messages.parse(frame.payload.decode("utf-8", "replace")))
            return
        self._frames.count(time.monotonic())
        self._on_audio(frame.payload)

    async def _on_message(self, message: messages.Message) -> None:
        if isinstance(message, messages.Listen):
            await self._on_listen(message)
        elif isinstance(message, messages.Abort):
            self._barge_in()
        elif isinstance(message, messages.Mcp):
            self._on_mcp(message.payload)
        elif isinstance(message, messages.Hello):
            raise ProtocolError(CloseCode.PROTOCOL_ERROR, "a second hello")
        else:
            log.debug("xiaozhi %s: %s message let pass", self.device, message.type)

    async def _on_listen(self, listen: messages.Listen) -> None:
        if listen.state == "start":
            self._start_listening(listen.mode)
        elif listen.state == "stop":
            self._stop_listening()
        elif listen.text:  # detect: a wake word, or words typed on the device
            self._spawn(self._answer_words(listen.text))

    def _start_listening(self, mode: str, *, answering: bool = False) -> None:
        if self.utterance is not None and not self.utterance.ended:
            self.utterance.close()  # a new start replaces it unanswered
            self.utterance.hearing.cancel()
        try:
            self.svc.speech.require()
        except SpeechNotReady as exc:
            raise ProtocolError(CloseCode.TRY_AGAIN_LATER, str(exc)) from None
        self.utterance = Utterance(
            self.svc, self.device, mode, self.vad, self._end_utterance, answering=answering
        )
        log.debug("xiaozhi %s listens (%s)", self.device, mode)

    def _on_audio(self, packet: bytes) -> None:
        utterance = self.utterance
        if utterance is None or self._decoder is None:
            return  # audio while nobody listens (the device's closing frames): dropped
        utterance.add(self._decoder.decode(packet))
        if utterance.mode == "realtime" and utterance.barging_in and self.reply is not None:
            self._barge_in()  # the person speaks over the answer
        if utterance.ended:
            self._end_utterance(utterance)

    def _stop_listening(self) -> None:
        if self.utterance is not None:
            self._end_utterance(self.utterance)

    def _end_utterance(self, utterance: Utterance) -> None:
        """The turn's words are all there: answer them (once)."""
        if self.utterance is not utterance:
            return
        self.utterance = None
        utterance.close()
        if utterance.last_voice_at:
            utterance.clock.mark("last_voice", utterance.last_voice_at)
        utterance.clock.mark("ended")
        log.debug("xiaozhi %s: the utterance ended", self.device)
        self._spawn(self._answer_heard(utterance))
        if utterance.mode == "realtime" and not self._gone.is_set():
            # it listens on, also while the answer plays
            self._start_listening("realtime", answering=True)

    def _on_mcp(self, payload: dict[str, Any]) -> None:
        call_id = payload.get("id")
        if isinstance(call_id, int) and call_id in self._calls:
            if not self._calls[call_id].done():
                self._calls[call_id].set_result(payload)
            return
        result = payload.get("result")
        if payload.get("id") == MCP_TOOLS_ID and isinstance(result, dict):
            tools = result.get("tools")
            if isinstance(tools, list):
                self.tools = [t for t in tools if isinstance(t, dict)][:MAX_MCP_TOOLS]
                log.info("xiaozhi %s offers %d tools", self.device, len(self.tools))
                offered.offer_tools(self)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """The device's result of its tool `name` (None: an error, or none in `TOOL_CALL_S`)."""
        call_id = next(self._call_ids)
        answer = self._calls[call_id] = asyncio.get_running_loop().create_future()
        params = {"name": name, "arguments": arguments}
        try:
            await self.send(
                messages.mcp(self.id, messages.mcp_request(call_id, "tools/call", params))
            )
            return unasked.tool_result(await asyncio.wait_for(answer, TOOL_CALL_S))
        except TimeoutError:
            return None
        finally:
            self._calls.pop(call_id, None)

    @property
    def idle(self) -> bool:
        """Nothing being said, nobody speaking: Lo-Bug may speak first."""
        heard = self.utterance
        return self.reply is None and (heard is None or not heard.spoke)

    def _barge_in(self) -> None:
        if self.reply is not None:
            self.reply.abort()

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ turns

    async def _answer_heard(self, utterance: Utterance) -> None:
        try:
            heard = await utterance.hearing
        except asyncio.CancelledError:
            return
        except Exception as exc:
            log.info("xiaozhi %s: recording not heard: %s", self.device, exc)
            return
        utterance.clock.mark("heard")
        if heard.transcript.text:
            await self.send(messages.stt(self.id, heard.transcript.text))
            if await unasked.set_device(self, heard.transcript.text):
                return
        await self._answer(
            partial(self.svc.voice.answer_streaming, speaker=heard.speaker),
            self.device,
            heard.transcript,
            heard.seconds,
            utterance.timings,
            clock=utterance.clock,
        )

    async def _answer_words(self, text: str) -> None:
        await self.send(messages.stt(self.id, text))
        if not await unasked.set_device(self, text):
            await self._answer(self.svc.voice.answer_words, self.device, text, {})

    async def _answer(
        self, start: Callable[..., StreamedVoice], *args: Any, clock: TurnClock | None = None
    ) -> None:
        try:  # waited for here, on the loop: never on a worker thread (turn/devices.py)
            admitted = await self.svc.assistant.session(self.device).admit()
        except DeviceBusy as exc:
            log.info("xiaozhi %s: a turn refused: %s", self.device, exc)
            await self.send(messages.alert(self.id, "busy", BUSY))
            return
        try:
            await self._answer_admitted(start, args, clock or TurnClock())
        finally:
            admitted.leave()

    async def _answer_admitted(
        self, start: Callable[..., StreamedVoice], args: tuple[Any, ...], clock: TurnClock
    ) -> None:
        stop = threading.Event()  # the answer's: an abort stops the model at its next token
        try:
            streamed = await asyncio.to_thread(start, *args, partial(self._stopped, stop))
        except Exception:
            log.exception("xiaozhi %s: the turn failed", self.device)
            return
        clock.mark("started")
        clock.turn_ms = streamed.timings_ms
        try:
            await self._say(streamed, stop, clock)
        finally:
            clock.log(self.device)
            exchange = await asyncio.to_thread(streamed.stored.wait)
            if exchange is not None:
                self.svc.memory_work.submit(exchange)
            self._spawn(asyncio.to_thread(self.svc.voice.prime, self.device))

    def _stopped(self, stop: threading.Event) -> bool:
        return self._gone.is_set() or stop.is_set()

    async def _say(self, streamed: StreamedVoice, stop: threading.Event, clock: TurnClock) -> None:
        if (turn := streamed.streaming) is None:
            if streamed.action == "react":
                await self.send(messages.llm_emotion(self.id, *EMOTION_REACT))
            return
        voice = self.svc.voice

        def spoken() -> Iterator[str | np.ndarray]:  # as the reply guard lets it be said
            for sentence in voice.checked_sentences(turn):
                if stop.is_set():
                    return  # aborted while the model wrote it: neither said nor synthesized
                yield sentence
                yield from voice.speech.require()[1].synthesize(sentence)

        def finish(said: list[str], cut: bool) -> None:  # cut off: only what was said, marked
            if cut:
                turn.interrupt(" ".join(said))
            voice.finish_stream(streamed)

        def logged(said: list[str]) -> None:  # in the log as it is said
            turn.said_so_far(" ".join(said))

        await self.play(Reply(self, spoken, finish, stop, clock, logged))

    async def announce(self, text: str, finish: Finish) -> None:
        """Say `text` (no model asked): a due reminder, a device setting changed."""
        tts = self.svc.voice.speech.require()[1]
        await self.play(Reply(self, lambda: iter([text, *tts.synthesize(text)]), finish))

    async def play(self, reply: Reply) -> None:
        if self.reply is not None:
            self.reply.abort()  # a newer turn replaces an answer still being said
        self.reply = reply
        loop = asyncio.get_running_loop()
        producing = loop.run_in_executor(None, reply.produce, loop)
        try:
            await self.send(messages.llm_emotion(self.id, *EMOTION_RESPOND))
            await self.send(messages.tts(self.id, "start"))
            await reply.send(self.rate, self.svc.speech.require()[1].sample_rate)
        finally:
            reply.abort()  # the connection failed mid-answer: what was sent is what was said
            try:
                await producing
            finally:  # cancelled meanwhile (the server stopping): still stored, device freed
                await asyncio.to_thread(reply.close)
            if self.reply is reply:
                self.reply = None
