"""Short spoken answers: a voice turn asks the model for one or two short sentences, and what
is spoken (and stored in the log) ends at a sentence boundary after `max_sentences`.

The same cut serves both audio paths: `cut` on a whole reply, `capped` on a streamed one,
which stops pulling from the model at the boundary so the model stops writing there too."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from lobug.backends.base import ChatMessage

SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*(\s+|$)|\n+")


@dataclass(frozen=True)
class SpokenLimit:
    """How long a spoken answer may be: sentences, and tokens the model may write; and how
    many tokens of notes found for the turn the model reads first (None: no limit)."""

    max_sentences: int
    max_tokens: int
    notes_tokens: int | None = None

    @property
    def instruction(self) -> str:
        if self.max_sentences == 1:
            return "You are speaking aloud: answer in one short sentence."
        return f"You are speaking aloud: answer in at most {self.max_sentences} short sentences."

    def instructed(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """`messages` with the instruction added to the first system message."""
        copied: list[ChatMessage] = [{"role": m["role"], "content": m["content"]} for m in messages]
        first = next((m for m in copied if m["role"] == "system"), None)
        if first is None:
            return [{"role": "system", "content": self.instruction}, *copied]
        first["content"] = f"{first['content']}\n{self.instruction}"
        return copied

    def cut(self, text: str) -> str:
        """A whole reply up to the end of its last allowed sentence."""
        ends = sentence_ends(text, finished=True)
        if len(ends) < self.max_sentences:
            return text.strip()
        return text[: ends[self.max_sentences - 1]].strip()

    def capped(self, pieces: Iterable[str]) -> Iterator[str]:
        """A streamed reply's pieces up to the end of its last allowed sentence; `cut` of
        everything pulled from `pieces` is exactly what this yielded."""
        pulled = ""
        for piece in pieces:
            pulled += piece
            ends = sentence_ends(pulled, finished=False)
            if len(ends) >= self.max_sentences:
                rest = pulled[len(pulled) - len(piece) : ends[self.max_sentences - 1]]
                if rest:
                    yield rest
                return
            yield piece


def sentence_ends(text: str, *, finished: bool) -> list[int]:
    """Where the sentences of `text` end. In text still being written, a sentence end that
    reaches its last character is not counted yet ("3." may become "3.5")."""
    ends = [match.end() for match in SENTENCE_END.finditer(text)]
    if not finished and ends and ends[-1] >= len(text):
        ends.pop()
    return ends
