"""Transcription while the person speaks: a recording uploaded as it is made (an `audio/wav`
body with chunked transfer) is read as it arrives, and each stretch of speech that has ended
in a pause is transcribed at once, while the rest is still being recorded. When the upload
ends, only what followed the last pause is left to transcribe, and nothing at all when that is
the silence a device records before it stops (its own end-of-speech detection).

Pauses are found by level, frame by frame (cheap enough to run on every chunk): a frame is
speech when it is well above the quietest frame heard so far and above an absolute floor. A
missed pause only means a later transcription; a recording with no speech found by level is
still transcribed whole, so whisper's own voice detection has the last word. A shorter pause
(between sentences) ends a stretch too when the words heard at it end a sentence, so that what
is left at the end is the last sentence, not all that was said since the last long pause.

`hear_arriving` runs this over a recording's bytes as they come (from any transport: an HTTP
body today), with `ReadAhead` having the model read the answer's prompt meanwhile."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

from lobug.audio import STT_RATE, AudioError, CorruptAudio, check_audio_size, parse_wav, resample
from lobug.backends.base import SpeechToText, Transcript
from lobug.language import endings
from lobug.speakers.identify import Speaker
from lobug.speakers.live import SpeakerListener

log = logging.getLogger(__name__)

FRAME_SAMPLES = STT_RATE * 30 // 1000
PAUSE_FRAMES = 8  # 240 ms of quiet ends a stretch of speech
# A pause this long (180 ms) whose words end a sentence ends a stretch too (`_kept_if_whole`):
# people pause so between sentences (piper 180-300 ms), rarely inside one (90-150 ms). In 50
# clips of two sentences, what was left at the end of speech took 163 ms (median; p90 193)
# instead of 205 (p90 322), for 17 word errors in 750 instead of 14.
KEPT_PAUSE_FRAMES = 6
KEEP_FRAMES = 4  # of the pause, kept at the end of the stretch (whisper likes a little room)
# A pause is heard at once, as soon as it is as long as what a stretch keeps of it: those are
# the samples of the stretch if the pause goes on to end it, so its transcription is the
# stretch's (`pausing`), ready before the stretch is cut; and its words, when they end a
# sentence, may be answered already (`ReadAhead.paused`).
MIN_LEVEL = 0.006  # mean |sample| of float audio; quieter is never speech
FLOOR_RATIO = 3.0  # speech stands this far above the quietest frame
HEADER_PATIENCE = 4096  # bytes to wait for a WAV header with its data chunk
# Audio arriving this much faster than it could have been spoken was recorded before: it is
# transcribed whole at the end (one transcription costs less than several).
LIVE_SLACK_S = 0.5
# Speech that has gone on this long without a pause is heard before it ends (`partial`), and
# again each time it has gone on as long again: its words so far let the model read ahead and
# memory be looked up (`memory/early.py`) while the person still speaks.
PARTIAL_AFTER_S = 1.0


@dataclass(frozen=True)
class Stretch:
    """Samples [start, end) of the 16 kHz recording."""

    start: int
    end: int


class LiveRecording:
    """A WAV arriving in pieces: `add` each piece and transcribe the stretches it returns;
    `finish` when the body has ended, then `heard` with the transcripts in order."""

    def __init__(self, max_seconds: float) -> None:
        self.max_seconds = max_seconds
        self._data = bytearray()
        self._samples: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self._cursor = 0  # where the next stretch starts
        self._found_speech = False
        self._live = False  # the last piece came at the pace of speech
        self._partial_from = -1  # the stretch start a partial was given for
        self._partial_end = 0  # and where that partial ended
        self._paused_at = -1  # the end of the last stretch heard at its pause (`pausing`)
        self._ended = False  # the body has ended (`finish`)

    @property
    def seconds(self) -> float:
        return len(self._samples) / STT_RATE

    def add(self, piece: bytes, elapsed_s: float) -> list[Stretch]:
        """Take the next piece of the body, `elapsed_s` after the first one; the stretches
        of speech it completed (none while the audio comes faster than speech)."""
        self._data += piece
        self._live = self._decode(finished=False) and self.seconds <= elapsed_s + LIVE_SLACK_S
        if not self._live:
            return []
        stretch = self._next_stretch()
        return [] if stretch is None else [stretch]

    def partial(self) -> Stretch | None:
        """The stretch in progress, when it has gone on for `PARTIAL_AFTER_S` without a
        pause (and again each `PARTIAL_AFTER_S` more) while the audio comes at the pace of
        speech: its words, heard early, let the model read ahead (the stretch is still
        transcribed whole once it ends). Not while the person pauses: the pause is heard as
        the stretch it may end (`pausing`), and a guess then would only take a core from the
        turn that may begin."""
        if not self._live:
            return None
        start = self._partial_end if self._partial_from == self._cursor else self._cursor
        if (len(self._samples) - start) / STT_RATE < PARTIAL_AFTER_S or self._quiet_now():
            return None
        self._partial_from, self._partial_end = self._cursor, len(self._samples)
        return Stretch(self._cursor, len(self._samples))

    def _quiet_now(self) -> bool:
        """Whether the last whole frame heard is quiet: below the level of speech, or a
        `FLOOR_RATIO` quieter than the loudest of the stretch in progress (the floor is
        not known before a quiet frame has been heard)."""
        levels = self._levels(self._cursor)
        if len(levels) == 0:
            return True
        last = float(levels[-1])
        return last < MIN_LEVEL or last * FLOOR_RATIO <= float(levels.max())

    def pausing(self) -> Stretch | None:
        """The stretch in progress once the person has paused for `KEEP_FRAMES` (once a
        pause, while the audio comes at the pace of speech): the very samples the stretch
        will have if the pause goes on to end it (`_next_stretch`)."""
        if not self._live:
            return None
        speech = self._levels(self._cursor) > self._threshold()
        voiced = np.flatnonzero(speech)
        if len(voiced) == 0 or len(speech) - voiced[-1] - 1 < KEEP_FRAMES:
            return None
        end = self._cursor + (int(voiced[-1]) + 1 + KEEP_FRAMES) * FRAME_SAMPLES
        if end == self._paused_at:
            return None
        self._paused_at = end
        return Stretch(self._cursor, end)

    def keep(self, pause: Stretch) -> bool:
        """End the stretch in progress at `pause` (heard at its pause, `pausing`, as a whole
        sentence) though the person spoke on, once the pause has lasted `KEPT_PAUSE_FRAMES`:
        what is left at the end of the turn is its last sentence. False when the stretch was
        cut since, the recording has ended, or the pause is (still) shorter."""
        if self._ended or pause.start != self._cursor:
            return False
        if self._pause_frames(pause)[0] < KEPT_PAUSE_FRAMES:
            return False
        self._cursor, self._found_speech = pause.end, True
        return True

    def gone_by(self, pause: Stretch) -> bool:
        """Whether `pause` can no longer be kept (`keep`): the stretch was cut since, the
        recording has ended, or the person spoke again before `KEPT_PAUSE_FRAMES`."""
        if self._ended or pause.start != self._cursor:
            return True
        quiet, going_on = self._pause_frames(pause)
        return quiet < KEPT_PAUSE_FRAMES and not going_on

    def finish(self) -> list[Stretch]:
        """The body has ended: what is left to transcribe (raises AudioError for a body that
        is not a WAV)."""
        self._ended = True
        if not self._data:
            return []
        self._decode(finished=True)
        rest = Stretch(self._cursor, len(self._samples))
        if rest.end <= rest.start:
            return []
        if self._found_speech and not self._has_speech(rest):
            return []  # the silence a device records before it stops
        return [rest]

    def samples(self, stretch: Stretch) -> npt.NDArray[np.float32]:
        return self._samples[stretch.start : stretch.end]

    def recorded(self) -> npt.NDArray[np.float32]:
        """The 16 kHz samples decoded so far."""
        return self._samples

    def heard(self, transcripts: list[Transcript]) -> Transcript:
        """The transcripts of the stretches, in order, as one."""
        texts = [t.text for t in transcripts if t.text]
        segments = tuple(s for t in transcripts for s in t.segments)
        language = next((t.language for t in transcripts if t.language), "")
        return Transcript(" ".join(texts).strip(), segments, language)

    def _decode(self, *, finished: bool) -> bool:
        """Decode what has arrived; False while the header is still incomplete."""
        try:
            audio = parse_wav(bytes(self._data), max_seconds=self.max_seconds)
        except CorruptAudio:
            if finished or len(self._data) > HEADER_PATIENCE:
                raise
            return False
        except AudioError:
            if finished or len(self._data) >= 12:
                raise
            return False
        self._samples = resample(audio.samples, audio.sample_rate, STT_RATE)
        return True

    def _next_stretch(self) -> Stretch | None:
        """The stretch from the cursor to the first pause after speech, if one has ended."""
        levels = self._levels(self._cursor)
        speech = levels > self._threshold()
        spoke = False
        quiet = 0
        for n, is_speech in enumerate(speech):
            if is_speech:
                spoke, quiet = True, 0
                continue
            quiet += 1
            if spoke and quiet >= PAUSE_FRAMES:
                self._found_speech = True
                end = self._cursor + (n - quiet + 1 + KEEP_FRAMES) * FRAME_SAMPLES
                stretch = Stretch(self._cursor, end)
                self._cursor = end
                return stretch
        return None

    def _pause_frames(self, pause: Stretch) -> tuple[int, bool]:
        """How many whole quiet frames followed `pause`'s speech; whether they still go on."""
        levels = self._levels(pause.end - KEEP_FRAMES * FRAME_SAMPLES)
        speech = np.flatnonzero(levels > self._threshold())
        return (int(speech[0]), False) if len(speech) else (len(levels), True)

    def _has_speech(self, stretch: Stretch) -> bool:
        levels = self._levels(stretch.start)
        return bool(np.any(levels > self._threshold() / 2))

    def _levels(self, start: int) -> npt.NDArray[np.float32]:
        """Mean |sample| of each whole frame from `start` on."""
        frames = (len(self._samples) - start) // FRAME_SAMPLES
        if frames <= 0:
            return np.zeros(0, dtype=np.float32)
        block = self._samples[start : start + frames * FRAME_SAMPLES]
        return np.abs(block).reshape(frames, FRAME_SAMPLES).mean(axis=1)

    def _threshold(self) -> float:
        levels = self._levels(0)
        floor = float(levels.min()) if len(levels) else 0.0
        return max(MIN_LEVEL, floor * FLOOR_RATIO)


