"""The one word splitter (`lobug.text`), Unicode-aware, and what rests on it."""

from __future__ import annotations

from lobug.memory.extraction import is_grounded
from lobug.text import word_tokens, words_of


def test_words_are_letters_and_digits_of_any_script_with_inner_apostrophes() -> None:
    assert words_of("Zoë Müller's dog, well-known_x: 42!") == [
        "zoë",
        "müller's",
        "dog",
        "well",
        "known",
        "x",
        "42",
    ]
    assert word_tokens("Ich heiße Jürgen") == ["Ich", "heiße", "Jürgen"]


def test_a_name_outside_ascii_is_grounded_as_one_word() -> None:
    """The old ASCII splitter read "Jürgen Müller" as "rgen" and "ller", so the true fact was
    not grounded and was dropped."""
    said = ["My neighbour is called Jürgen Müller."]
    assert is_grounded("The user's neighbour is called Jürgen Müller", said)
    assert not is_grounded("The user's neighbour is called Jürgen Mahler", said)
