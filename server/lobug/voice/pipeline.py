"""The voice path: recording -> speech-to-text -> should we answer? -> turn -> text-to-speech.

Blocking throughout; the API runs it in worker threads. Speech models load in the background
after start-up (`Speech.load`), so text chat works while they are still loading.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterable, Callable, Generator, Iterator
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from lobug.audio import STREAMING_DATA_SIZE, STT_RATE, Audio, encode_wav, resample, wav_header
from lobug.backends.base import (
    AbandonCheck,
    SpeechNotReady,
    SpeechToText,
    TextToSpeech,
    Transcript,
    TurnEnd,
)
from lobug.config import Settings
from lobug.memory.voice_enrolment import HeardVoice
from lobug.memory.work_queue import Exchange, StreamedExchange
from lobug.speakers.identify import Speaker
from lobug.speakers.live import SpeakerListener
from lobug.speakers.recognition import VoiceRecognition
from lobug.turn.assistant import Assistant
from lobug.turn.decision import Action, ignore_reason
from lobug.turn.prepared import Turn
from lobug.turn.spoken import SpokenLimit
from lobug.turn.streaming import StreamingTurn
from lobug.voice.listening import Heard, WordsHeard, hear_arriving

log = logging.getLogger(__name__)

RECENT_TURNS = 64
WARM_UP_TEXT = "Hello, this is Lo-Bug."


class Speech:
    """The speech models, loaded once; `ready` tells whether both are there. The turn-end
    model (`turn_end`) is optional: without it, silence and the words heard end a turn."""

    def __init__(
        self,
        load_stt: Callable[[], SpeechToText] | None,
        load_tts: Callable[[], TextToSpeech] | None,
        load_turn_end: Callable[[], TurnEnd | None] | None = None,
    ) -> None:
        self._load_stt = load_stt
        self._load_tts = load_tts
        self._load_turn_end = load_turn_end
        self.stt: SpeechToText | None = None
        self.tts: TextToSpeech | None = None
        self.turn_end: TurnEnd | None = None
        self.error: str | None = None if load_stt and load_tts else "speech is not configured"
        self.loading = False

    @classmethod
    def preloaded(cls, stt: SpeechToText | None, tts: TextToSpeech | None) -> Speech:
        speech = cls(None, None)
        speech.stt, speech.tts = stt, tts
        speech.error = None if stt and tts else "speech is not configured"
        return speech

    @property
    def ready(self) -> bool:
        return self.stt is not None and self.tts is not None

    @property
    def wanted(self) -> bool:
        """Whether speech models are configured: loaded, loading or failed to load."""
        return self.ready or (self._load_stt is not None and self._load_tts is not None)

    def load(self) -> None:
        if self._load_stt is None or self._load_tts is None:
            return
        self.loading = True
        started = time.perf_counter()
        try:
            tts = self._load_tts()
            stt = self._load_stt()
            warm_up(stt, tts)
            self.turn_end = self._turn_end_or_none()
            self.tts, self.stt = tts, stt
            log.info("speech ready in %.1f s", time.perf_counter() - started)
        except Exception as exc:
            self.error = f"speech models failed to load: {exc}"
            log.error("%s", self.error, exc_info=True)
        finally:
            self.loading = False

    def _turn_end_or_none(self) -> TurnEnd | None:
        """The turn-end model, or None (logged) where it failed to load: a turn then ends
        as it did without one."""
        if self._load_turn_end is None:
            return None
        try:
            return self._load_turn_end()
        except Exception as exc:
            log.warning("the turn-end model failed to load (%s): silence and words decide", exc)
            return None

    def require(self) -> tuple[SpeechToText, TextToSpeech]:
        if self.stt is None or self.tts is None:
            raise SpeechNotReady(
                "speech models are still loading" if self.loading else self.error or "not ready"
            )
        return self.stt, self.tts


def warm_up(stt: SpeechToText, tts: TextToSpeech) -> None:
    """One synthesis and one transcription of it before speech is ready, so that the first
    turn does not pay for the models' set-up on their first call."""
    pcm = np.concatenate([np.zeros(0, dtype=np.int16), *tts.synthesize(WARM_UP_TEXT)])
    stt.transcribe(resample(pcm.astype(np.float32) / 32768.0, tts.sample_rate, STT_RATE))


