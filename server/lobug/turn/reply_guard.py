"""Every reply is checked before it is stored or spoken (`lobug.language.quality` has the
rules).

A reply that loops or is in another language than the conversation's is asked for once more
with safer settings (a lower temperature, fewer tokens, a plainer instruction); when that one
fails too, a short honest fallback is said instead. The log marks such replies in the
assistant message's metadata (`guard`, its marks in `lobug.language.quality`), and a fallback is
never
learned from (`quality.is_learnable`): the memory pipeline reads only the user's words of
that exchange.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from lobug.backends.base import AbandonCheck, ChatBackend, ChatMessage, with_closing_rule
from lobug.language import said_in
from lobug.language.claims import (
    claimed_action,
    invented_details,
    names_given_beyond,
    speaks_as_them,
)
from lobug.language.quality import (
    CUT,
    FALLBACK,
    INTERRUPTED,
    REGENERATED,
    STAGED,
    language_rule,
    reply_problem,
    text_problem,
    without_stage_directions,
)
from lobug.language.text import ARRIVING_SENTENCE_END
from lobug.turn.decision import Decision, read_action_prefix

log = logging.getLogger(__name__)

FALLBACK_REPLY = "Sorry, I lost my train of thought. Could you say that again?"
# Said instead of a reply that twice made up something about the person.
UNKNOWN_REPLY = "I don't know that yet. Tell me, and I'll remember."
INVENTED = "invented"  # the start of the problem of a reply that made up a personal detail
# Said instead of a reply that twice claimed a change to the memory nobody made.
NOT_DONE_REPLY = (
    "I haven't changed anything. To have me forget something, say "
    '"forget what I told you about" and what it was.'
)
CLAIMED = "claimed"  # the start of the problem of a reply claiming an action not taken
# The second try: colder and shorter, so a loop has less room to start.
RETRY_TEMPERATURE = 0.2
RETRY_MAX_TOKENS = 96
# A streamed text with no sentence end is checked and sent in chunks of about this size.
MAX_CHUNK_CHARS = 200


def guard_metadata(
    decision: Decision, tools_used: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """What an assistant message's metadata records: the guard's marks, and the device
    tools the model called while it answered (`tools`)."""
    metadata: dict[str, Any] = {"tools": tools_used} if tools_used else {}
    if decision.guard is not None:
        metadata.update(guard=decision.guard, problem=decision.problem or "")
    return metadata or None


def interrupted(said: str) -> Decision:
    """What a turn the person cut off (barge-in) stores: what they heard of the answer,
    marked cut as `interrupted`; nothing when they heard none of it."""
    if not said.strip():
        return Decision("ignore", "")
    return Decision("respond", said.strip(), CUT, INTERRUPTED)


def careful_messages(messages: Sequence[ChatMessage], language: str) -> list[ChatMessage]:
    """`messages` with a plainer instruction after the person's words, for a second try that
    reads only the instruction when the first try's prompt is still cached."""
    rule = "Reply in one or two short, plain sentences and never repeat yourself."
    return with_closing_rule(messages, f"{language_rule(language)} {rule}".strip())


def careful_stream(
    chat: ChatBackend,
    messages: Sequence[ChatMessage],
    language: str,
    max_tokens: int,
    abandoned: AbandonCheck | None = None,
) -> Iterator[str]:
    """The model's second answer after a refused one, with safer settings (a plainer
    instruction, a lower temperature, fewer tokens), streamed so its first sentence can be
    said while the model writes the rest; an action prefix read first (anything but an
    answer is no answer)."""
    stream = chat.stream(
        careful_messages(messages, language),
        max_tokens=min(RETRY_MAX_TOKENS, max_tokens),
        temperature=RETRY_TEMPERATURE,
        abandoned=abandoned,
    )
    try:
        action, head = read_action_prefix(stream)
        if action == "respond":
            yield head
            yield from stream
    finally:
        stop_stream(stream)


def stop_stream(stream: Iterable[str]) -> None:
    """Stop the model behind `stream` (a generator's `close`), if it has one."""
    close = getattr(stream, "close", None)
    if close is not None:
        close()