def transcribe_stretch(stt: SpeechToText, recording: LiveRecording, stretch: Stretch) -> Transcript:
    return stt.transcribe(recording.samples(stretch))


@dataclass(frozen=True)
class Heard:
    transcript: Transcript
    seconds: float  # of the recording
    speaker: Speaker | None = None  # recognised by voice, when a listener was given


# Have the model read a device's next prompt with the words heard so far ("": none yet), and
# answer them when the person paused after them (True).
Prime = Callable[[str, bool], None]
# Told the words of the stretches heard so far, each time one more has been transcribed, and
# the 16 kHz sample where the audio they were heard from ends (on the event loop:
# `hear_arriving`'s `words_heard`).
WordsHeard = Callable[[str, int], None]


async def hear_arriving(
    pieces: AsyncIterable[bytes],
    stt: SpeechToText,
    prime: Prime,
    *,
    max_seconds: float,
    max_bytes: int,
    timings: dict[str, float],
    listener: SpeakerListener | None = None,
    words_heard: WordsHeard | None = None,
    read_standing: bool = True,
) -> Heard:
    """Transcribe each stretch of speech as soon as it has ended, while the recording's
    `pieces` still arrive. `stt` in `timings` is what was left after the last piece.
    Meanwhile the model reads the answer's prompt as far as it is known (`ReadAhead`; the
    standing prompt at the first bytes only when `read_standing`), and a `listener` embeds
    the voice (`speaker` in `timings`: what was left at the end).
    Raises AudioError (AudioTooLarge past `max_bytes`)."""
    live = LiveRecording(max_seconds)
    pending: list[asyncio.Task[Transcript]] = []
    read_ahead = ReadAhead(prime, live, pending, words_heard, read_standing=read_standing)
    heard = Transcriptions(stt, live, read_ahead, pending)
    received, started = 0, time.perf_counter()
    try:
        async for piece in pieces:
            read_ahead.start()
            received += len(piece)
            check_audio_size(received, max_bytes)
            heard.ended(live.add(piece, time.perf_counter() - started))
            heard.early()
            if listener is not None:
                listener.hear(live.recorded())
        ended = time.perf_counter()
        read_ahead.stop()
        heard.ended(live.finish())
        speaker = await _speaker(listener, live, ended, timings)
        transcripts = list(await asyncio.gather(*pending))
    finally:
        _cancel(pending + heard.guesses, listener)
    timings["stt"] = (time.perf_counter() - ended) * 1000
    return Heard(live.heard(transcripts), live.seconds, speaker)


