"""Finding the stretches of speech in a recording as it arrives (`lobug.voice.listening`)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator

import numpy as np
import numpy.typing as npt
import pytest

from lobug.audio import STT_RATE, AudioError, encode_wav
from lobug.backends.base import Transcript, TranscriptSegment
from lobug.voice.listening import LiveRecording, ReadAhead, Stretch, hear_arriving
from tests.fakes import FakeSTT


def tone(seconds: float) -> np.ndarray:
    t = np.arange(int(STT_RATE * seconds)) / STT_RATE
    return (np.sin(2 * np.pi * 220 * t) * 6000).astype(np.int16)


def quiet(seconds: float) -> np.ndarray:
    return np.zeros(int(STT_RATE * seconds), dtype=np.int16)


def pieces(wav: bytes, size: int = 3200) -> list[bytes]:
    """The header, then 100 ms pieces, as a device recording live sends them."""
    return [wav[:44]] + [wav[at : at + size] for at in range(44, len(wav), size)]


def feed(live: LiveRecording, wav: bytes) -> list[tuple[int, Stretch]]:
    """(piece index, stretch) for each stretch found while the pieces arrive, each 100 ms
    after the one before."""
    return [(n, s) for n, piece in enumerate(pieces(wav)) for s in live.add(piece, n * 0.1)]


def test_each_stretch_is_found_when_its_pause_arrives() -> None:
    recording = np.concatenate([tone(0.6), quiet(0.4), tone(0.9), quiet(0.8)])
    live = LiveRecording(max_seconds=30)
    found = feed(live, encode_wav(recording, STT_RATE))
    assert len(found) == 2
    (first_at, first), (second_at, second) = found
    assert first.start == 0 and 0.6 < first.end / STT_RATE < 0.9
    assert first_at <= 10  # found 1.0 s in, while the second one was still being said
    assert second.start == first.end and 1.9 < second.end / STT_RATE < 2.2
    assert second_at < len(pieces(encode_wav(recording, STT_RATE))) - 3
    assert live.finish() == []  # the closing silence is not transcribed
    assert live.seconds == pytest.approx(2.7, abs=0.01)


def test_a_pause_is_heard_at_once_as_the_stretch_it_goes_on_to_end() -> None:
    recording = np.concatenate([tone(0.6), quiet(0.15), tone(0.5), quiet(0.6)])
    live = LiveRecording(max_seconds=30)
    paused, ended = [], []
    for n, piece in enumerate(pieces(encode_wav(recording, STT_RATE), size=960)):  # 30 ms
        ended += [(n, s) for s in live.add(piece, n * 0.03)]
        if (pause := live.pausing()) is not None:
            paused.append((n, pause))
    # Both pauses heard once each, 120 ms in; only the second goes on to end a stretch,
    # with the very samples heard at its start, 120 ms earlier.
    assert [stretch.start for _, stretch in paused] == [0, 0]
    ends = [stretch.end / STT_RATE for _, stretch in paused]
    assert ends == [pytest.approx(0.72, abs=0.03), pytest.approx(1.37, abs=0.03)]
    assert [stretch for _, stretch in ended] == [paused[1][1]]
    assert ended[0][0] - paused[1][0] == 4  # 120 ms of a 240 ms pause later


def test_what_follows_the_last_pause_is_left_for_the_end() -> None:
    live = LiveRecording(max_seconds=30)
    found = feed(live, encode_wav(np.concatenate([tone(0.5), quiet(0.4), tone(0.5)]), STT_RATE))
    assert len(found) == 1
    (rest,) = live.finish()
    assert rest.start == found[0][1].end and rest.end == int(STT_RATE * 1.4)


def test_a_recording_that_arrives_faster_than_speech_is_transcribed_whole() -> None:
    wav = encode_wav(np.concatenate([tone(0.6), quiet(0.4), tone(0.9), quiet(0.8)]), STT_RATE)
    live = LiveRecording(max_seconds=30)
    assert [s for piece in pieces(wav) for s in live.add(piece, 0.01)] == []
    assert live.finish() == [Stretch(0, int(STT_RATE * 2.7))]


def test_a_long_stretch_is_heard_each_second_before_it_ends() -> None:
    wav = encode_wav(np.concatenate([tone(2.5), quiet(0.4), tone(2.5), quiet(0.8)]), STT_RATE)
    live = LiveRecording(max_seconds=30)
    ended, partials = [], []
    for n, piece in enumerate(pieces(wav)):
        ended += live.add(piece, n * 0.1)
        if (partial := live.partial()) is not None:
            partials.append(partial)
    assert len(partials) == 4  # twice for each stretch: 1 and 2 s into it
    for n, partial in enumerate(partials):
        stretch = ended[n // 2]
        assert partial.start == stretch.start  # the same stretch, while it went on
        assert n % 2 + 1.0 <= (partial.end - partial.start) / STT_RATE < n % 2 + 1.1
        assert partial.end < stretch.end


def test_a_stretch_is_not_guessed_at_while_the_person_pauses() -> None:
    wav = encode_wav(np.concatenate([tone(1.9), quiet(0.2), tone(0.5), quiet(0.8)]), STT_RATE)
    live = LiveRecording(max_seconds=30)
    partials = []
    for n, piece in enumerate(pieces(wav)):
        live.add(piece, n * 0.1)
        if (partial := live.partial()) is not None:
            partials.append(partial.end / STT_RATE)
    assert len(partials) == 2
    assert 1.0 <= partials[0] < 1.1  # 1 s into the stretch
    assert partials[1] >= 2.1  # not at 2 s, in the pause: once the speech went on


def test_no_stretch_is_heard_early_from_a_recording_sent_faster_than_speech() -> None:
    wav = encode_wav(np.concatenate([tone(3.0), quiet(0.8)]), STT_RATE)
    live = LiveRecording(max_seconds=30)
    for piece in pieces(wav):
        live.add(piece, 0.01)
        assert live.partial() is None


def test_a_recording_without_speech_by_level_is_still_transcribed_whole() -> None:
    whisper = (tone(1.0) / 100).astype(np.int16)  # far below the level of speech
    live = LiveRecording(max_seconds=30)
    assert feed(live, encode_wav(whisper, STT_RATE)) == []
    assert live.finish() == [Stretch(0, STT_RATE)]


def test_transcripts_of_stretches_are_heard_as_one() -> None:
    live = LiveRecording(max_seconds=30)
    first = Transcript("Hello there.", (TranscriptSegment("Hello there.", 0.1, -0.2),), "en")
    second = Transcript("How are you?", (TranscriptSegment("How are you?", 0.2, -0.3),), "en")
    heard = live.heard([first, Transcript(""), second])
    assert heard.text == "Hello there. How are you?"
    assert len(heard.segments) == 2 and heard.language == "en"


def test_a_body_that_is_not_a_wav_is_refused() -> None:
    live = LiveRecording(max_seconds=30)
    assert live.add(b"not a", 0) == []  # too short to tell yet
    with pytest.raises(AudioError):
        live.add(b" wav file at all, clearly", 0)


def test_a_recording_over_the_limit_is_refused_while_it_arrives() -> None:
    live = LiveRecording(max_seconds=1)
    with pytest.raises(AudioError):
        feed(live, encode_wav(tone(2.0), STT_RATE))


class SlowSTT(FakeSTT):
    """Takes `seconds` over each transcription, as whisper does."""

    def __init__(self, heard: str, seconds: float) -> None:
        super().__init__(heard)
        self.seconds = seconds

    def transcribe(self, samples: npt.NDArray[np.float32]) -> Transcript:
        time.sleep(self.seconds)
        return super().transcribe(samples)


def test_a_recording_begun_while_the_last_turn_is_answered_leaves_its_prompt_read() -> None:
    wav = encode_wav(np.concatenate([quiet(0.1), tone(0.6), quiet(0.6)]), STT_RATE)
    primed: list[tuple[str, bool]] = []

    async def hear() -> None:
        await hear_arriving(
            pieces_at_the_pace_of_speech(wav),
            SlowSTT("Stop.", 0.0),
            lambda words, answer: primed.append((words, answer)),
            max_seconds=30,
            max_bytes=10_000_000,
            timings={},
            read_standing=False,
        )

    asyncio.run(hear())
    assert primed == [("Stop.", True)]  # the standing prompt is not read at the first bytes


async def pieces_at_the_pace_of_speech(wav: bytes) -> AsyncIterator[bytes]:
    for piece in pieces(wav, size=960):
        await asyncio.sleep(0.03)  # 30 ms pieces
        yield piece


# 0.2 s: the pause goes on to end the stretch before its words are heard.
@pytest.mark.parametrize("stt_seconds", [0.0, 0.2])
def test_a_stretch_heard_at_its_pause_is_transcribed_once_and_answered_ahead(
    stt_seconds: float,
) -> None:
    wav = encode_wav(np.concatenate([quiet(0.1), tone(0.6), quiet(0.6)]), STT_RATE)
    stt = SlowSTT("Where are my keys?", stt_seconds)
    primed: list[tuple[str, bool]] = []

    async def hear() -> str:
        heard = await hear_arriving(
            pieces_at_the_pace_of_speech(wav),
            stt,
            lambda words, answer: primed.append((words, answer)),
            max_seconds=30,
            max_bytes=10_000_000,
            timings={},
        )
        return heard.transcript.text

    assert asyncio.run(hear()) == "Where are my keys?"
    assert stt.calls == 1, (
        stt.heard_samples
    )  # heard at its pause, kept when the pause ended the stretch
    assert primed == [("", False), ("Where are my keys?", True)]


async def transcribed(text: str) -> asyncio.Task[Transcript]:
    async def transcript() -> Transcript:
        return Transcript(text)

    task = asyncio.create_task(transcript())
    await task
    return task


def test_prompt_reads_wait_for_the_one_being_read_and_words_to_answer_do_not() -> None:
    primed: list[tuple[str, bool]] = []
    reading = threading.Event()  # set: a prompt read ends at once

    def prime(words: str, answer: bool) -> None:
        primed.append((words, answer))
        if not answer:
            reading.wait(5)

    async def until(count: int) -> None:
        for _ in range(200):
            if len(primed) >= count:
                return
            await asyncio.sleep(0.01)

    async def hear() -> None:
        read_ahead = ReadAhead(prime, LiveRecording(30), [])
        read_ahead.start()  # the standing prompt, being read
        for words in ("My", "My sister", "My sister Emma"):
            read_ahead.guessed(await transcribed(words))
        await asyncio.sleep(0.1)
        assert primed == [("", False)]  # the reads of each second's words wait
        reading.set()
        await until(2)
        await asyncio.sleep(0.1)
        assert primed == [("", False), ("My sister Emma", False)]  # only the newest
        reading.clear()
        read_ahead.guessed(await transcribed("My sister Emma is"))
        read_ahead.guessed(await transcribed("My sister Emma is in"))
        read_ahead.paused(await transcribed("My sister Emma is ill."))
        await until(4)
        reading.set()
        await asyncio.sleep(0.1)
        assert primed[2:] == [("My sister Emma is", False), ("My sister Emma is ill.", True)]

    asyncio.run(hear())


class SaidInTurn(FakeSTT):
    """Hears `texts` in turn, one a transcription (the last one ever after)."""

    def __init__(self, *texts: str) -> None:
        super().__init__(texts[0])
        self.texts = texts

    def transcribe(self, samples: npt.NDArray[np.float32]) -> Transcript:
        self.heard = self.texts[min(self.calls, len(self.texts) - 1)]
        return super().transcribe(samples)


def heard_at_pace(stt: FakeSTT, *parts: np.ndarray) -> str:
    wav = encode_wav(np.concatenate([quiet(0.1), *parts, quiet(0.6)]), STT_RATE)

    async def hear() -> str:
        heard = await hear_arriving(
            pieces_at_the_pace_of_speech(wav),
            stt,
            lambda _words, _answer: None,
            max_seconds=30,
            max_bytes=10_000_000,
            timings={},
        )
        return heard.transcript.text

    return asyncio.run(hear())


def test_a_sentence_heard_whole_at_a_short_pause_is_not_transcribed_again() -> None:
    stt = SaidInTurn("I went home.", "Then I slept.")
    heard = heard_at_pace(stt, tone(0.8), quiet(0.21), tone(0.6))
    assert heard == "I went home. Then I slept."
    assert stt.calls == 2
    assert stt.heard_samples[1] < 1.0 * STT_RATE  # at the end, the last sentence only


def test_words_that_leave_a_sentence_open_at_a_short_pause_are_heard_again_with_the_rest() -> None:
    stt = SaidInTurn("I went to the", "I went to the shop.")
    heard = heard_at_pace(stt, tone(0.8), quiet(0.21), tone(0.6))
    assert heard == "I went to the shop."
    assert stt.heard_samples[-1] > 1.5 * STT_RATE  # the whole stretch, pause and all


def test_a_sentence_heard_at_a_pause_within_a_sentence_is_heard_again_with_the_rest() -> None:
    stt = SaidInTurn("I came back.", "I came back from the lake.")
    heard = heard_at_pace(stt, tone(0.8), quiet(0.12), tone(0.6))  # 120 ms: between words
    assert heard == "I came back from the lake."
    assert stt.heard_samples[-1] > 1.5 * STT_RATE
