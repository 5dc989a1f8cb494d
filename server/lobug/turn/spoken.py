"""Short answers: what is said or shown of an answer (and stored in the log) ends at a
sentence boundary after `max_sentences` (`SentenceLimit`). A voice turn also asks the model for
one or two short sentences (`SpokenLimit`); a text turn keeps the standing prompt's "one to
three" (`Settings.text_max_sentences`): a small model writes on past them, and what it writes
there is where it wanders and what it costs (64 tokens, about 2 s on two cores).

The same cut serves every path: `cut` on a whole reply, `capped` on a streamed one, which
stops pulling from the model at the boundary so the model stops writing there too."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass

from lobug.backends.base import ChatMessage, with_rule
from lobug.language.text import ARRIVING_SENTENCE_END, CLAUSE_END, PHRASE_START

MAX_SENTENCE_CHARS = 240
FIRST_CLAUSE_CHARS = 16  # a shorter opening clause ("Sure, ") sounds clipped alone
FIRST_PHRASE_WORDS = 4  # the fewest words an opening phrase is said with


@dataclass(frozen=True)
class SentenceLimit:
    """How long an answer may be: sentences, and words (a sentence after the first is kept
    only while the answer stays within `max_words`; the first is always kept whole); and
    how many tokens of the notes found for the turn the model reads first (None: no limit)."""

    max_sentences: int
    _: KW_ONLY
    max_words: int | None = None
    notes_tokens: int | None = None

    def instructed(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """`messages` with what the model is told of the limit: nothing, for a text answer."""
        return list(messages)

    def cut(self, text: str) -> str:
        """A whole reply up to the end of its last allowed sentence."""
        ends = sentence_ends(text, finished=True)
        if text[ends[-1] if ends else 0 :].strip():
            ends.append(len(text))  # an unfinished last sentence
        kept = 0
        while kept < len(ends) and self._may_say(kept, text[: ends[kept]]):
            kept += 1
        return text[: ends[kept - 1]].strip() if kept else ""

    def capped(self, pieces: Iterable[str]) -> Iterator[str]:
        """A streamed reply's pieces up to the end of its last allowed sentence; `cut` of
        everything pulled from `pieces` is exactly what this yielded. The first sentence
        passes as it comes; a later one is held until it ends (it may not be said), and
        pulling stops as soon as it cannot be."""
        pulled, said, ended = "", 0, 0  # text pulled, how much of it said, sentences ended
        for piece in pieces:
            pulled += piece
            ends = sentence_ends(pulled, finished=False)
            if not ends:
                yield piece
                said = len(pulled)
                continue
            kept = 0
            while kept < len(ends) and self._may_say(kept, pulled[: ends[kept]]):
                kept += 1
            if kept and ends[kept - 1] > said:
                yield pulled[said : ends[kept - 1]]
                said = ends[kept - 1]
            if kept < len(ends) or not self._may_say(len(ends), pulled):
                return
            ended = len(ends)
        if pulled[said:] and self._may_say(ended, pulled):
            yield pulled[said:]

    def sentences(self, pieces: Iterable[str]) -> Iterator[str]:
        """A streamed reply's pieces as the sentences said (`capped`, then `sentences`)."""
        return sentences(self.capped(pieces), first_clause=True)

    def _may_say(self, index: int, through: str) -> bool:
        """Whether sentence `index` (from 0), ending the text `through`, may be said."""
        if index >= self.max_sentences:
            return False
        return index == 0 or self.max_words is None or len(through.split()) <= self.max_words


@dataclass(frozen=True)
class SpokenLimit(SentenceLimit):
    """A spoken answer's limit: a `SentenceLimit`, the tokens the model may write, and the
    instruction to speak within it."""

    max_tokens: int

    @property
    def instruction(self) -> str:
        if self.max_sentences == 1:
            return "You are speaking aloud: answer in one short sentence."
        return f"You are speaking aloud: answer in at most {self.max_sentences} short sentences."

    def instructed(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """`messages` with the instruction added to the first system message."""
        return with_rule(messages, self.instruction)


def sentence_ends(text: str, *, finished: bool) -> list[int]:
    """Where the sentences of `text` end. In text still being written, a sentence end that
    reaches its last character is not counted yet ("3." may become "3.5"), unless the text
    ends with the space after it."""
    ends = [match.end() for match in ARRIVING_SENTENCE_END.finditer(text)]
    if not finished and ends and ends[-1] >= len(text) and not text[-1].isspace():
        ends.pop()
    return ends


def sentences(pieces: Iterator[str], *, first_clause: bool = False) -> Iterator[str]:
    """Cut a stream of text pieces at sentence ends (or at a comma when a sentence runs long).
    With `first_clause` the first piece of speech may end at a clause (", ") or, in a
    sentence without one, before a phrase of at least `FIRST_PHRASE_WORDS` words ("It's a
    lovely day | with a light breeze"), so the first audio leaves sooner."""
    buffer = ""
    for piece in pieces:
        buffer += piece
        while True:
            cut = _sentence_cut(buffer)
            if first_clause and (cut is None or cut == len(buffer)):
                cut = _clause_cut(buffer) or cut  # a whole first sentence still starts early
            if cut is None:
                break
            sentence, buffer = buffer[:cut].strip(), buffer[cut:]
            if sentence:
                first_clause = False
                yield sentence
    if buffer.strip():
        yield buffer.strip()


def _sentence_cut(buffer: str) -> int | None:
    ends = sentence_ends(buffer, finished=False)  # "3." may become "3.5"; "3. " may not
    if ends:
        return ends[0]
    if len(buffer) > MAX_SENTENCE_CHARS:
        comma = buffer.rfind(", ", 0, MAX_SENTENCE_CHARS)
        return comma + 2 if comma > 0 else MAX_SENTENCE_CHARS
    return None


def _clause_cut(buffer: str) -> int | None:
    for match in CLAUSE_END.finditer(buffer):
        if match.start() >= FIRST_CLAUSE_CHARS and match.end() < len(buffer):
            return match.end()
    for match in PHRASE_START.finditer(buffer):
        said = buffer[: match.start()]
        if len(said.strip()) >= FIRST_CLAUSE_CHARS and len(said.split()) >= FIRST_PHRASE_WORDS:
            return match.end()
    return None