def text_chunks(pieces: Iterable[str]) -> Iterator[str]:
    """`pieces` regrouped to end at sentence ends (a long run without one at a space), so
    each chunk can be checked before it is sent; joined, the chunks are exactly the text."""
    buffer = ""
    for piece in pieces:
        buffer += piece
        cut = _chunk_end(buffer)
        if cut:
            yield buffer[:cut]
            buffer = buffer[cut:]
    if buffer:
        yield buffer


def _chunk_end(buffer: str) -> int:
    """Where the finished part of `buffer` ends (0: nothing finished yet). A sentence end
    at the very end of the buffer waits: more space, or a closing quote, may follow."""
    ends = [m.end() for m in ARRIVING_SENTENCE_END.finditer(buffer) if m.end() < len(buffer)]
    if ends:
        return ends[-1]
    if len(buffer) > MAX_CHUNK_CHARS:
        return buffer.rfind(" ") + 1
    return 0


class ReplyGuard:
    """The checks on replies in one conversation language (`auto` checks loops only)."""

    def __init__(
        self,
        language: str,
        known: frozenset[str] | None = None,
        *,
        answer: bool = False,
        acts: bool = True,
    ) -> None:
        self.language = language
        self.known = known  # the words of the turn's prompt; None: no claims checked
        self.answer = answer  # the reply answers a question about the person
        self.acts = acts  # whoever writes the reply may act on the memory (its tools)

    def knowing(
        self, known: frozenset[str], *, answer: bool = False, acts: bool = True
    ) -> ReplyGuard:
        """This guard for one turn whose prompt holds `known` words: a reply claiming a name
        or number about the person beyond them is refused too (`lobug.language.claims`); every
        sentence of it when it `answer`s a question about the person. Unless the model `acts`
        (it has the memory's tools), a reply claiming it forgot, deleted or set a reminder
        is refused: nothing was done."""
        return ReplyGuard(self.language, known, answer=answer, acts=acts)

    def problem(self, text: str, *, opening: bool = True, answer: bool = True) -> str | None:
        """Why `text` (the reply's opening, or a later piece of it) must not be said, or None.
        Not an `answer` (a device's reaction, "*blinks*"), it is checked as text only."""
        if not text.strip():
            return None
        if answer:
            problem = reply_problem(text, self.language, opening=opening)
        else:
            problem = text_problem(text, self.language)
        if problem is None and self.known is not None:
            invented = invented_details(text, self.known, answer=self.answer)
            invented += names_given_beyond(text, self.known, self.language)
            problem = f"{INVENTED}: {', '.join(invented)}" if invented else None
        if problem is None and self.known is not None:
            as_them = speaks_as_them(text, answer=self.answer)
            problem = f"as the person: {as_them}" if as_them else None
        if problem is None and self.known is not None and not self.acts:
            claimed = claimed_action(text)
            problem = f"{CLAIMED}: {claimed}" if claimed else None
        return problem

    def chunk_problem(self, said: str, chunk: str) -> str | None:
        """Why the next streamed `chunk` must not be sent after `said` (joined as they are
        said): it is refused alone, or with what was said before it (a loop can span
        sentences)."""
        return self.problem(chunk, opening=not said) or self.problem(said + chunk)

    def asks_again(self, problem: str) -> bool:
        """Whether a refused answer is asked for once more. Not one about the person that
        made something up: asked the same, the model made something up again (the reply
        guard's second tries on SmolLM2-135M), and the person waited twice for it."""
        return not (self.answer and problem.startswith(INVENTED))

    def fallback(self, problem: str, second_problem: str | None) -> Decision:
        """What is said when the second try failed too (`second_problem`; None: it said
        nothing, or none was asked for)."""
        log.warning("reply refused (%s, then %s); said the fallback", problem, second_problem)
        fallback = FALLBACK_REPLY
        if problem.startswith(INVENTED):
            fallback = UNKNOWN_REPLY
        elif problem.startswith(CLAIMED):
            fallback = NOT_DONE_REPLY
        said = said_in(self.language, fallback)
        return Decision("respond", said, guard=FALLBACK, problem=problem)

    def refused(
        self,
        problem: str,
        said: str,
        stop: Callable[[], None],
        retry: Callable[[], Iterator[str]],
    ) -> Decision | SecondTry:
        """A streamed answer broke the guard after `said` (all that was said of it): stop the
        model. What was said stands, marked cut; when nothing was, a second try is streamed
        in its place (`retry`: `careful_stream`), checked the same way."""
        stop()
        if said.strip():
            return Decision("respond", said.strip(), CUT, problem)
        if not self.asks_again(problem):
            return self.fallback(problem, None)
        log.info("reply refused (%s); asking again with safer settings", problem)
        return SecondTry(problem, retry())


