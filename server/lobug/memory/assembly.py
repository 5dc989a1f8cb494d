"""The one context assembler: what memory adds to a prompt for one query, under one token
budget. Device turns (text and voice), `/v1`, `POST /context/{agent}` (so `learning()`),
`MemoryEngine` and MCP all call `assemble`; what differs between them is said in their
`ContextRequest`, not in a second assembly.

`MemoryManager.retrieve_context` gathers pinned facts, base memory, blocks, relevant facts,
the episodes (summaries) relevant to the query or of a time it names, and that time's
messages; here the past messages relevant to the query are added after those (up to the
request's `message_limit`), the active topics when asked for, what the prompt's history
already holds is left out, and the whole (or the request's `fitted` sections) is fitted to
`max_tokens` in priority order:

    pinned facts > base memory > memory blocks > skills > relevant facts > episodes > messages
        > active topics (the global memory's, `memory/global_memory.py`)

(the memory blocks include the read-only `skills` catalog; "skills" are the whole texts of
the skills the query is about, `memory/skills.py`).

Each section takes what it needs of what the sections before it left. A list item (a fact, a
summary, a message) is kept whole or left out, and the first that does not fit ends its
section; a text (the base memory, a block's value) that does not fit whole is cut, with a
marker, to the room left. Tokens are counted with the estimate of `lobug.tokens`, the same
one every prompt budget uses: the embedded model's own tokenizer sits behind its private
socket, and a remote model's is not known at all, so the estimate (cautious: about 25% over
for English) is what every backend gets. The ready `prompt` never exceeds `max_tokens` by
that estimate.

Blocking (embedding, SQLite): call from worker threads.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lobug.backends.base import ChatMessage
from lobug.memory import search
from lobug.memory.context import MemoryContext, within
from lobug.memory.global_memory import active_topic_lines
from lobug.memory.manager import MemoryManager
from lobug.memory.search import SearchMode
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import ScoredMessage, Vector
from lobug.tokens import ITEM_OVERHEAD_TOKENS, estimate_tokens

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_TOKENS = 1500
MEMORY_HEADER = "What you remember about this user:\n\n"
# The sections in the order the budget serves them, each a field of `MemoryContext`.
SECTIONS = (
    "pinned",
    "base_memory",
    "blocks",
    "skills",
    "facts",
    "summaries",
    "messages",
    "topics",
)
# A text cut to less than this is left out instead.
MIN_CUT_TOKENS = 32
# One past message never takes more than this (it is cut, with a marker, before fitting).
MESSAGE_MAX_TOKENS = 150


@dataclass(frozen=True)
class SectionShare:
    """One section of a budgeted context: its tokens, and their share of the budget."""

    name: str
    tokens: int
    share: float


@dataclass(frozen=True)
class BudgetedContext:
    context: MemoryContext
    max_tokens: int
    sections: tuple[SectionShare, ...]
    prompt: str
    search_mode: SearchMode

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.prompt)


def prompt_of(context: MemoryContext) -> str:
    """The memory as one system message's text; empty when there is nothing to say."""
    sections = context.prompt_sections()
    return MEMORY_HEADER + "\n\n".join(sections) if sections else ""


# What changes from turn to turn (`MemoryContext.turn_sections`), in `SECTIONS` order.
TURN_SECTIONS = ("skills", "facts", "summaries", "messages")
# Below this much room memory is left out rather than cut to a stub (the `/v1` proxy).
MIN_MEMORY_TOKENS = 32


Recall = Callable[[str, str, Viewer], MemoryContext]


@dataclass(frozen=True)
class ContextRequest:
    """What one caller asks of memory. `max_tokens` None: nothing is cut (the device's
    prompt layout fits the whole prompt to the model). `fitted`: the sections the budget
    applies to, the others kept whole (a voice turn fits only its per-turn notes).
    `history`: the messages the prompt already holds, not repeated as recalled ones."""

    max_tokens: int | None = DEFAULT_CONTEXT_TOKENS
    message_limit: int = 0
    topics: bool = False
    fitted: tuple[str, ...] = SECTIONS
    history: Sequence[ChatMessage] = ()
    viewer: Viewer = EVERYONE  # whose eyes memory is read with (`memory/people.py`)
    # How the query's memories are found (agent, query, viewer): None for
    # `MemoryManager.retrieve_context`; a voice turn's may reuse a look-up made while the
    # person spoke (`memory/early.py`).
    recall: Recall | None = None


def assemble(
    memory: MemoryManager, agent: str, query: str, request: ContextRequest
) -> BudgetedContext:
    """Everything memory holds for `query` that `request` asks for (see the module). Never
    raises for a failing embedder or store: those cost memories, not the answer."""
    viewer = request.viewer
    if query.strip():
        gathered = (request.recall or memory.retrieve_context)(agent, query, viewer)
    else:  # nothing asked yet (a prompt read ahead): only what every turn gets
        gathered = memory.standing_context(agent, viewer)
    found = relevant_messages(
        memory, agent, query, request.message_limit, gathered.query_vector, viewer
    )
    dated = {hit.message.id for hit in gathered.messages}
    gathered = dataclasses.replace(
        gathered,
        messages=tuple(
            shortened(hit)
            for hit in [*gathered.messages, *(h for h in found.hits if h.message.id not in dated)]
        ),
        topics=active_topics(memory, agent) if request.topics and viewer.reads_summaries else (),
    ).without_history(request.history)
    if request.max_tokens is None:
        return BudgetedContext(gathered, 0, (), prompt_of(gathered), found.mode)
    kept = fit(gathered, request.max_tokens, request.fitted)
    shares = tuple(
        SectionShare(
            name, tokens, round(tokens / request.max_tokens, 4) if request.max_tokens else 0.0
        )
        for name, tokens in section_tokens(kept)
    )
    return BudgetedContext(kept, request.max_tokens, shares, prompt_of(kept), found.mode)


