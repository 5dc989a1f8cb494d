"""Summaries and base memory are checked before they are stored, and built without the model
when the model's fail.

A small model can answer a summary request with a loop ("Oo, oo, oo, ...") or text in another
language; stored, it would reach the base memory and every prompt after. A cascade output is
valid when it is not degenerate, is in the conversation's language, is within length and
mentions some of its sources' salient words (the names and words said most). The fallback is
extractive: the user's own statements and the facts, marked as built without the model.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from lobug.memory.disclosure import self_disclosures
from lobug.memory.extraction import content_words, occurs_in
from lobug.quality import is_learnable, text_problem
from lobug.store.models import Fact, Message, Summary

MIN_OUTPUT_CHARS = 20
MAX_SUMMARY_CHARS = 1600  # SUMMARY_MAX_TOKENS of text, and some slack
MAX_BASE_MEMORY_CHARS = 3200  # "at most 400 words", and some slack
SALIENT_WORDS = 12
MIN_SALIENT_MENTIONS = 2
MAX_EXTRACTIVE_STATEMENTS = 8
MAX_QUOTED_CHARS = 160
EXTRACTIVE_SUMMARY = "Extractive summary (the user's own words; the model's summary failed):"
EXTRACTIVE_BASE_MEMORY = "Key facts (listed without the model; its document failed its checks):"


# A summary reports what was said: no questions, no one speaking, no transcript lines.
_NOT_A_REPORT = re.compile(
    r"\?|\b(I|I'm|I've|I'd|I'll|me|my|you|you're|your)\b|^\s*(User|Assistant|\w+):\s",
    re.MULTILINE,
)


def salient_words(texts: Sequence[str]) -> list[str]:
    """The content words said most often in `texts`, first said first among equals."""
    counts = Counter(word for text in texts for word in content_words(text))
    return [word for word, _ in counts.most_common(SALIENT_WORDS)]


def output_problem(
    text: str, sources: Sequence[str], *, language: str, max_chars: int
) -> str | None:
    """Why a summary or base memory written from `sources` must not be stored, or None."""
    if len(text.strip()) < MIN_OUTPUT_CHARS:
        return "too short"
    if len(text) > max_chars:
        return f"longer than {max_chars} characters"
    problem = text_problem(text, language)
    if problem is not None:
        return problem
    if _NOT_A_REPORT.search(text):
        return "not a third-person account (a question, I/you, or a transcript line)"
    salient = salient_words(sources)
    said = set(content_words(text))
    mentioned = sum(1 for word in salient if occurs_in(word, said))
    if mentioned < min(MIN_SALIENT_MENTIONS, len(salient)):
        return "mentions none of what was said"
    return None


def learnable(messages: Sequence[Message]) -> list[Message]:
    """The messages whose words may be summarized: not the fallback said for a refused reply."""
    return [m for m in messages if m.role == "user" or is_learnable(m.metadata)]


def user_words(messages: Sequence[Message]) -> list[str]:
    return [m.content for m in messages if m.role == "user"]


def extractive_summary(messages: Sequence[Message]) -> str:
    """The user's own statements about themselves in the span, in the third person; what
    they said, quoted, when they made none."""
    statements = [
        fact.content for text in user_words(messages) for fact in self_disclosures(text, ())
    ]
    if not statements:
        statements = [f'The user said "{_clipped(text)}"' for text in user_words(messages)]
    lines = [_sentence(s) for s in statements[:MAX_EXTRACTIVE_STATEMENTS]]
    return " ".join([EXTRACTIVE_SUMMARY, *lines])


def extractive_base_memory(base: str, summaries: Sequence[Summary], facts: Sequence[Fact]) -> str:
    """The current document's lines, then the facts and summaries as bullets, within length."""
    lines = [line for line in base.splitlines() if line.strip()] or [EXTRACTIVE_BASE_MEMORY]
    items = [fact.content for fact in facts] + [
        summary.content.removeprefix(EXTRACTIVE_SUMMARY).strip() for summary in summaries
    ]
    used = sum(len(line) + 1 for line in lines)
    known = "\n".join(lines)
    sentences = (_sentence(part) for item in items for part in re.split(r"(?<=[.!?])\s+", item))
    for item in dict.fromkeys(sentence for sentence in sentences if len(sentence) > 1):
        line = f"- {item}"
        if item in known:
            continue
        used += len(line) + 1
        if used > MAX_BASE_MEMORY_CHARS:
            break
        lines.append(line)
    return "\n".join(lines)


def _clipped(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_QUOTED_CHARS else text[: MAX_QUOTED_CHARS - 3] + "..."


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


# What the model writes for a topic (`memory/topics.py`) is checked here too.
MAX_TOPIC_NAME_WORDS = 6
MAX_TOPIC_NAME_CHARS = 60
MAX_TOPIC_SUMMARY_CHARS = 600
MAX_TOPIC_ITEMS = 5
MAX_TOPIC_ITEM_CHARS = 200
FALLBACK_NAME_WORDS = 3


def topic_name_problem(name: str, sources: Sequence[str], *, language: str) -> str | None:
    """Why a topic name written from `sources` must not be stored, or None: empty, longer
    than a title, a loop or another language, or naming nothing that was said."""
    words = content_words(name)
    if not words:
        return "no words"
    if len(name.split()) > MAX_TOPIC_NAME_WORDS or len(name) > MAX_TOPIC_NAME_CHARS:
        return "longer than a title"
    problem = text_problem(name, language)
    if problem is not None:
        return problem
    said = {word for text in sources for word in content_words(text)}
    if not any(occurs_in(word, said) for word in words):
        return "names none of what was said"
    return None


def topic_items(items: Sequence[str], *, language: str, question: bool) -> tuple[str, ...]:
    """The open questions (`question`: each ends with "?") or next actions worth keeping: one
    line each, within length, no loop, in language; at most `MAX_TOPIC_ITEMS`."""
    kept = []
    for item in items:
        line = " ".join(item.split())
        if not line or len(line) > MAX_TOPIC_ITEM_CHARS or line.endswith("?") != question:
            continue
        if text_problem(line, language) is None:
            kept.append(line)
    return tuple(dict.fromkeys(kept))[:MAX_TOPIC_ITEMS]


def fallback_topic_name(sources: Sequence[str]) -> str:
    """A topic's name without the model: its most said content words, capitalized."""
    words = salient_words(sources)[:FALLBACK_NAME_WORDS] or ["notes"]
    return " · ".join(word.capitalize() for word in words)


def extractive_topic_summary(sources: Sequence[str]) -> str:
    """A topic's summary without the model: its first texts, whole, within length."""
    taken: list[str] = []
    for text in sources:
        sentence = _sentence(" ".join(text.split()))
        if taken and sum(len(t) + 1 for t in taken) + len(sentence) > MAX_TOPIC_SUMMARY_CHARS:
            break
        taken.append(sentence)
    return " ".join(taken)[:MAX_TOPIC_SUMMARY_CHARS]
