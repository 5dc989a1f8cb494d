from __future__ import annotations

from collections.abc import Iterator

import pytest

from lobug.backends.base import Transcript, TranscriptSegment
from lobug.turn.decision import ignore_reason, is_hallucination, read_action_prefix
from lobug.turn.spoken import sentences


def heard(text: str, no_speech: float = 0.05, logprob: float = -0.2, parts: int = 1) -> Transcript:
    segments = tuple(TranscriptSegment(text, no_speech, logprob) for _ in range(parts))
    return Transcript(text, segments if text else ())


@pytest.mark.parametrize(
    ("transcript", "seconds", "reason"),
    [
        (heard("What time is it?"), 0.4, "too_short"),
        (heard(""), 3.0, "no_speech"),
        (heard("What time is it?", no_speech=0.8), 3.0, "no_speech"),
        (heard("Thanks for watching!"), 3.0, "hallucination"),
        (heard("Please subscribe to my channel."), 3.0, "hallucination"),
        (heard("Um."), 2.0, "hallucination"),
        (heard("Hmm, uh"), 2.0, "hallucination"),
        (heard("Weather"), 2.0, "too_few_words"),
        (heard("Turn left", no_speech=0.45), 1.0, "uncertain"),
        (heard("Turn left", logprob=-1.2), 1.2, "uncertain"),
    ],
)
def test_recordings_that_are_ignored(transcript: Transcript, seconds: float, reason: str) -> None:
    assert ignore_reason(transcript, seconds) == reason


@pytest.mark.parametrize(
    ("transcript", "seconds"),
    [
        (heard("What time is it?"), 2.0),
        (heard("Turn left", no_speech=0.45), 2.0),  # uncertain, but not short
        (heard("Turn left", no_speech=0.45, parts=2), 1.0),  # short, but two segments
        (heard("Thanks, that was helpful"), 2.0),
    ],
)
def test_recordings_that_are_answered(transcript: Transcript, seconds: float) -> None:
    assert ignore_reason(transcript, seconds) is None


def test_hallucination_detection_is_not_fooled_by_real_requests() -> None:
    assert not is_hallucination("Can you watch the timer for me")
    assert is_hallucination("Thank you for watching.")


@pytest.mark.parametrize(
    ("pieces", "action", "head", "rest"),
    [
        (["Hel", "lo ", "there."], "respond", "Hel", "lo there."),
        (["[IGN", "ORE]"], "ignore", "", ""),
        (["  [IGNORE] ", "blah"], "ignore", "", ""),
        (["[REACT]", " *smiles*"], "react", "*smiles*", ""),
        (["[Rea", "dy] set", " off"], "respond", "[Ready] set", " off"),
        ([], "ignore", "", ""),
    ],
)
def test_action_prefix_is_read_from_the_start_of_a_stream(
    pieces: list[str], action: str, head: str, rest: str
) -> None:
    stream = iter(pieces)
    found_action, found_head = read_action_prefix(stream)
    assert (found_action, found_head) == (action, head)
    assert "".join(stream) == rest


def test_sentences_are_cut_at_sentence_ends() -> None:
    pieces = iter(["Hello", " there.", " It costs 3", ".5 dollars! Really", "? Yes"])
    assert list(sentences(pieces)) == [
        "Hello there.",
        "It costs 3.5 dollars!",
        "Really?",
        "Yes",
    ]


def test_long_sentences_are_cut_at_a_comma() -> None:
    text = "word, " * 80
    parts = list(sentences(iter([text])))
    assert len(parts) > 1
    assert all(len(part) <= 240 for part in parts)


def test_the_first_spoken_piece_may_end_at_a_clause() -> None:
    pieces = iter(
        ["Berlin is lovely in spring, ", "and Emma ", "will love tulips, ", "I think. ", "Bye."]
    )
    assert list(sentences(pieces, first_clause=True)) == [
        "Berlin is lovely in spring,",
        "and Emma will love tulips, I think.",
        "Bye.",
    ]
    short = iter(["Sure, ", "here it is. ", "Done."])
    assert list(sentences(short, first_clause=True)) == ["Sure, here it is.", "Done."]


def test_a_first_sentence_without_commas_is_spoken_from_its_first_phrase() -> None:
    pieces = iter(
        ["It's a little ", "thing called ", "a bug and it ", "helps me keep ", "track. ", "Bye."]
    )
    assert list(sentences(pieces, first_clause=True)) == [
        "It's a little thing called a bug",
        "and it helps me keep track.",
        "Bye.",
    ]
    too_short = iter(["Set it up with ", "care and love. ", "Then go on with it."])
    assert list(sentences(too_short, first_clause=True)) == [
        "Set it up with care",
        "and love.",
        "Then go on with it.",
    ]
    ran_on = iter(["This is a classic ", "example of how ", "people use words ", "like just, to"])
    assert next(sentences(ran_on, first_clause=True)) == "This is a classic example"
    later = iter(["I will. ", "It is a day with sun and rain."])
    assert list(sentences(later, first_clause=True))[1] == "It is a day with sun and rain."


def test_a_sentence_ending_in_its_space_is_said_before_the_next_piece() -> None:
    pulled: list[str] = []

    def pieces() -> Iterator[str]:
        for piece in ["Fine. ", "And you?"]:
            pulled.append(piece)
            yield piece

    said = sentences(pieces())
    assert next(said) == "Fine." and pulled == ["Fine. "]
    assert list(said) == ["And you?"]
    assert list(sentences(iter(["It costs 3.", "5 euros."]))) == ["It costs 3.5 euros."]
