"""Token estimates without a tokenizer: the one rule every prompt budget uses.

A byte-level BPE tokenizer (SmolLM2's, Llama's, GPT's) spends at least one token per ~4
characters of English and up to one token per UTF-8 byte of anything else: 4,000 emoji are
16,000 bytes and came to 13,685 SmolLM2 tokens, while a budget of 3.5 characters per token
counted them as 1,143. So the estimate is cautious for every script:

    tokens = ceil(ASCII characters / 3) + UTF-8 bytes of the other characters

English comes out about 25% above the real count, CJK and emoji at or above it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

ASCII_CHARS_PER_TOKEN = 3
# Room for the chat template, role markers and the instructions' own slack in one prompt.
PROMPT_OVERHEAD_TOKENS = 256
# Role markers and separators around one item of a prompt (a chat message, a listed fact, a
# transcript line): the one per-item overhead every budget adds.
ITEM_OVERHEAD_TOKENS = 4


class PromptTooLong(ValueError):
    """What a caller sent alone does not fit the model's context (413
    `text_too_long_for_model`); nothing of it was stored."""


def estimate_tokens(text: str) -> int:
    """An upper estimate of the tokens `text` costs (see the module's rule)."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    other_bytes = len(text.encode("utf-8", "surrogatepass")) - ascii_chars
    return math.ceil(ascii_chars / ASCII_CHARS_PER_TOKEN) + other_bytes


def prompt_budget_tokens(context_tokens: int, reply_tokens: int) -> int:
    """Tokens a prompt may spend: the context window less the reply and the overhead."""
    return max(0, context_tokens - reply_tokens - PROMPT_OVERHEAD_TOKENS)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` whose estimate is at most `max_tokens`."""
    if estimate_tokens(text) <= max_tokens:
        return text
    ascii_chars = 0
    other_bytes = 0
    for index, char in enumerate(text):
        if char < "\x80":
            ascii_chars += 1
        else:
            other_bytes += len(char.encode("utf-8", "surrogatepass"))
        if math.ceil(ascii_chars / ASCII_CHARS_PER_TOKEN) + other_bytes > max_tokens:
            return text[:index]
    return text


T = TypeVar("T")


def oldest_that_fit(items: Sequence[T], size: Callable[[T], int], budget: int) -> list[T]:
    """The longest prefix of `items` (oldest first) whose sizes add up to at most `budget`;
    always at least one item, so a backlog drains even when one item alone is large (the
    transcript cuts long messages)."""
    taken: list[T] = []
    used = 0
    for item in items:
        used += size(item)
        if taken and used > budget:
            break
        taken.append(item)
    return taken
