"""Where a person's turn ends, heard by the server (the xiaozhi `auto` and `realtime` modes):
a voice-activity model marks each 32 ms of audio as speech or not, and the turn ends after a
stretch of silence whose length depends on what was heard.

With a turn-end model (`backends.turn_end`, LOBUG_TURN_END=model), it is asked when a silence
is `ASK_AFTER_MS` long whether the audio so far is a whole turn (how the voice falls, not the
words), and asked again each `REASK_AFTER_MS` of silence while it says no and the words heard
end a sentence (a longer silence is more of an answer). "No" makes the turn wait
(`INCOMPLETE_SILENCE_MS`, longer than the words' longest wait), and where the words end a whole
sentence, a shorter doubt (`DOUBTED_SILENCE_MS`): a pause the words took for an end ("Remind me
in ...", heard as "Remind me.") is waited through up to 750 ms (the pause set's pauses are
400-700 ms), and a whole sentence the model hears as unfinished (it said so of piper's "... and
now I am tired.", 0.04) costs 750 ms, not 1,000 (`scripts/bench_turn_end.py`: the pause set 48
of 48 as before; the 5 s utterances' p95 wait 768 ms instead of 1,024; at 600 ms, "Remind me
in", then 700 ms, ended in the pause). "Yes" shortens the wait to `COMPLETE_SILENCE_MS` when
the words heard agree, and only then: alone, the model took the pause set's first halves
(piper, which says each half with a sentence's falling voice) for whole turns in 36 of 48, and
Asterisk's prompts cut mid-sentence in 3 of 4. The model runs in a worker thread
(`asked_in_thread`); until it answers, and where it failed, the words decide as they do without
a model (`listening.hear_arriving` transcribes each stretch of speech at its first pause): a
short silence (`FINISHED_SILENCE_MS`) when the words heard, covering all the speech so far, end
a whole sentence (`lobug.language.endings.finished`: the language's rules of what leaves a
sentence open), `UNPUNCTUATED_SILENCE_MS` when they would be whole with a full stop (whisper
now and then drops the last one), the long one (`OPEN_SILENCE_MS`) otherwise: a pause
mid-sentence is waited through.

Time is counted in audio (samples fed), not on the wall clock, so the rule is the same on a
busy machine and in tests."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial

import numpy as np
import numpy.typing as npt

from lobug.backends.base import TurnEnd, VoiceActivity
from lobug.language.endings import finished, whole_with_a_full_stop

RATE = 16_000
SPEECH_PROBABILITY = 0.5
MIN_SPEECH_MS = 200  # less voiced audio than this is a click or a breath, not a turn
# Speech over an answer being said (`realtime`) stops it after this much voiced audio: less
# than a turn needs, so the answer stops within about 150 ms of the person starting to speak.
BARGE_IN_SPEECH_MS = 96
# The turn-end model is asked after this much silence, and its answer sets the silence that
# ends the turn. Asked at 96 ms instead (`scripts/bench_turn_end.py`), it took more whole
# turns for unfinished (the pause set's whole sentences waited 928 ms, p50, instead of 320 when
# the words came 310 ms into the silence), and let 2 of the 48 pause turns end in the pause
# instead of none when the words came at 120 ms.
ASK_AFTER_MS = 192
# Shorter than the silence the model is asked at: a "finished" the words agree with ends the
# turn as soon as both are in.
COMPLETE_SILENCE_MS = 160
INCOMPLETE_SILENCE_MS = 1000
# The model's "not finished" where the words heard end a whole sentence: waited through, but
# not as long (`scripts/bench_turn_end.py`).
DOUBTED_SILENCE_MS = 750
COMPLETE_PROBABILITY = 0.5
# After a "no" about whole words, the model is asked again when the silence has gone on this
# much longer: its answers change as the silence grows (`scripts/bench_turn_end.py`).
REASK_AFTER_MS = 128
HEARD_SAMPLES = 8 * RATE  # the audio kept for the model: as much as it reads
FINISHED_SILENCE_MS = 300
UNPUNCTUATED_SILENCE_MS = 500
OPEN_SILENCE_MS = 900

log = logging.getLogger(__name__)

# Asks the turn-end model about a turn's audio so far and tells its answer (the probability
# that the turn is complete; None when the model failed) when it has one.
Answer = Callable[[float | None], None]
Ask = Callable[[npt.NDArray[np.int16], Answer], None]


class Endpointer:
    """Feed the utterance's 16 kHz PCM as it arrives (`feed`), and the words heard so far
    (`heard`); `ended` turns true once the turn is over. With `ask`, the turn-end model is
    asked at each silence (see the module); its answer may end the turn between feeds."""

    def __init__(self, vad: VoiceActivity, ask: Ask | None = None) -> None:
        self._vad = vad
        self._ask = ask
        self._asked_after = -1  # `_last_voice_end` of the silence the questions are about
        self._ask_at_ms: float | None = None  # the silence it is asked (again) at; None: not
        self._answer: tuple[int, float | None] | None = None  # (asked after, probability)
        self._recent = np.zeros(0, dtype=np.int16)  # the last `HEARD_SAMPLES` fed
        self._pending = np.zeros(0, dtype=np.int16)
        self._fed = 0  # samples through the VAD
        self._voiced = 0  # samples judged speech
        self._last_voice_end = 0  # sample after the last speech chunk
        self._words = ""
        self._words_at = -1  # the sample count when the words were last told
        self.ended = False

    @property
    def spoke(self) -> bool:
        return self._voiced * 1000 >= MIN_SPEECH_MS * RATE

    @property
    def barging_in(self) -> bool:
        """Enough speech to stop an answer being said (`BARGE_IN_SPEECH_MS`)."""
        return self._voiced * 1000 >= BARGE_IN_SPEECH_MS * RATE

    @property
    def last_voice_s(self) -> float:
        """Where, in seconds of the utterance, the last speech ended."""
        return self._last_voice_end / RATE

    def feed(self, pcm: npt.NDArray[np.int16]) -> bool:
        """Take the next audio; whether the turn has ended."""
        self._pending = np.concatenate([self._pending, pcm])
        size = self._vad.chunk_samples
        while len(self._pending) >= size and not self.ended:
            chunk, self._pending = self._pending[:size], self._pending[size:]
            self._fed += size
            self._keep(chunk)
            if self._vad.speech_probability(chunk) >= SPEECH_PROBABILITY:
                self._voiced += size
                self._last_voice_end = self._fed
            self._ask_if_due()
            self.ended = self.ended or self._turn_over()
        return self.ended

    def _keep(self, chunk: npt.NDArray[np.int16]) -> None:
        if self._ask is not None:
            self._recent = np.concatenate([self._recent, chunk])[-HEARD_SAMPLES:]

    def _ask_if_due(self) -> None:
        """Ask the model when a silence has lasted `ASK_AFTER_MS`, and again when its "no"
        asked for it (`_answered`) and the words heard end a sentence."""
        if self._ask is None or not self.spoke:
            return
        if self._asked_after != self._last_voice_end:  # a new silence
            self._asked_after, self._ask_at_ms = self._last_voice_end, ASK_AFTER_MS
        silence = self._silence_ms()
        if self._ask_at_ms is None or silence < self._ask_at_ms:
            return
        answered = self._answer is not None and self._answer[0] == self._last_voice_end
        if answered and self._silence_for_words_ms() >= OPEN_SILENCE_MS:
            return  # asked again: a "yes" about open words would not end the turn sooner
        self._ask_at_ms = None  # until its answer asks for another question
        self._ask(self._recent.copy(), partial(self._answered, self._last_voice_end, silence))

    def _answered(self, asked_after: int, silence_ms: float, probability: float | None) -> None:
        """The model's answer about the silence after sample `asked_after`, asked when it was
        `silence_ms` long; an answer about a silence the person has since spoken through is
        dropped. A "no" is asked again `REASK_AFTER_MS` later."""
        if asked_after != self._last_voice_end or self.ended:
            return
        log.debug("the turn-end model at %.0f ms of silence: %s", silence_ms, probability)
        self._answer = (asked_after, probability)
        if self._model_says_complete() is False:
            self._ask_at_ms = silence_ms + REASK_AFTER_MS
        self.ended = self._turn_over()

    def heard(self, words: str, covered: int | None = None) -> None:
        """The words of the speech transcribed so far (`listening.WordsHeard`), heard from
        the audio up to sample `covered` (None: all fed so far). Words that arrive late for
        an earlier stretch do not cover speech after it ("My favourite colour" heard while
        "is" was said)."""
        self._words = words
        self._words_at = self._fed if covered is None else min(covered, self._fed)
        self.ended = self.ended or self._turn_over()

    def _turn_over(self) -> bool:
        if not self.spoke:
            return False
        return self._silence_ms() >= self._silence_needed_ms()

    def _silence_ms(self) -> float:
        return (self._fed - self._last_voice_end) * 1000 / RATE

    def _silence_needed_ms(self) -> float:
        words_ms = self._silence_for_words_ms()
        complete = self._model_says_complete()
        if complete is None:  # no model, no answer yet, or it failed: the words decide
            return words_ms
        if not complete:
            doubted = words_ms == FINISHED_SILENCE_MS  # whole words, a voice not finished
            return DOUBTED_SILENCE_MS if doubted else max(words_ms, INCOMPLETE_SILENCE_MS)
        return COMPLETE_SILENCE_MS if words_ms < OPEN_SILENCE_MS else words_ms

    def _model_says_complete(self) -> bool | None:
        """The model's answer about this silence (None: not asked, not answered, failed)."""
        answer = self._answer
        if answer is None or answer[0] != self._last_voice_end or answer[1] is None:
            return None
        return answer[1] >= COMPLETE_PROBABILITY

    def _silence_for_words_ms(self) -> float:
        if self._words_at < self._last_voice_end:  # speech the words do not cover
            return OPEN_SILENCE_MS
        if finished(self._words):
            return FINISHED_SILENCE_MS
        if whole_with_a_full_stop(self._words):
            return UNPUNCTUATED_SILENCE_MS
        return OPEN_SILENCE_MS


def asked_in_thread(model: TurnEnd, after: Callable[[], None]) -> Ask:
    """An `Ask` that runs `model` in a worker thread (off the event loop it is made on) and
    tells its answer on that loop, then calls `after` (the answer may have ended the turn)."""
    loop = asyncio.get_running_loop()

    def ask(pcm: npt.NDArray[np.int16], answer: Answer) -> None:
        future = loop.run_in_executor(None, model.completion_probability, pcm)
        future.add_done_callback(partial(_tell, answer, after))

    return ask


def _tell(answer: Answer, after: Callable[[], None], future: asyncio.Future[float]) -> None:
    if future.cancelled():
        answer(None)
    elif (error := future.exception()) is not None:
        log.warning("the turn-end model failed (%s); the words decide", error)
        answer(None)
    else:
        answer(future.result())
    after()


def asked_at_once(model: TurnEnd) -> Ask:
    """An `Ask` that runs `model` where it is asked and answers at once (benchmarks, tests:
    the answer then takes no audio time)."""

    def ask(pcm: npt.NDArray[np.int16], answer: Answer) -> None:
        answer(model.completion_probability(pcm))

    return ask
