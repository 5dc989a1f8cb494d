"""The turn's end decided by a turn-end model (`lobug.voice.endpointing` with an `Ask`), with a fake
model behind the real interface (`TurnEnd`) and the fake voice-activity model of
`test_endpointing`: "not finished" makes the turn wait whatever the words; "finished" shortens
the wait where the words agree; without an answer the words decide."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import numpy.typing as npt

from lobug.backends.base import TurnEnd
from lobug.voice.endpointing import (
    ASK_AFTER_MS,
    COMPLETE_SILENCE_MS,
    DOUBTED_SILENCE_MS,
    FINISHED_SILENCE_MS,
    HEARD_SAMPLES,
    INCOMPLETE_SILENCE_MS,
    OPEN_SILENCE_MS,
    REASK_AFTER_MS,
    Answer,
    Endpointer,
    asked_at_once,
    asked_in_thread,
)
from tests.voice.test_endpointing import FakeVAD, audio, silence_until_end


class FakeTurnEnd(TurnEnd):
    """Says the turn is complete with a fixed probability; keeps what it was asked about."""

    def __init__(self, probability: float) -> None:
        self.probability = probability
        self.asked: list[npt.NDArray[np.int16]] = []
        self.threads: list[str] = []

    def completion_probability(self, pcm: npt.NDArray[np.int16]) -> float:
        self.asked.append(pcm)
        self.threads.append(threading.current_thread().name)
        return self.probability


class ChangesItsMind(TurnEnd):
    """Answers `probabilities` in turn (the last one from then on), as the silence grows."""

    def __init__(self, *probabilities: float) -> None:
        self.probabilities = list(probabilities)
        self.asked_at_ms: list[float] = []  # the silence at the end of each question's audio

    def completion_probability(self, pcm: npt.NDArray[np.int16]) -> float:
        self.asked_at_ms.append(np.flatnonzero(pcm[::-1])[0] * 1000 / 16_000)
        return self.probabilities.pop(0) if len(self.probabilities) > 1 else self.probabilities[0]


class HeldAnswers:
    """An `Ask` whose answers are told when the test says (the model still thinking)."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []

    def __call__(self, pcm: npt.NDArray[np.int16], answer: Answer) -> None:
        self.answers.append(answer)


def test_a_complete_turn_whose_words_agree_ends_after_a_shorter_silence() -> None:
    endpointer = Endpointer(FakeVAD(), asked_at_once(FakeTurnEnd(0.9)))
    endpointer.feed(audio(1000, speech=True))
    endpointer.heard("What is the capital of France?")
    waited = silence_until_end(endpointer)
    assert COMPLETE_SILENCE_MS <= waited < COMPLETE_SILENCE_MS + 64
    assert waited < FINISHED_SILENCE_MS


def test_a_complete_turn_ends_once_the_words_that_agree_arrive() -> None:
    endpointer = Endpointer(FakeVAD(), asked_at_once(FakeTurnEnd(0.9)))
    endpointer.feed(audio(1000, speech=True))
    assert not endpointer.feed(audio(ASK_AFTER_MS + 96, speech=False))  # no words yet
    endpointer.heard("What is the capital of France?")
    assert endpointer.ended


def test_a_complete_turn_whose_words_are_open_waits_as_long_as_the_words_say() -> None:
    endpointer = Endpointer(FakeVAD(), asked_at_once(FakeTurnEnd(0.9)))
    endpointer.feed(audio(1000, speech=True))
    endpointer.heard("I would like to call")  # the piper pause set's first half
    assert OPEN_SILENCE_MS <= silence_until_end(endpointer) < OPEN_SILENCE_MS + 64


