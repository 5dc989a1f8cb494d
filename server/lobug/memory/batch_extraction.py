"""Facts from several waiting exchanges in one model call (issue 41, item 4: learning keeps up).

When memory work falls behind (a lively conversation, a backlog left by a restart), asking for
each exchange's facts alone reads the extraction instructions again for every one of them.
`FactBatches.prepare`, called as an exchange's memory work begins, asks once for the facts of
that exchange and of up to `MAX_BATCH - 1` exchanges waiting behind it (the same agent's,
`MAX_BATCH_CHARS` of their words in all), each tagged by its number; every fact names the
number of the exchange it was stated in (a number out of range drops the fact). Each
exchange's facts wait here for its own turn (`take`), where everything happens as when it is
asked alone: validated and grounded in its own words, deduplicated, stored, then the
cascades, the dequeue, failure counting and parking. A batch that fails (model down,
unreadable output, facts that name no exchange) is forgotten: each of its exchanges is then
asked alone.
Fewer than `BATCH_FROM` exchanges waiting: the first is asked alone, as before. The call is
background work like any extraction: a person's turn still goes first (`backends/sharing.py`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from lobug.backends.base import AbandonCheck, Abandoned, ChatBackend
from lobug.language.quality import is_learnable
from lobug.memory import prompts
from lobug.memory.extraction import UnreadableOutput, read_fact_payload, whole_json
from lobug.store.models import Message

log = logging.getLogger(__name__)

EXTRACTION_MAX_TOKENS = 192
# At most this many exchanges in one call, and at most this many characters of their words.
MAX_BATCH = 4
MAX_BATCH_CHARS = 3000
# Exchanges are asked for together only from this many waiting (the one starting included).
BATCH_FROM = 3

FactItems = list[dict[str, Any]]
# An exchange as extraction reads it: the user's side and the assistant's.
Pair = tuple[Message, Message]


def reply_to_read(assistant: Message) -> str:
    """The reply as extraction's context; a refused reply's fallback is none (only the
    user's words are read)."""
    return assistant.content if is_learnable(assistant.metadata) else ""


def ask_alone(
    chat: ChatBackend,
    pair: Pair,
    *,
    max_facts: int,
    should_stop: AbandonCheck,
    language: str = "en",
) -> FactItems:
    """The fact objects the model finds in one exchange (in the conversation's `language`);
    UnreadableOutput when its reply holds no list of facts (the work queue retries it)."""
    user, assistant = pair
    simple = chat.prefers_simple_json
    raw = chat.complete(
        prompts.fact_extraction_messages(
            user.content, reply_to_read(assistant), simple=simple, language=language
        ),
        max_tokens=EXTRACTION_MAX_TOKENS,
        temperature=0.0,
        json_schema=prompts.fact_schema(max_facts, simple=simple),
        background=True,
        abandoned=should_stop,
    )
    return read_fact_payload(raw)


def ask_together(
    chat: ChatBackend,
    pairs: Sequence[Pair],
    *,
    max_facts: int,
    should_stop: AbandonCheck,
    language: str = "en",
) -> list[FactItems | None]:
    """The fact objects of each of `pairs` from one model call, in their order; None for an
    exchange the reply never reached (cut off by the token limit before it). Raises
    UnreadableOutput when the reply holds no list of facts or none of its facts names an
    exchange (a model that ignored the numbering)."""
    simple = chat.prefers_simple_json
    said = [(user.content, reply_to_read(assistant)) for user, assistant in pairs]
    raw = chat.complete(
        prompts.batch_fact_extraction_messages(said, simple=simple, language=language),
        max_tokens=EXTRACTION_MAX_TOKENS * len(pairs),
        temperature=0.0,
        json_schema=prompts.batch_fact_schema(len(pairs), max_facts, simple=simple),
        background=True,
        abandoned=should_stop,
    )
    items = read_fact_payload(raw)
    return split_by_exchange(items, len(pairs), whole=whole_json(raw) is not None)


def split_by_exchange(items: FactItems, count: int, *, whole: bool) -> list[FactItems | None]:
    """`items` grouped by the exchange each names (1 to `count`; any other value drops the
    item). A reply that is not `whole` (cut short) reached only the exchanges up to the last
    one named; those after it get None."""
    numbered = [(number, item) for item in items if (number := exchange_number(item, count))]
    if items and not numbered:
        raise UnreadableOutput(f"batch fact-extraction output names no exchange ({count})")
    if len(numbered) < len(items):
        log.info("batch extraction: %d facts named no exchange", len(items) - len(numbered))
    reached = count if whole else max((number for number, _ in numbered), default=0)
    split: list[FactItems | None] = [[] if n <= reached else None for n in range(1, count + 1)]
    for number, item in numbered:
        found = split[number - 1]
        if found is not None:
            found.append(item)
    return split


def exchange_number(item: dict[str, Any], count: int) -> int | None:
    """The exchange (1 to `count`) a fact object names, else None."""
    number = item.get(prompts.EXCHANGE_FIELD)
    if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= count:
        return number
    return None


def batch_of(first: Pair, waiting: Sequence[Pair]) -> list[Pair]:
    """`first` and the exchanges of its agent waiting behind it, in queue order, at most
    `MAX_BATCH` and `MAX_BATCH_CHARS` of words (`first` always)."""
    batch = [first]
    chars = _chars(first)
    for pair in waiting:
        if len(batch) >= MAX_BATCH:
            break
        if pair[1].agent != first[1].agent:
            continue
        chars += _chars(pair)
        if chars > MAX_BATCH_CHARS:
            break
        batch.append(pair)
    return batch


def _chars(pair: Pair) -> int:
    return len(pair[0].content) + len(reply_to_read(pair[1]))


class FactBatches:
    """Facts asked for together, each exchange's kept for its own turn of the memory work
    (keyed by the id of its assistant side, as the work queue keys exchanges)."""

    def __init__(self, chat: ChatBackend, max_facts: int, language: str = "en") -> None:
        self.chat = chat
        self.max_facts = max_facts
        self.language = language
        self._ready: dict[int, FactItems] = {}
        self._alone: set[int] = set()  # exchanges of a batch that failed: asked alone
        self._lock = threading.Lock()

    def prepare(self, first: Pair, waiting: Sequence[Pair], should_stop: AbandonCheck) -> int:
        """Ask for the facts of `first` and of those waiting behind it in one call, when
        `BATCH_FROM` or more wait and `first` has none ready; return how many exchanges got
        theirs (0: each is asked alone, in its own turn)."""
        with self._lock:
            asked = self._ready.keys() | self._alone
            if first[1].id in asked:
                return 0
            waiting = [pair for pair in waiting if pair[1].id not in asked]
        batch = batch_of(first, waiting)
        if len(batch) < BATCH_FROM:
            return 0
        try:
            found = ask_together(
                self.chat,
                batch,
                max_facts=self.max_facts,
                should_stop=should_stop,
                language=self.language,
            )
        except Abandoned:
            return 0
        except Exception as exc:  # each exchange is asked alone, failing on its own
            log.info("memory: extraction of %d exchanges at once failed (%s)", len(batch), exc)
            with self._lock:
                self._alone.update(assistant.id for _, assistant in batch)
            return 0
        return self._keep(batch, found)

    def _keep(self, batch: Sequence[Pair], found: Sequence[FactItems | None]) -> int:
        reached = [
            (pair, items) for pair, items in zip(batch, found, strict=True) if items is not None
        ]
        with self._lock:
            for (_, assistant), items in reached:
                self._ready[assistant.id] = items
        log.info("memory: facts of %d exchanges asked for in one call", len(reached))
        return len(reached)

    def take(self, key: int) -> FactItems | None:
        """The facts found for the exchange `key` in a batch (once), or None: ask alone."""
        with self._lock:
            self._alone.discard(key)
            return self._ready.pop(key, None)

    def discard(self, key: int) -> None:
        """Forget what was found for an exchange that will not run (dropped by a close)."""
        self.take(key)
