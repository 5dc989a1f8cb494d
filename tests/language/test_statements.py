"""Hedges and questions about what the person has to do (`language/statements.py`)."""

from __future__ import annotations

import pytest

from lobug.language.statements import asks_about_commitments, is_hedged


@pytest.mark.parametrize(
    ("said", "hedged"),
    [
        ("I think I'm moving in May.", True),
        ("Maybe my sister lives in York.", True),
        ("I'm not sure, but my boss is called Tom.", True),
        ("It's kind of a long drive.", True),
        ("I live in Leeds.", False),
        ("I bought a thinking cap.", False),  # "think" only inside a word
        ("My mightiest dog.", False),
    ],
)
def test_hedges(said: str, hedged: bool) -> None:
    assert is_hedged(said) is hedged


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What did I promise to do?", True),
        ("What's on my plate today?", True),
        ("Any deadlines this week?", True),
        ("What am I going to do on Saturday?", True),
        ("Read me my tasks.", True),
        ("Do I owe anyone money?", True),
        ("What is my name?", False),
        ("Tell me a joke.", False),
        ("What do I like?", False),
    ],
)
def test_questions_about_commitments(question: str, asks: bool) -> None:
    assert asks_about_commitments(question) is asks