def test_an_unfinished_voice_waits_long_and_whole_words_shorten_it_to_a_doubt() -> None:
    endpointer = Endpointer(FakeVAD(), asked_at_once(FakeTurnEnd(0.1)))
    endpointer.feed(audio(1000, speech=True))
    endpointer.heard("I would like to call")  # open by the word rules too
    waited = silence_until_end(endpointer)
    assert INCOMPLETE_SILENCE_MS <= waited < INCOMPLETE_SILENCE_MS + 64
    doubted = Endpointer(FakeVAD(), asked_at_once(FakeTurnEnd(0.1)))
    doubted.feed(audio(1000, speech=True))
    doubted.heard("What is the capital of France?")  # whole by the word rules
    waited = silence_until_end(doubted)
    assert DOUBTED_SILENCE_MS <= waited < DOUBTED_SILENCE_MS + 64


def test_the_model_is_asked_once_per_silence_on_the_audio_so_far() -> None:
    model = FakeTurnEnd(0.1)
    endpointer = Endpointer(FakeVAD(), asked_at_once(model))
    endpointer.feed(audio(10_000, speech=True))
    assert not endpointer.feed(audio(640, speech=False))
    assert len(model.asked) == 1
    heard = model.asked[0]
    assert len(heard) == HEARD_SAMPLES  # the last 8 s, not all 10
    silent_end = np.flatnonzero(heard[::-1])[0] * 1000 / 16_000
    assert ASK_AFTER_MS <= silent_end < ASK_AFTER_MS + 32  # asked at `ASK_AFTER_MS` of silence
    endpointer.feed(audio(320, speech=True))  # speech again: a new silence, a new question
    endpointer.feed(audio(640, speech=False))
    assert len(model.asked) == 2


def test_a_doubt_about_whole_words_is_asked_again_as_the_silence_grows() -> None:
    model = ChangesItsMind(0.1, 0.9)
    endpointer = Endpointer(FakeVAD(), asked_at_once(model))
    endpointer.feed(audio(1000, speech=True))
    endpointer.heard("And now I am tired.")  # whole by the word rules
    waited = silence_until_end(endpointer)
    assert ASK_AFTER_MS + REASK_AFTER_MS <= waited < ASK_AFTER_MS + REASK_AFTER_MS + 64
    assert waited < DOUBTED_SILENCE_MS
    first, again = model.asked_at_ms
    assert again - first == REASK_AFTER_MS  # the second question heard the longer silence


def test_a_doubt_kept_is_asked_about_until_the_doubted_wait_ends_it() -> None:
    model = ChangesItsMind(0.1)
    endpointer = Endpointer(FakeVAD(), asked_at_once(model))
    endpointer.feed(audio(1000, speech=True))
    endpointer.heard("I am tired.")
    waited = silence_until_end(endpointer)
    assert DOUBTED_SILENCE_MS <= waited < DOUBTED_SILENCE_MS + 64
    expected = range(ASK_AFTER_MS, DOUBTED_SILENCE_MS, REASK_AFTER_MS)
    assert len(model.asked_at_ms) == len(expected)


def test_open_words_are_not_asked_about_again() -> None:
    """A "yes" would not end open words' turn sooner: no second question."""
    model = ChangesItsMind(0.1, 0.9)
    endpointer = Endpointer(FakeVAD(), asked_at_once(model))
    endpointer.feed(audio(1000, speech=True))
    endpointer.heard("I would like to call")
    assert INCOMPLETE_SILENCE_MS <= silence_until_end(endpointer) < INCOMPLETE_SILENCE_MS + 64
    assert len(model.asked_at_ms) == 1


def test_words_that_arrive_whole_after_a_no_are_asked_about_again() -> None:
    model = ChangesItsMind(0.1, 0.9)
    endpointer = Endpointer(FakeVAD(), asked_at_once(model))
    endpointer.feed(audio(1000, speech=True))
    assert not endpointer.feed(audio(ASK_AFTER_MS + REASK_AFTER_MS + 64, speech=False))
    assert len(model.asked_at_ms) == 1  # no words yet: open
    endpointer.heard("Thank you.")
    assert endpointer.feed(audio(32, speech=False))  # asked again at once: "yes"
    assert len(model.asked_at_ms) == 2