@dataclass
class VoiceReply:
    transcription: str
    action: Action
    response: str
    wav: bytes = b""
    turn: Turn | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def exchange(self) -> Exchange | None:
        """The answered exchange to hand to the memory-work queue, if any."""
        return None if self.turn is None else self.turn.exchange

    def as_contract(self) -> dict[str, str]:
        """The body devices in the field read."""
        return {
            "transcription": self.transcription,
            "response": self.response,
            "action": self.action,
            "audio_b64": base64.b64encode(self.wav).decode("ascii") if self.wav else "",
        }


@dataclass
class StreamedVoice:
    """A turn whose audio is produced sentence by sentence; see `Voice.answer_streaming`."""

    turn_id: str
    transcription: str
    action: Action
    sample_rate: int
    streaming: StreamingTurn | None
    timings_ms: dict[str, float]
    stored: StreamedExchange = field(default_factory=StreamedExchange)


class Voice:
    def __init__(
        self,
        settings: Settings,
        assistant: Assistant,
        speech: Speech,
        recognition: VoiceRecognition | None = None,
    ) -> None:
        self.settings = settings
        self.assistant = assistant
        self.speech = speech
        self.recognition = recognition  # who speaks, by voice (off: None)
        self.spoken = SpokenLimit(
            settings.voice_max_sentences,
            settings.voice_max_tokens,
            max_words=settings.voice_max_words,
            notes_tokens=settings.voice_notes_tokens,
        )
        self._turns: OrderedDict[str, dict[str, object]] = OrderedDict()
        self._turns_lock = threading.Lock()

    @property
    def output_rate(self) -> int:
        _, tts = self.speech.require()
        return self.settings.tts_sample_rate or tts.sample_rate

    # ------------------------------------------------------------------ whole reply

    def reply(
        self,
        device_id: str,
        audio: Audio,
        timings: dict[str, float],
        abandoned: AbandonCheck | None = None,
    ) -> VoiceReply:
        transcript = self.transcribe(audio, timings)
        if _judged(transcript, audio.seconds) is not None:
            return VoiceReply(transcript.text, "ignore", "", timings_ms=timings)
        voice = self._heard(device_id, self._speaker(device_id, audio))
        turn, pcm = self._said_whole(device_id, transcript.text, abandoned, timings, voice)
        timings.update(turn.timings_ms)
        wav = b""
        if turn.action == "respond":
            started = time.perf_counter()
            wav = encode_wav(np.concatenate([np.zeros(0, dtype=np.int16), *pcm]), self.output_rate)
            timings["encode"] = _ms_since(started)
        return VoiceReply(
            transcript.text, turn.action, turn.response, wav, turn=turn, timings_ms=timings
        )

    def _said_whole(
        self,
        device_id: str,
        text: str,
        abandoned: AbandonCheck | None,
        timings: dict[str, float],
        voice: HeardVoice,
    ) -> tuple[Turn, list[np.ndarray]]:
        """The turn's answer said as the streamed path says it: each sentence checked by the
        reply guard, then synthesized as it comes (`tts` is their sum). Stored when the model
        has written the sentences a voice turn may say: it stops there rather than at its
        token cap."""
        pcm: list[np.ndarray] = []
        synthesis = 0.0
        with self.assistant.reply_streaming(
            device_id, text, agency=True, abandoned=abandoned, spoken=self.spoken, voice=voice
        ) as streaming:
            for sentence in self.checked_sentences(streaming):
                started = time.perf_counter()
                pcm.extend(self.synthesize(sentence))
                synthesis += _ms_since(started)
        assert streaming.turn is not None  # stored on leaving the block, or it raised
        if pcm:
            timings["tts"] = synthesis
        return streaming.turn, pcm

    async def hear_arriving(
        self,
        device_id: str,
        pieces: AsyncIterable[bytes],
        timings: dict[str, float],
        words_heard: WordsHeard | None = None,
        *,
        read_standing: bool = True,
    ) -> Heard:
        """A recording heard while its bytes still arrive (`listening.hear_arriving`), the
        device's prompt read ahead meanwhile (the standing prompt at once only when
        `read_standing`). Raises AudioError."""
        stt, _ = self.speech.require()
        return await hear_arriving(
            pieces,
            stt,
            partial(self.prime, device_id),
            max_seconds=self.settings.max_audio_seconds,
            max_bytes=self.settings.max_audio_bytes,
            timings=timings,
            listener=self._listener(device_id),
            words_heard=words_heard,
            read_standing=read_standing,
        )

    def hear(self, device_id: str, audio: Audio, timings: dict[str, float]) -> Heard:
        """A whole recording heard."""
        speaker = self._speaker(device_id, audio)
        return Heard(self.transcribe(audio, timings), audio.seconds, speaker)

    def _listener(self, device_id: str) -> SpeakerListener | None:
        agent = self.settings.agent_for_device(device_id)
        return None if self.recognition is None else self.recognition.listener(agent)

    def _speaker(self, device_id: str, audio: Audio) -> Speaker | None:
        """Who spoke a whole recording (None without recognition or enough speech)."""
        agent = self.settings.agent_for_device(device_id)
        return None if self.recognition is None else self.recognition.speaker_of(agent, audio)

    def transcribe(self, audio: Audio, timings: dict[str, float]) -> Transcript:
        stt, _ = self.speech.require()
        started = time.perf_counter()
        samples = resample(audio.samples, audio.sample_rate, STT_RATE)
        transcript = stt.transcribe(samples) if len(samples) else Transcript("")
        timings["stt"] = _ms_since(started)
        return transcript

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        """int16 PCM at the output rate, one piece per sentence."""
        _, tts = self.speech.require()
        for pcm in tts.synthesize(text):
            if self.output_rate != tts.sample_rate:
                floats = resample(
                    pcm.astype(np.float32) / 32768.0, tts.sample_rate, self.output_rate
                )
                pcm = (np.clip(floats, -1, 1) * 32767).astype(np.int16)
            yield pcm

    # ------------------------------------------------------------------ streamed reply

    def prime(self, device_id: str, heard: str = "", answer: bool = False) -> None:
        """While the device's person is still speaking: the model reads the prompt with the
        words `heard` so far, and may `answer` them (`Assistant.prime`). Best effort."""
        self.assistant.prime(device_id, agency=True, spoken=self.spoken, heard=heard, answer=answer)

    def answer_streaming(
        self,
        device_id: str,
        transcript: Transcript,
        seconds: float,
        timings: dict[str, float],
        abandoned: AbandonCheck | None = None,
        speaker: Speaker | None = None,
    ) -> StreamedVoice:
        """Start the answer to what was heard in a recording of `seconds` (already
        transcribed, e.g. while it was uploaded); the audio comes from `stream_audio`. The
        turn's summary names the `speaker` recognised by voice, if any, and the turn is theirs
        when they are a person of the device's household (`memory/people.py`)."""
        voice = self._heard(device_id, speaker)
        streamed = self._answer_streaming(device_id, transcript, seconds, timings, abandoned, voice)
        if speaker is not None:
            self._note_speaker(streamed.turn_id, speaker)
        return streamed

    def _heard(self, device_id: str, speaker: Speaker | None) -> HeardVoice:
        """What the turn heard of the voice (`Household.heard`)."""
        agent = self.settings.agent_for_device(device_id)
        return self.assistant.memory.household.heard(agent, speaker, self.recognition is not None)

    def _answer_streaming(
        self,
        device_id: str,
        transcript: Transcript,
        seconds: float,
        timings: dict[str, float],
        abandoned: AbandonCheck | None,
        voice: HeardVoice | None = None,
    ) -> StreamedVoice:
        reason = _judged(transcript, seconds)
        if reason is not None:
            turn_id = uuid.uuid4().hex
            self._record(turn_id, transcript.text, "ignore", "", done=True)
            return self._without_audio(turn_id, transcript.text, "ignore", timings)
        return self.answer_words(device_id, transcript.text, timings, abandoned, voice)

    def answer_words(
        self,
        device_id: str,
        text: str,
        timings: dict[str, float],
        abandoned: AbandonCheck | None = None,
        voice: HeardVoice | None = None,
    ) -> StreamedVoice:
        """Start the spoken answer to words sent as text (a xiaozhi `listen detect`), or heard
        and judged worth answering (said by `voice`, a person of the household, if known)."""
        turn_id = uuid.uuid4().hex
        transcript = Transcript(text)
        streaming = self.assistant.reply_streaming(
            device_id,
            transcript.text,
            agency=True,
            abandoned=abandoned,
            spoken=self.spoken,
            voice=voice,
        )
        timings.update(streaming.timings_ms)
        if streaming.action != "respond":
            turn = streaming.close()  # known from its prefix: stored, the device freed
            action, response = (turn.action, turn.response) if turn else ("ignore", "")
            self._record(turn_id, transcript.text, action, response, done=True)
            return self._without_audio(turn_id, transcript.text, action, timings)
        self._record(turn_id, transcript.text, "respond", "", done=False)
        return StreamedVoice(
            turn_id, transcript.text, "respond", self.output_rate, streaming, timings
        )

    def stream_audio(self, streamed: StreamedVoice) -> Generator[bytes, None, None]:
        """A WAV header of unknown length, then PCM sentence by sentence as the model writes."""
        try:
            # Inside the try: a device that hangs up right after the header must still get
            # its turn finished, or the next turn of that device would wait for ever.
            yield wav_header(streamed.sample_rate, STREAMING_DATA_SIZE)
            if streamed.streaming is None:
                return
            for sentence in self.checked_sentences(streamed.streaming):
                for pcm in self.synthesize(sentence):
                    yield pcm.astype("<i2").tobytes()
        finally:
            self.finish_stream(streamed)

    def checked_sentences(self, streaming: StreamingTurn) -> Iterator[str]:
        """The answer's sentences as far as a voice turn may say them, each checked by the
        reply guard before it is spoken (`StreamingTurn.guarded`): at the first refused one
        the model is stopped; what was said stands, or the turn's second try is said."""
        yield from streaming.guarded(self.spoken.sentences).passed(streaming.pieces())

    def finish_stream(self, streamed: StreamedVoice) -> None:
        """Stop the model, persist what was said and free the device; settle `stored`.
        Safe to call twice."""
        if streamed.streaming is None:
            return
        turn = None
        try:
            turn = streamed.streaming.close()
            if turn is not None:
                self._record(
                    streamed.turn_id, streamed.transcription, turn.action, turn.response, done=True
                )
        finally:
            streamed.stored.settle(None if turn is None else turn.exchange)

    def _without_audio(
        self, turn_id: str, transcription: str, action: Action, timings: dict[str, float]
    ) -> StreamedVoice:
        """A streamed turn that ended before any audio (ignore, react): nothing to learn from."""
        streamed = StreamedVoice(turn_id, transcription, action, self.output_rate, None, timings)
        streamed.stored.settle(None)
        return streamed

    # ------------------------------------------------------------------ sidecar

    def _record(
        self, turn_id: str, transcription: str, action: str, response: str, *, done: bool
    ) -> None:
        with self._turns_lock:
            self._turns[turn_id] = self._turns.get(turn_id, {}) | {
                "turn_id": turn_id,
                "transcription": transcription,
                "action": action,
                "response": response,
                "done": done,
            }
            self._turns.move_to_end(turn_id)
            while len(self._turns) > RECENT_TURNS:
                self._turns.popitem(last=False)

    def _note_speaker(self, turn_id: str, speaker: Speaker) -> None:
        with self._turns_lock:
            if turn_id in self._turns:
                self._turns[turn_id]["speaker"] = list(speaker.as_tuple())

    def turn_summary(self, turn_id: str) -> dict[str, object] | None:
        with self._turns_lock:
            found = self._turns.get(turn_id)
            return dict(found) if found else None


def _judged(transcript: Transcript, seconds: float) -> str | None:
    """Why the recording is not answered, or None."""
    reason = ignore_reason(transcript, seconds)
    if reason is not None:
        log.info("ignored a %.1f s recording: %s", seconds, reason)
        log.debug("ignored transcript: %r", transcript.text)
    return reason


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000
