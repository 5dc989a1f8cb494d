"""The degeneracy and language checks, on replies the bundled model really gave (issue 18)."""

from __future__ import annotations

import pytest

from lobug.language.quality import (
    degeneracy,
    distinct_word_ratio,
    off_language,
    text_problem,
)

LOOPS = [
    "Oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo, oo",
    "Oo, oo, oo, oo, oo, ...",
    "I love Lisbon! I love Lisbon! I love Lisbon!",
    "That is great, Joana and you and Joana and you and Joana and you and Joana",
    "Hahahahahahahahahahahahahahahahahahahahahahahahahahaha",
    "You are a nurse. That is nice. You are a nurse. Good. You are a nurse.",
]
SANE = [
    "That sounds lovely! Lisbon is a beautiful city. How long have you lived there with Joana?",
    "Being a nurse at Santa Maria must be demanding. Do you work night shifts?",
    "Oh no, peanuts are in so many things. I will remember that you are allergic to them.",
    "No, no, no, that is not what I meant.",
    "Oh no, no no no! I'm so sorry, I'm so sorry. What's your cat, my dear?",
    "Okay!",
    "",
]
PORTUGUESE = [
    "Não pode ser mais difícil que estejo também já esta deixar com Joana!",
    "Joana e o mesmo",
    "Olá! Você mora em Lisboa com a Joana, que bom.",
]


@pytest.mark.parametrize("text", LOOPS)
def test_loops_are_degenerate(text: str) -> None:
    assert degeneracy(text) is not None, text


@pytest.mark.parametrize("text", SANE)
def test_ordinary_replies_are_not_degenerate(text: str) -> None:
    assert degeneracy(text) is None


def test_the_distinct_word_ratio_of_a_loop_is_low() -> None:
    assert distinct_word_ratio("Oo, oo, oo, oo, oo, oo, oo, oo, oo, oo") == pytest.approx(0.1)
    assert distinct_word_ratio(SANE[0]) > 0.8


@pytest.mark.parametrize("text", PORTUGUESE)
def test_portuguese_is_off_language_in_an_english_conversation(text: str) -> None:
    assert off_language(text, "en") == "pt"
    assert off_language(text, "pt") is None


@pytest.mark.parametrize("text", SANE[:4])
def test_english_is_in_language(text: str) -> None:
    assert off_language(text, "en") is None


def test_other_languages_are_recognised() -> None:
    assert off_language("Bonjour, je suis très content de vous voir.", "en") == "fr"
    assert off_language("Das ist sehr gut, danke!", "en") == "de"
    assert off_language("Das ist sehr gut, danke!", "de") is None


def test_undecided_or_unlisted_languages_pass() -> None:
    assert off_language("Há alguma mesa!", "en") is None  # one marker word: undecided
    assert off_language("Não pode ser mais difícil", "auto") is None
    assert off_language("Não pode ser mais difícil", "ja") is None


def test_text_problem_names_the_reason() -> None:
    assert text_problem(LOOPS[0], "en") == "degenerate: under 30% distinct words"
    assert text_problem(PORTUGUESE[0], "en") == "off-language: pt, not en"
    assert text_problem(SANE[0], "en") is None