def test_an_answer_that_comes_later_ends_the_turn_between_feeds() -> None:
    held = HeldAnswers()
    endpointer = Endpointer(FakeVAD(), held)
    endpointer.feed(audio(1000, speech=True))
    assert not endpointer.feed(audio(ASK_AFTER_MS, speech=False))  # asked, no answer yet
    endpointer.heard("Set a timer for ten minutes.")  # whole: the words alone wait 300 ms
    assert not endpointer.ended
    (answer,) = held.answers
    answer(0.8)
    assert endpointer.ended


def test_until_the_model_answers_the_words_decide() -> None:
    endpointer = Endpointer(FakeVAD(), HeldAnswers())
    endpointer.feed(audio(1000, speech=True))
    endpointer.heard("Set a timer for ten minutes.")
    assert FINISHED_SILENCE_MS <= silence_until_end(endpointer) < FINISHED_SILENCE_MS + 64


def test_an_answer_about_a_silence_spoken_through_is_dropped() -> None:
    held = HeldAnswers()
    endpointer = Endpointer(FakeVAD(), held)
    endpointer.feed(audio(1000, speech=True))
    endpointer.feed(audio(ASK_AFTER_MS + 32, speech=False))
    endpointer.feed(audio(640, speech=True))  # "... call Anna"
    endpointer.heard("Call Anna.")
    held.answers[0](0.99)  # about the pause: too late, the person spoke on
    assert not endpointer.ended
    assert not endpointer.feed(audio(ASK_AFTER_MS + 32, speech=False))
    held.answers[1](0.99)
    assert endpointer.ended


def test_when_the_model_fails_the_words_decide() -> None:
    def failing(pcm: npt.NDArray[np.int16], answer: Answer) -> None:
        answer(None)

    endpointer = Endpointer(FakeVAD(), failing)
    endpointer.feed(audio(1000, speech=True))
    endpointer.heard("I would like to")
    assert OPEN_SILENCE_MS <= silence_until_end(endpointer) < OPEN_SILENCE_MS + 64


def test_the_model_runs_off_the_event_loop_and_its_answer_is_told_on_it() -> None:
    model = FakeTurnEnd(0.9)
    told: list[str] = []

    async def turn() -> Endpointer:
        def after() -> None:
            told.append(threading.current_thread().name)

        endpointer = Endpointer(FakeVAD(), asked_in_thread(model, after))
        endpointer.feed(audio(1000, speech=True))
        endpointer.heard("Thank you.")
        endpointer.feed(audio(max(ASK_AFTER_MS, COMPLETE_SILENCE_MS) + 64, speech=False))
        assert not endpointer.ended  # the answer is not there yet
        for _ in range(200):
            if told:
                break
            await asyncio.sleep(0.01)
        return endpointer

    endpointer = asyncio.run(turn())
    assert endpointer.ended
    assert model.threads[0] != threading.main_thread().name
    assert told == [threading.main_thread().name]


def test_a_model_that_raises_leaves_the_turn_to_the_words() -> None:
    class Broken(TurnEnd):
        def completion_probability(self, pcm: npt.NDArray[np.int16]) -> float:
            raise RuntimeError("no model")

    async def turn() -> Endpointer:
        told = asyncio.Event()
        endpointer = Endpointer(FakeVAD(), asked_in_thread(Broken(), told.set))
        endpointer.feed(audio(1000, speech=True))
        endpointer.heard("What is the capital of France?")
        endpointer.feed(audio(ASK_AFTER_MS + 32, speech=False))
        await asyncio.wait_for(told.wait(), 5)
        return endpointer

    endpointer = asyncio.run(turn())
    assert not endpointer.ended
    waited = ASK_AFTER_MS + 32 + silence_until_end(endpointer)
    assert FINISHED_SILENCE_MS <= waited < FINISHED_SILENCE_MS + 64