class Transcriptions:
    """A recording's stretches transcribed as soon as each can be: a stretch once it has
    ended (`ended`, in order into `pending`), and before (`early`): at its pause, kept for
    the stretch when the pause goes on to end it (`LiveRecording.pausing`), and each second
    of speech (`LiveRecording.partial`)."""

    def __init__(
        self,
        stt: SpeechToText,
        live: LiveRecording,
        read_ahead: ReadAhead,
        pending: list[asyncio.Task[Transcript]],
    ) -> None:
        self._stt, self._live, self._read_ahead, self.pending = stt, live, read_ahead, pending
        self.guesses: list[asyncio.Task[Transcript]] = []  # stretches heard before they ended
        self._paused: dict[Stretch, asyncio.Task[Transcript]] = {}
        self._sentence: tuple[Stretch, asyncio.Task[Transcript]] | None = None  # to keep

    def ended(self, stretches: list[Stretch]) -> None:
        self.pending += [self._transcribe(s, self._read_ahead.heard) for s in stretches]

    def early(self) -> None:
        self._keep_sentence()
        if (pause := self._live.pausing()) is not None:
            self._paused[pause] = self._transcribe(pause, self._read_ahead.paused)
            self._paused[pause].add_done_callback(partial(self._kept_if_whole, pause))
            self.guesses.append(self._paused[pause])
        if all(g.done() for g in self.guesses) and (guess := self._live.partial()):
            self.guesses.append(self._transcribe(guess, self._read_ahead.guessed))

    def _kept_if_whole(self, pause: Stretch, task: asyncio.Task[Transcript]) -> None:
        """A stretch heard at a pause too short to end it (`PAUSE_FRAMES`) is kept as a
        stretch of its own when its words end a sentence (`endings.finished`: the rule
        the turn's end is judged by: whisper heard a sentence's end there too) and the pause
        lasts `KEPT_PAUSE_FRAMES` (told as the audio arrives: `early`)."""
        if task.cancelled() or task.exception() is not None or task in self.pending:
            return
        if endings.finished(task.result().text):
            self._sentence = (pause, task)
            self._keep_sentence()

    def _keep_sentence(self) -> None:
        if self._sentence is None:
            return
        pause, task = self._sentence
        if self._live.keep(pause):
            self._paused.pop(pause, None)
            self.pending.append(task)
            task.add_done_callback(self._read_ahead.heard)
        elif not self._live.gone_by(pause):
            return
        self._sentence = None

    def _transcribe(
        self, stretch: Stretch, then: Callable[[asyncio.Task[Transcript]], object]
    ) -> asyncio.Task[Transcript]:
        task = self._paused.pop(stretch, None) or asyncio.create_task(
            asyncio.to_thread(transcribe_stretch, self._stt, self._live, stretch)
        )
        self._read_ahead.covers[task] = stretch.end
        task.add_done_callback(then)
        return task


