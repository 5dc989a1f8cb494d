"""The server's turn-end rule (`lobug.voice.endpointing`), with a fake voice-activity model: a
chunk is speech when its first sample is not zero."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from lobug.backends.base import VoiceActivity
from lobug.language.endings import finished
from lobug.voice.endpointing import (
    FINISHED_SILENCE_MS,
    OPEN_SILENCE_MS,
    UNPUNCTUATED_SILENCE_MS,
    Endpointer,
)

CHUNK = 512


class FakeVAD(VoiceActivity):
    chunk_samples = CHUNK

    def speech_probability(self, chunk: npt.NDArray[np.int16]) -> float:
        return 1.0 if chunk[0] else 0.0


def audio(ms: float, *, speech: bool) -> npt.NDArray[np.int16]:
    samples = int(16 * ms) // CHUNK * CHUNK
    return np.full(samples, 1000 if speech else 0, dtype=np.int16)


def silence_until_end(endpointer: Endpointer, limit_ms: float = 3000) -> float:
    """Feed silence 32 ms at a time; how much it took to end the turn."""
    fed = 0.0
    while not endpointer.feed(audio(32, speech=False)):
        fed += 32
        assert fed < limit_ms
    return fed + 32


def test_a_finished_sentence_ends_the_turn_after_a_short_silence() -> None:
    endpointer = Endpointer(FakeVAD())
    endpointer.feed(audio(1000, speech=True))
    endpointer.feed(audio(96, speech=False))
    endpointer.heard("What is the capital of France?")
    waited = 96 + silence_until_end(endpointer)
    assert FINISHED_SILENCE_MS <= waited < FINISHED_SILENCE_MS + 64


def test_a_pause_mid_sentence_is_waited_through() -> None:
    endpointer = Endpointer(FakeVAD())
    endpointer.feed(audio(1000, speech=True))
    endpointer.feed(audio(96, speech=False))
    endpointer.heard("I would like to")
    assert not endpointer.feed(audio(600, speech=False))  # a 700 ms pause: not the end
    endpointer.feed(audio(640, speech=True))  # "... call Anna"
    waited = silence_until_end(endpointer)
    assert OPEN_SILENCE_MS <= waited < OPEN_SILENCE_MS + 64


@pytest.mark.parametrize(
    ("words", "wait_ms"),
    [
        ("I went for a long walk with my dog. and now i am tired", UNPUNCTUATED_SILENCE_MS),
        ("The weather tomorrow", OPEN_SILENCE_MS),  # a subject alone: its predicate is to come
        ("I would like to call", OPEN_SILENCE_MS),
        ("Set a timer for ten minutes.", FINISHED_SILENCE_MS),
    ],
)
def test_words_whisper_left_without_a_full_stop_wait_longer_unless_they_are_open(
    words: str, wait_ms: int
) -> None:
    endpointer = Endpointer(FakeVAD())
    endpointer.feed(audio(1000, speech=True))
    endpointer.heard(words)
    assert wait_ms <= silence_until_end(endpointer) < wait_ms + 64


def test_words_heard_before_the_last_speech_do_not_shorten_the_wait() -> None:
    endpointer = Endpointer(FakeVAD())
    endpointer.feed(audio(800, speech=True))
    endpointer.heard("Hello there.")  # the first stretch, heard while speech goes on
    endpointer.feed(audio(800, speech=True))
    assert silence_until_end(endpointer) >= OPEN_SILENCE_MS


def test_no_speech_never_ends_a_turn() -> None:
    endpointer = Endpointer(FakeVAD())
    assert not endpointer.feed(audio(5000, speech=False))
    assert not endpointer.feed(audio(96, speech=True)) and not endpointer.spoke


def test_a_barge_in_needs_less_speech_than_a_turn() -> None:
    endpointer = Endpointer(FakeVAD())
    endpointer.feed(audio(64, speech=True))
    assert not endpointer.barging_in
    endpointer.feed(audio(32, speech=True))
    assert endpointer.barging_in and not endpointer.spoke


@pytest.mark.parametrize(
    ("words", "whole"),
    [
        ("What is the capital of France?", True),
        ("Set a timer for ten minutes.", True),
        ("What should I bring her?", True),
        ("I would like to call.", False),  # whisper's full stop after a pause mid-sentence
        ("What do you think about?", False),
        ("My favourite colour is.", False),
        ("Can you remind me to buy.", False),
        ("I would like to", False),
        # a subject or an auxiliary at the end: open, unless said whole every day
        ("Thank you.", True),
        ("No, thank you.", True),
        ("Nice to meet you.", True),
        ("How are you?", True),
        ("Who am I?", True),
        ("What reminders do I have?", True),
        ("What can you do?", True),
        ("Can you?", False),  # "Can you ... remind me?"
        ("What would you?", False),  # "What would you ... recommend?"
        ("Tomorrow my wife and I.", False),
        ("Is it that you.", False),
        ("What is?", False),
        ("Why do you think that is?", True),
        ("I have news. How are you?", True),  # the last sentence counts
        ("What is that?", True),
        ("Where is it?", True),
        ("I think that.", False),
        ("Is it?", True),
        ("yes", True),  # one word, whisper's punctuation left off
        ("louder", True),
        ("yesterday", False),
        # a subject said alone: its predicate is still to come
        ("My favorite colors.", False),  # whisper's "My favourite colour is"
        ("My sister.", False),
        ("The weather tomorrow.", False),
        ("I have news. My sister.", False),
        ("My sister is a nurse.", True),
        ("My favourite colour is green. My sister likes red.", True),
        ("The weather tomorrow?", True),  # asked: whole
        ("My dog barks at night.", True),
        ("...", True),  # no words: nothing left open
        ("Could you please?", False),  # "Could you please ... turn the lights off?"
        ("Can you just.", False),
        ("Would you mind?", True),
        ("Could you please turn the lights off?", True),
        ("Can you remind me to bye?", False),  # whisper's "buy" before a pause
        ("Say hello to Anna from me. Bye.", True),
        ("Remind me.", False),  # "Remind me ... in twenty minutes to check the oven."
        ("Can you give her.", False),
        ("Remind me at six.", True),
        ("I miss her.", True),
    ],
)
def test_a_sentence_left_open_by_its_last_word_is_not_finished(words: str, whole: bool) -> None:
    assert finished(words) is whole


def test_a_pause_after_an_open_ending_is_waited_through() -> None:
    endpointer = Endpointer(FakeVAD())
    endpointer.feed(audio(1000, speech=True))
    endpointer.feed(audio(256, speech=False))
    endpointer.heard("I would like to call.")
    assert not endpointer.feed(audio(448, speech=False))  # a 700 ms pause: not the end


def test_words_of_an_earlier_stretch_arriving_late_do_not_cover_later_speech() -> None:
    endpointer = Endpointer(FakeVAD())
    endpointer.feed(audio(800, speech=True))  # "My favourite colour"
    stretch_end = len(audio(800, speech=True))
    endpointer.feed(audio(256, speech=False))
    endpointer.feed(audio(256, speech=True))  # "is"
    endpointer.feed(audio(96, speech=False))
    endpointer.heard("My favourite colour.", covered=stretch_end)  # transcribed meanwhile
    assert not endpointer.feed(audio(448, speech=False))  # a 700 ms pause: not the end