@dataclass
class SecondTry:
    """The second answer to a streamed one refused before a word of it was said."""

    problem: str  # why the first was refused
    stream: Iterator[str]  # the model's pieces (`careful_stream`)

    def stop(self) -> None:
        stop_stream(self.stream)


# What a guarded reply does when a piece breaks the guard: given the problem and what was
# said, the decision to store instead, or a second try to say in its place (None: the reply
# was closed meanwhile, nothing to do).
Refusal = Callable[[str, str], Decision | SecondTry | None]
Chunks = Callable[[Iterable[str]], Iterable[str]]


class GuardedReply:
    """One reply checked piece by piece as it is said or sent: the one guarded loop of every
    streamed path (`/v1` chunks, voice sentences, whole or streamed). The model's pieces are
    regrouped by `chunks` (into sentences, ...); each passes alone and after what was said
    before it. At the first that does not, `refusal` decides what is stored instead and the
    loop ends, saying the replacement when nothing was said yet, or streaming a `SecondTry`
    in its place, checked the same way: refused at its first piece, the fallback is said
    instead; later, what was said of it stands, cut."""

    def __init__(
        self, guard: ReplyGuard, refusal: Refusal, separator: str = "", chunks: Chunks = iter
    ) -> None:
        self.guard = guard
        self._refusal = refusal
        self._separator = separator  # between pieces as they are heard (" " for sentences)
        self._chunks = chunks
        self.said: list[str] = []
        self.acted = False  # a stage direction was left out of what was said
        self.replacement: Decision | None = None  # set when the guard stepped in
        self._second: tuple[SecondTry, GuardedReply] | None = None  # once under way

    def text(self) -> str:
        return self._separator.join(self.said)

    def passed(self, pieces: Iterable[str]) -> Iterator[str]:
        """The pieces that pass, less their stage directions ("(smiles) "), then the
        replacement when it is all there is to say. A reply that only acted is refused."""
        for chunk in self._chunks(pieces):
            piece = without_stage_directions(chunk)
            if piece != chunk:
                log.debug("stage direction left out: %r", chunk)
                self.acted = True
                if not piece.strip():
                    continue
            said = self.text() + self._separator if self.said else ""
            problem = self.guard.chunk_problem(said, piece)
            if problem is None:
                self.said.append(piece)
                yield piece
                continue
            log.debug("refused piece: %r", piece)
            yield from self._instead(problem)
            return
        if self.acted and not self.said:
            yield from self._instead(STAGED)

    def _instead(self, problem: str) -> Iterator[str]:
        """What follows a refused piece: a second try, or the replacement when nothing was
        said yet."""
        instead = self._refusal(problem, self.text())
        if isinstance(instead, SecondTry):
            yield from self._second_try(instead)
            return
        self.replacement = instead
        if not self.said and instead is not None and instead.action == "respond":
            yield instead.text

    def _second_try(self, second: SecondTry) -> Iterator[str]:
        def refused(problem: str, said: str) -> Decision:
            second.stop()
            if said.strip():
                return Decision("respond", said.strip(), CUT, problem)
            return self.guard.fallback(second.problem, problem)

        reply = GuardedReply(self.guard, refused, self._separator, self._chunks)
        self._second = second, reply
        try:
            yield from reply.passed(second.stream)
        finally:
            second.stop()
        if not reply.said and reply.replacement is None:  # the model said nothing
            reply.replacement = self.guard.fallback(second.problem, None)
            yield reply.replacement.text

    def decision(self) -> Decision:
        """The reply as it is stored: the replacement, or what was said."""
        if self._second is None:
            return self.replacement or Decision("respond", self.text().strip())
        second, reply = self._second
        if reply.replacement is not None:
            return reply.replacement
        text = reply.text().strip()
        if not text:  # closed before the second try said a word
            return Decision("ignore", "")
        return Decision("respond", text, REGENERATED, second.problem)