def _cancel(tasks: list[asyncio.Task[Transcript]], listener: SpeakerListener | None) -> None:
    for task in tasks:
        task.cancel()
    if listener is not None:
        listener.cancel()


async def _speaker(
    listener: SpeakerListener | None,
    live: LiveRecording,
    ended: float,
    timings: dict[str, float],
) -> Speaker | None:
    """Who spoke, while the last stretch is transcribed (None when it cannot be told: a
    failing speaker model never costs the turn)."""
    if listener is None:
        return None
    try:
        speaker = await listener.finish(live.recorded())
    except Exception:
        log.warning("speaker recognition failed", exc_info=True)
        return None
    timings["speaker"] = (time.perf_counter() - ended) * 1000
    return speaker


class ReadAhead:
    """While a recording arrives, the model reads the answer's prompt as far as it is known
    (`Voice.prime`): at its first bytes, the standing prompt and the history; each time a
    stretch of speech has been heard, also the notes for the words so far and those words,
    and the model begins the answer to them (`backends/ahead.py`). When the person said no
    more (the device records its closing silence meanwhile), the turn finds its whole prompt
    read and its answer begun. A stretch is also heard while it goes on, each second
    (`LiveRecording.partial`), so the notes for its first words and those words are read
    while the person still speaks. Primes are not awaited: they never raise, and the turn
    queues behind them for the model. None starts once the recording has ended.

    Without `read_standing`, the first bytes prime nothing: a recording that begins while
    the device's last turn is still being answered (a xiaozhi `realtime` device listens on)
    would have the model read the prompt without that turn, in place of the turn's own (the
    turn primes the next prompt itself once it is stored)."""

    def __init__(
        self,
        prime: Prime,
        live: LiveRecording,
        heard: list[asyncio.Task[Transcript]],
        words_heard: WordsHeard | None = None,
        *,
        read_standing: bool = True,
    ) -> None:
        self._prime_now, self._live, self._heard = prime, live, heard
        self._words_heard = words_heard
        self.covers: dict[asyncio.Task[Transcript], int] = {}  # where each stretch ends
        self._started, self._stopped = not read_standing, False
        self._words = ("", False)  # the words last primed with, and whether to answer them
        self._reading: asyncio.Future[None] | None = None  # the prompt read being read
        self._next_read: str | None = None  # words whose prompt is read once it is done

    def start(self) -> None:
        if not self._started:
            self._started = True
            self._prime("", answer=False)

    def stop(self) -> None:
        self._stopped = True

    def heard(self, _done: asyncio.Task[Transcript]) -> None:
        """A stretch's transcription ended: prime with the words of those heard so far."""
        finished = self._finished()
        if self._words_heard is not None:
            covered = self.covers.get(self._heard[len(finished) - 1], 0) if finished else 0
            self._words_heard(self._live.heard(finished).text, covered)
        self._prime_with(finished, answer=True)

    def paused(self, pause: asyncio.Task[Transcript]) -> None:
        """The person paused (`LiveRecording.pausing`): prime with the words so far and
        those of the stretch that may have ended, and answer them when they end a sentence
        (`endings.finished`: the turn may end in this pause)."""
        if not pause.cancelled() and pause.exception() is None:
            transcripts = self._finished()
            if pause not in self._heard:  # not yet the stretch's own (its pause went on)
                transcripts.append(pause.result())
            words = self._live.heard(transcripts).text
            self._prime_with(transcripts, answer=endings.finished(words))

    def guessed(self, partial: asyncio.Task[Transcript]) -> None:
        """The stretch in progress was heard early: prime with the words so far and its."""
        if not partial.cancelled() and partial.exception() is None:
            self._prime_with([*self._finished(), partial.result()], answer=False)

    def _finished(self) -> list[Transcript]:
        """The transcripts of the stretches heard so far, in order (up to the first one
        still running or failed)."""
        transcripts = []
        for task in self._heard:
            if not task.done() or task.cancelled() or task.exception() is not None:
                break
            transcripts.append(task.result())
        return transcripts

    def _prime_with(self, transcripts: list[Transcript], *, answer: bool) -> None:
        words = self._live.heard(transcripts).text
        if words and (words, answer) != self._words:
            self._words = (words, answer)
            self._prime(words, answer=answer)

    def _prime(self, words: str, *, answer: bool) -> None:
        """Words to answer are primed at once (their memory is looked up for the turn that
        may begin). A prompt only to read waits for the one being read, and only the
        newest waits: on a busy machine the reads of each second's words would otherwise
        pile up, each slowing the others, with the turn's own read among them."""
        if self._stopped:
            return
        if not answer and self._reading is not None:
            self._next_read = words
            return
        self._next_read = None  # words heard since replace the ones waiting
        future = asyncio.get_running_loop().run_in_executor(None, self._prime_now, words, answer)
        if not answer:
            self._reading = future
            future.add_done_callback(self._read_next)

    def _read_next(self, _done: asyncio.Future[None]) -> None:
        self._reading = None
        words, self._next_read = self._next_read, None
        if words is not None:
            self._prime(words, answer=False)
