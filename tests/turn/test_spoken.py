"""The cut of spoken answers at a sentence boundary (`lobug.turn.spoken`)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from lobug.turn.spoken import SpokenLimit

TWO = SpokenLimit(max_sentences=2, max_tokens=96)


def pieces_of(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def test_a_whole_reply_is_cut_after_its_second_sentence() -> None:
    assert TWO.cut("One. Two! Three? Four.") == "One. Two!"
    assert TWO.cut("Only one sentence") == "Only one sentence"
    assert TWO.cut("Line one\nLine two\nLine three") == "Line one\nLine two"


def test_a_stream_stops_being_pulled_at_the_boundary() -> None:
    pulled: list[str] = []

    def model() -> object:
        for piece in pieces_of("It costs 3.5 euros. Cheap! Then more words follow here."):
            pulled.append(piece)
            yield piece

    said = "".join(TWO.capped(model()))  # type: ignore[arg-type]
    assert said.strip() == "It costs 3.5 euros. Cheap!"
    assert len(pulled) < len(pieces_of("It costs 3.5 euros. Cheap! Then more words follow here."))


SHORT = SpokenLimit(max_sentences=2, max_tokens=96, max_words=12)


def test_a_later_sentence_is_said_only_within_the_words_allowed() -> None:
    assert SHORT.cut("Yes, it is. Tea is good for you.") == "Yes, it is. Tea is good for you."
    assert SHORT.cut("Yes, it is. Tea is very good for you and all of us.") == "Yes, it is."
    long_first = "To plan a trip to the mountains you will need boots and a warm coat."
    assert SHORT.cut(f"{long_first} Take water.") == long_first  # the first is said whole
    assert (
        SHORT.cut("Yes. And then some more words keep coming without an end of any kind") == "Yes."
    )


def test_a_stream_stops_being_pulled_once_a_later_sentence_cannot_be_said() -> None:
    text = "Yes, it is. Tea is very good for you and for everyone else who drinks it daily."
    pulled: list[str] = []

    def model() -> object:
        for piece in pieces_of(text):
            pulled.append(piece)
            yield piece

    said = list(SHORT.capped(model()))  # type: ignore[arg-type]
    assert "".join(said).strip() == "Yes, it is."
    assert said[0] == "Yes, "  # the first sentence passes as it comes
    assert "".join(pulled).strip() == "Yes, it is. Tea is very good for you and for everyone else"


def test_the_instruction_goes_into_the_first_system_message() -> None:
    messages = TWO.instructed(
        [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}]
    )
    assert (
        messages[0]["content"].startswith("Be kind.\n")
        and "2 short sentences" in messages[0]["content"]
    )
    assert messages[1] == {"role": "user", "content": "hi"}
    alone = SpokenLimit(1, 10).instructed([{"role": "user", "content": "hi"}])
    assert alone[0]["role"] == "system" and "one short sentence" in alone[0]["content"]


@given(
    st.lists(
        st.sampled_from(["Yes", "no", ".", "!", " ", "\n", "3", ".5", "ok?", ")"]), max_size=40
    ),
    st.integers(min_value=1, max_value=4),
    st.none() | st.integers(min_value=1, max_value=12),
)
def test_what_a_stream_says_is_what_the_cut_of_what_it_pulled_says(
    pieces: list[str], max_sentences: int, max_words: int | None
) -> None:
    limit = SpokenLimit(max_sentences, 96, max_words=max_words)
    pulled: list[str] = []

    def model() -> object:
        for piece in pieces:
            pulled.append(piece)
            yield piece

    said = "".join(limit.capped(model()))  # type: ignore[arg-type]
    assert said.strip() == limit.cut("".join(pulled))