def messages_tokens(messages: Iterable[ChatMessage]) -> int:
    """What chat messages cost in a prompt, each with its role markers."""
    return sum(estimate_tokens(m["content"]) + ITEM_OVERHEAD_TOKENS for m in messages)


def memory_room(prompt_budget: int, messages: Sequence[ChatMessage]) -> int:
    """The tokens left for memory, as one more system message, once a caller's `messages`
    are in a prompt of `prompt_budget` tokens (`tokens.prompt_budget_tokens`)."""
    return prompt_budget - messages_tokens(messages) - ITEM_OVERHEAD_TOKENS


def active_topics(memory: MemoryManager, agent: str) -> tuple[str, ...]:
    """The global memory's most active topics, a line each; none when the store fails (they
    are the least of the context)."""
    try:
        return active_topic_lines(memory.store, agent, memory.clock())
    except Exception:
        log.warning("reading the active topics failed; the context goes without", exc_info=True)
        return ()


def relevant_messages(
    memory: MemoryManager,
    agent: str,
    query: str,
    limit: int,
    vector: Vector | None,
    viewer: Viewer = EVERYONE,
) -> search.MessageSearch:
    """Hybrid message search for `query`, with its `vector` when it was embedded already."""
    if limit == 0 or not query.strip():
        return search.MessageSearch([], "hybrid")
    return memory.searcher.messages(agent, query, limit, vector=vector, viewer=viewer)


def shortened(hit: ScoredMessage) -> ScoredMessage:
    message = dataclasses.replace(
        hit.message, content=within(hit.message.content, MESSAGE_MAX_TOKENS)
    )
    return ScoredMessage(message, hit.similarity)


def cost(context: MemoryContext) -> int:
    return estimate_tokens(prompt_of(context))


def fit(
    context: MemoryContext, max_tokens: int, sections: tuple[str, ...] = SECTIONS
) -> MemoryContext:
    """The part of `context` that fits `max_tokens`, served in `SECTIONS` order; the sections
    not in `sections` are kept as they are, outside the budget."""
    if sections != SECTIONS:
        kept = fit(MemoryContext(zone=context.zone, **parts(context, sections)), max_tokens)
        return dataclasses.replace(context, **parts(kept, sections))
    kept = MemoryContext(timings_ms=context.timings_ms, zone=context.zone)
    for name in SECTIONS:
        for item in items_of(context, name):
            trial = with_item(kept, name, item)
            if cost(trial) <= max_tokens:
                kept = trial
                continue
            cut = cut_to_fit(kept, name, item, max_tokens)
            if cut is not None:
                kept = cut
            break
    return kept


def parts(context: MemoryContext, sections: Iterable[str]) -> dict[str, Any]:
    return {name: getattr(context, name) for name in sections}


def items_of(context: MemoryContext, name: str) -> Iterable[Any]:
    value = getattr(context, name)
    if name == "base_memory":
        return [value] if value.strip() else []
    return value


def with_item(context: MemoryContext, name: str, item: Any) -> MemoryContext:
    if name == "base_memory":
        return dataclasses.replace(context, base_memory=item)
    grown: dict[str, Any] = {name: (*getattr(context, name), item)}
    return dataclasses.replace(context, **grown)


def cut_to_fit(kept: MemoryContext, name: str, item: Any, max_tokens: int) -> MemoryContext | None:
    """`kept` with a cut version of a text item (base memory, block) in the room left; None
    for list items, or when less than `MIN_CUT_TOKENS` would be left of it."""
    cutter = TEXT_CUTTERS.get(name)
    if cutter is None:
        return None
    room = max_tokens - cost(kept)
    while room >= MIN_CUT_TOKENS:
        trial = with_item(kept, name, cutter(item, room))
        over = cost(trial) - max_tokens
        if over <= 0:
            return trial
        room -= over
    return None


TEXT_CUTTERS: dict[str, Callable[[Any, int], Any]] = {
    "base_memory": lambda text, room: within(text, room),
    "blocks": lambda block, room: (block[0], within(block[1], room)),
    "skills": lambda skill, room: dataclasses.replace(skill, text=within(skill.text, room)),
}


def section_tokens(context: MemoryContext) -> list[tuple[str, int]]:
    """Each section's tokens as it stands in the prompt (0 for an empty one)."""
    alone = []
    for name in SECTIONS:
        only = MemoryContext(zone=context.zone, **{name: getattr(context, name)})
        sections = only.prompt_sections()
        alone.append((name, estimate_tokens(sections[0]) if sections else 0))
    return alone
