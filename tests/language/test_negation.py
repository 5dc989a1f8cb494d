"""How an English sentence says no (`language/negation.py`)."""

from __future__ import annotations

import pytest

from lobug.language.negation import negated


@pytest.mark.parametrize(
    "said",
    [
        "The user does not have a dog",
        "The user doesn't have a dog",
        "The user doesnt have a dog",
        "The user doesn’t drink coffee",
        "The user never swims",
        "Nobody lives there",
        "The user won't fly",
        "The user CANNOT drive",
    ],
)
def test_negated(said: str) -> None:
    assert negated(said)


@pytest.mark.parametrize(
    "said", ["The user has a dog", "The user knows a notable person", "Nothingness is a book"]
)
def test_not_negated(said: str) -> None:
    assert not negated(said)
