"""Chat messages as `learning()` and the `/v1` proxy both read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from lobug.client.messages import content_text, insert_after_system, last_user_text


@dataclass
class Part:
    type: str
    text: str


@dataclass
class Reply:
    role: str
    content: str


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain", "plain"),
        (None, ""),
        ([], ""),
        (
            [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}],
            "a\nb",
        ),
        (({"type": "text", "text": "tuple"},), "tuple"),
        ([Part("text", "object part")], "object part"),
        ([{"type": "text", "text": 5}, "loose string", {"type": "text"}], ""),
        (5, None),
        ({"type": "text", "text": "a part, not a list"}, None),
        (b"bytes", None),
    ],
)
def test_content_text(content: Any, text: str | None) -> None:
    assert content_text(content) == text


def test_last_user_text_is_the_last_user_turn_stripped() -> None:
    messages: list[Any] = [
        {"role": "user", "content": "first"},
        Reply("assistant", "answer"),
        {"role": "user", "content": [{"type": "text", "text": "  second  "}]},
        {"role": "assistant", "content": "prefill"},
    ]
    assert last_user_text(messages) == "second"


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [{"role": "system", "content": "only a system message"}],
        [{"role": "user", "content": "earlier"}, {"role": "user", "content": "   "}],
        [{"role": "user", "content": "earlier"}, {"role": "user", "content": 5}],
    ],
)
def test_last_user_text_never_falls_back_to_an_earlier_turn(messages: list[Any]) -> None:
    assert last_user_text(messages) == ""


def test_insert_after_system_keeps_leading_system_and_developer_messages_first() -> None:
    messages: list[Any] = [
        {"role": "system", "content": "s"},
        {"role": "developer", "content": "d"},
        {"role": "user", "content": "u"},
        {"role": "system", "content": "late"},
    ]
    memory = {"role": "system", "content": "memory"}
    assert insert_after_system(messages, memory) == [*messages[:2], memory, *messages[2:]]
    assert insert_after_system([], memory) == [memory]
    assert messages[2] == {"role": "user", "content": "u"}  # the caller's list is not changed
