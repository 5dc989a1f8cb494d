"""Summaries, base memory and topic summaries are checked before they are stored, and built
without the model when the model's fail.

A small model can answer a summary request with a loop ("Oo, oo, oo, ...") or text in another
language; stored, it would reach the base memory and every prompt after. A cascade output is
valid when it is not degenerate, is in the conversation's language, is within length and
mentions some of its sources' salient words (the names and words said most). Then each of its
sentences must be supported by the sources it was written from (`supported`): its names and
numbers, and most of its other words, occur in them; the others are dropped and counted (a
small model adds "their family's love for pets" to what was said). The fallback is
extractive: the user's own statements and the facts. How a text was made is a field stored
with it (`Derived.made_by`), never a note inside it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from lobug.language.claims import bare, is_detail
from lobug.language.facts import FRAME_WORDS, REPORTING_WORDS, is_not_a_report
from lobug.language.quality import is_learnable, text_problem
from lobug.language.text import sentences_of, word_tokens
from lobug.memory.disclosure import self_disclosures
from lobug.memory.extraction import (
    MIN_GROUNDED_SHARE,
    MIN_STEM_CHARS,
    content_words,
    occurs_in,
    same_word,
)
from lobug.store.models import MADE_BY_MODEL, Derived, Fact, Message, Summary

MIN_OUTPUT_CHARS = 20
MAX_SUMMARY_CHARS = 1600  # SUMMARY_MAX_TOKENS of text, and some slack
MAX_BASE_MEMORY_CHARS = 3200  # "at most 400 words", and some slack
SALIENT_WORDS = 12
MIN_SALIENT_MENTIONS = 2
MAX_EXTRACTIVE_STATEMENTS = 8
MAX_QUOTED_CHARS = 160


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
    if is_not_a_report(text):
        return "not a third-person account (a question, I/you, or a transcript line)"
    salient = salient_words(sources)
    said = set(content_words(text))
    mentioned = sum(1 for word in salient if occurs_in(word, said))
    if mentioned < min(MIN_SALIENT_MENTIONS, len(salient)):
        return "mentions none of what was said"
    return None


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
# A line's label ("User Profile: ...", "Name: ..."): framing, not a claim.
_LABEL = re.compile(r"[^:.!?]{1,40}:\s+")  # matched where the bullet ends
MAX_LABEL_WORDS = 4
MAX_HEADING_WORDS = 5


def supported(text: str, sources: Sequence[str]) -> Derived:
    """`text` with only the sentences `sources` support (`is_supported`), line by line (a
    bullet keeps its mark; a heading stays when something stays under it), and how many
    sentences were dropped; `made_by` model."""
    said = WordIndex(w for source in sources for w in (*words_said(source), *content_words(source)))
    lines: list[tuple[str, bool]] = []  # (line, is a heading)
    dropped = 0
    for line in text.splitlines():
        if not line.strip() or _is_heading(line):
            lines.append((line, True))
            continue
        prefix, body = _framing(line)
        sentences = [part for part in map(str.strip, sentences_of(body)) if part]
        kept = [part for part in sentences if is_supported(part, said)]
        dropped += len(sentences) - len(kept)
        if kept:
            lines.append((prefix + " ".join(kept), False))
    return Derived("\n".join(_with_their_headings(lines)).strip(), MADE_BY_MODEL, dropped)


def _framing(line: str) -> tuple[str, str]:
    """A line's bullet mark and label (kept as they are), and the rest."""
    mark = _BULLET.match(line)
    start = mark.end() if mark else 0
    label = _LABEL.match(line, start)
    if label and len(label.group().split()) <= MAX_LABEL_WORDS:
        start = label.end()
    return line[:start], line[start:]


class WordIndex:
    """The words of the sources, and by their first `MIN_STEM_CHARS` letters, so that a word
    said with another ending ("works" for "work") is found without reading every word."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = frozenset(words)
        self.by_stem: dict[str, list[str]] = {}
        for word in self.words:
            self.by_stem.setdefault(word[:MIN_STEM_CHARS], []).append(word)

    def holds(self, word: str) -> bool:
        """Whether `word`, or the same word with another ending (`same_word`), was said."""
        if word in self.words:
            return True
        return any(same_word(word, other) for other in self.by_stem.get(word[:MIN_STEM_CHARS], ()))


def words_said(text: str) -> list[str]:
    return [bare(token) for token in word_tokens(text)]


def is_supported(sentence: str, said: WordIndex) -> bool:
    """Whether a sentence's names and numbers (`claims.is_detail`) all occur in `said` (the
    sources' words), and `MIN_GROUNDED_SHARE` of its other content words (other endings of a
    word count; words that report speech, and the user's and the assistant's names, do not).
    A sentence of function words claims nothing and stays."""
    tokens = word_tokens(sentence)
    details = [bare(token) for position, token in enumerate(tokens) if is_detail(token, position)]
    if not all(detail in FRAME_WORDS or said.holds(detail) for detail in details):
        return False
    words = [bare(w) for w in content_words(sentence) if w not in REPORTING_WORDS | FRAME_WORDS]
    if not words:
        return True
    return sum(1 for w in words if said.holds(w)) / len(words) >= MIN_GROUNDED_SHARE


def _is_heading(line: str) -> bool:
    stripped = line.strip()
    if stripped.startswith("#"):
        return True
    bare_line = stripped.strip("*_ ")
    return bare_line.endswith(":") and len(bare_line.split()) <= MAX_HEADING_WORDS


def _with_their_headings(lines: Sequence[tuple[str, bool]]) -> list[str]:
    """The lines, less each heading with no kept line under it, and blank lines only between
    kept ones."""
    out: list[str] = []
    for position, (line, heading) in enumerate(lines):
        if not line.strip():
            if out and out[-1].strip():
                out.append("")
        elif not heading or _holds_content(lines[position + 1 :]):
            out.append(line)
    return out


def _holds_content(rest: Sequence[tuple[str, bool]]) -> bool:
    """Whether a kept line comes before the next heading."""
    for line, heading in rest:
        if not heading:
            return True
        if line.strip():
            return False
    return False


def checked_output(
    text: str, sources: Sequence[str], *, language: str, max_chars: int
) -> tuple[Derived | None, str | None]:
    """The model's `text` as it may be stored (its unsupported sentences dropped and
    counted), or None and why not (`output_problem`, before or after the drop)."""
    problem = output_problem(text, sources, language=language, max_chars=max_chars)
    if problem is not None:
        return None, problem
    kept = supported(text, sources)
    if kept.dropped_sentences:
        problem = output_problem(kept.content, sources, language=language, max_chars=max_chars)
        if problem is not None:
            return None, f"{kept.dropped_sentences} sentences unsupported, the rest {problem}"
    return kept, None


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
    return " ".join(_sentence(s) for s in statements[:MAX_EXTRACTIVE_STATEMENTS])


def extractive_base_memory(base: str, summaries: Sequence[Summary], facts: Sequence[Fact]) -> str:
    """The current document's lines, then the facts and summaries as bullets, within length."""
    lines = [line for line in base.splitlines() if line.strip()]
    items = [fact.content for fact in facts] + [summary.content for summary in summaries]
    used = sum(len(line) + 1 for line in lines)
    known = "\n".join(lines)
    sentences = (_sentence(part) for item in items for part in sentences_of(item))
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
