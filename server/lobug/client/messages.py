"""OpenAI chat messages, read the same way by `learning()` and by the server's `/v1` proxy.

A message is a dict (a request's JSON, the `openai` package's TypedDicts) or an object (a
previous reply's message handed back); its content is a string or a list of parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

SYSTEM_ROLES = ("system", "developer")

M = TypeVar("M")


def field_of(item: Any, name: str) -> Any:
    """A field of a message or part given as a dict or as an object."""
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def content_text(content: Any) -> str | None:
    """Text of a message's content: a string, or the text parts of a multimodal list (joined
    by newlines); empty for no content; None for content of any other shape."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list | tuple):
        parts = [field_of(part, "text") for part in content if field_of(part, "type") == "text"]
        return "\n".join(part for part in parts if isinstance(part, str))
    return None


def last_user_text(messages: Sequence[Any]) -> str:
    """The text of the last user message, stripped: what the user says now. Empty when there
    is no user message or the last one holds no text (an earlier message is never taken for
    it, so a turn is never stored or searched twice)."""
    for message in reversed(messages):
        if field_of(message, "role") == "user":
            return (content_text(field_of(message, "content")) or "").strip()
    return ""


def insert_after_system(messages: Sequence[M], message: M) -> list[M]:
    """A new list with `message` after the leading system (and developer) messages."""
    at = 0
    while at < len(messages) and field_of(messages[at], "role") in SYSTEM_ROLES:
        at += 1
    return [*messages[:at], message, *messages[at:]]
