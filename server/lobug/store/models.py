"""The stored things, as the domain sees them: frozen dataclasses, no engine detail."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lobug.clock import Clock as Clock  # the store's modules take it from here
from lobug.store.household import EVERYONE, Viewer

Vector = npt.NDArray[np.float32]
# What a fact is about (seed 001): who the user is, what they are like, what they like, what
# happened, what they promised, what limits them. `DEFAULT_FACT_TYPE` for a fact of no type.
FACT_TYPES = ("identity", "trait", "preference", "event", "commitment", "constraint")
DEFAULT_FACT_TYPE = "trait"
# The types before SQLite migration 8 / PostgreSQL migration 3, and what each became.
LEGACY_FACT_TYPES = {
    "personal": "identity",
    "knowledge": "trait",
    "preference": "preference",
    "event": "event",
}


def fact_type_of(value: Any) -> str:
    """One of `FACT_TYPES`: a known type, an old one mapped as migration 8 maps it, else
    `DEFAULT_FACT_TYPE`."""
    if not isinstance(value, str):
        return DEFAULT_FACT_TYPE
    if value in FACT_TYPES:
        return value
    return LEGACY_FACT_TYPES.get(value, DEFAULT_FACT_TYPE)


# How long a fact holds, coarsely (seed 001); None: not said.
TIME_SPANS = ("short_term", "medium_term", "current", "long_term", "future")

# How a derived text (an episode's summary, the base memory, a topic's text) was made: by the
# chat model; without it, from the sources' own words, when the model's text failed its checks
# (`extractive`); or by a person. Stored beside the text, never written into it.
MADE_BY_MODEL = "model"
MADE_BY_EXTRACTIVE = "extractive"
MADE_BY_PERSON = "person"
MADE_BY = (MADE_BY_MODEL, MADE_BY_EXTRACTIVE, MADE_BY_PERSON)


@dataclass(frozen=True)
class Derived:
    """A derived text as it is stored: its content, how it was made, and how many of the
    model's sentences its sources did not support and were left out (`memory/quality.py`)."""

    content: str
    made_by: str
    dropped_sentences: int = 0


# The conversation log's device column for messages that came from no device: the memory API
# (and `learning()`) and the OpenAI-compatible proxy. No device may call itself one of these.
API_SOURCE = "api"
PROXY_SOURCE = "v1"
INTERNAL_SOURCES = frozenset({API_SOURCE, PROXY_SOURCE})

# Who changed the memory, as the audit log records it (besides `device:<id>`).
MANUAL = "manual"  # a person, through the memory API
EXTRACTION = "extraction"  # facts learned from a conversation
CASCADE = "cascade"  # summaries and base memory written by the model
DREAM = "dream"  # consolidation: duplicates merged, contradictions settled, facts retired
VOICE = "voice"  # a request said or typed to a device ("forget that")
CLI = "cli"


def origin_of(device_id: str) -> str:
    """How a fact's origin names the place its source messages came from: `api`, `v1`, or
    `device:<id>`."""
    return device_id if device_id in INTERNAL_SOURCES else f"device:{device_id}"


@dataclass(frozen=True)
class Agent:
    id: int
    name: str
    created_at: float
    metadata: dict[str, Any] | None


@dataclass(frozen=True)
class Message:
    id: int
    agent: str
    device_id: str
    role: str
    content: str
    created_at: float
    summarized: bool
    metadata: dict[str, Any] | None = None
    agent_id: int = 0
    person_id: int | None = None  # who said it, or whom it answered (None: a guest)
    speaker_source: str | None = None  # `store/household.py`'s SPEAKER_SOURCES or `assistant`
    speaker_confidence: float | None = None


@dataclass(frozen=True)
class QueuedExchange:
    """An answered exchange whose memory work has not finished (the work queue)."""

    user: Message
    assistant: Message
    attempts: int


@dataclass(frozen=True)
class ParkedExchange:
    """An exchange whose fact extraction failed `attempts` times (the model's output could
    not be read, or the model was down): it waits, out of the automatic retries, until a
    person retries it (`lobug learning retry`); `error` says what went wrong last."""

    user: Message
    assistant: Message
    attempts: int
    error: str
    parked_at: float


@dataclass(frozen=True)
class QueuedMessage:
    """A message logged for learning: `user` is set when it answered a user message that was
    waiting alone, so the two are now one exchange; otherwise it waits alone."""

    message: Message
    user: Message | None = None


@dataclass(frozen=True)
class ScoredMessage:
    message: Message
    similarity: float


@dataclass(frozen=True)
class MemoryBlock:
    id: int
    agent_id: int
    label: str
    value: str
    description: str | None
    char_limit: int | None
    read_only: bool
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class BlockChange:
    id: int
    block_id: int
    old_value: str | None
    new_value: str
    changed_by: str
    changed_at: float


@dataclass(frozen=True)
class NewFact:
    content: str
    fact_type: str = DEFAULT_FACT_TYPE
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    time_span: str | None = None
    confidence: float = 0.5
    source_message_ids: tuple[int, ...] = ()
    origin: str | None = None
    # A commitment's or a planned event's due time (Unix seconds): the start of the time it names.
    due_at: float | None = None
    owner_person_id: int | None = None  # None: the household's
    scope: str = "household"
    shareable: bool = False
    # Whose the extraction said it is, where its model is trusted to say (a capable backend):
    # "speaker" or "household"; None leaves it to the household's word rules (`memory/people`).
    whose: str | None = None


@dataclass(frozen=True)
class Fact:
    id: int
    agent: str
    content: str
    fact_type: str
    subject: str | None
    relation: str | None
    object: str | None
    time_span: str | None
    confidence: float
    user_score: int | None
    source_message_ids: tuple[int, ...]
    created_at: float
    valid_from: float
    invalidated_at: float | None
    superseded_by: int | None
    origin: str | None = None
    pinned: bool = False
    forgotten_at: float | None = None
    purged_at: float | None = None
    due_at: float | None = None
    owner_person_id: int | None = None  # None: the household's (`store/household.py`)
    scope: str = "household"
    shareable: bool = False

    @property
    def is_current(self) -> bool:
        return self.invalidated_at is None


@dataclass(frozen=True)
class AddedFact:
    """A fact just stored, and the ids of the near duplicates it made history."""

    fact: Fact
    superseded: tuple[int, ...]


@dataclass(frozen=True)
class ScoredFact:
    fact: Fact
    similarity: float

    @property
    def distance(self) -> float:
        return 1.0 - self.similarity


@dataclass(frozen=True)
class FactHit:
    """A current fact a search found, with what ranking it needs (its cosine similarity or
    keyword rank as `score`, its age and a person's score), not its row: a search reads the
    rows of the facts that win only."""

    id: int
    score: float
    created_at: float
    user_score: int | None


@dataclass(frozen=True)
class Summary:
    id: int
    agent: str
    content: str
    source_from_id: int
    source_to_id: int
    created_at: float
    incorporated: bool
    # The episode: when its first and last message were said (None: none of them is left).
    started_at: float | None = None
    ended_at: float | None = None
    # How its text was made (`MADE_BY`; None: not recorded, e.g. imported) and how many
    # unsupported sentences were left out of it.
    made_by: str | None = None
    dropped_sentences: int = 0


@dataclass(frozen=True)
class ScoredSummary:
    """An episode found for a query: its cosine similarity (0 when found by words or date
    alone) and its fused score."""

    summary: Summary
    similarity: float
    score: float


@dataclass(frozen=True)
class FactQuery:
    """Which of an agent's facts to list: current ones unless `include_history`."""

    fact_type: str | None = None
    pinned: bool | None = None
    include_history: bool = False
    limit: int = 100
    offset: int = 0
    viewer: Viewer = EVERYONE
    owner_person_id: int | None = None  # only this person's own facts


@dataclass(frozen=True)
class FactFlags:
    """A change to a fact's flags: `pinned` and `user_score` when given (`clear_score`
    removes the score)."""

    pinned: bool | None = None
    user_score: int | None = None
    clear_score: bool = False

    def assignments(self) -> dict[str, Any]:
        changes: dict[str, Any] = {}
        if self.pinned is not None:
            changes["pinned"] = int(self.pinned)
        if self.user_score is not None or self.clear_score:
            changes["user_score"] = None if self.clear_score else self.user_score
        return changes


@dataclass(frozen=True)
class BaseMemoryVersion:
    """A version of the base memory: who wrote it (`written_by`: an actor, `cascade`,
    `dream`, `manual`, ...), how its text was made (`made_by`, see `MADE_BY`; None: not
    recorded) and how many unsupported sentences were left out of it."""

    id: int
    content: str
    written_by: str
    created_at: float
    made_by: str | None = None
    dropped_sentences: int = 0


@dataclass(frozen=True)
class AgentCounts:
    agent: Agent
    messages: int
    facts: int
    summaries: int


@dataclass(frozen=True)
class Reminder:
    """Something a person asked to be reminded of ("remind me to call Anna at six"): `what`
    in their own words ("call Anna"), rung at `ring_at` once (`said_at`, on `said_on`), or
    cancelled before; its owner's alone to hear, list and cancel (`memory/reminders.py`)."""

    id: int
    agent: str
    device_id: str
    what: str
    ring_at: float
    created_at: float
    said_at: float | None = None
    said_on: str | None = None
    cancelled_at: float | None = None
    owner_person_id: int | None = None  # whose it is: a person's, or the household's (None)


@dataclass(frozen=True)
class AuditEntry:
    id: int
    agent_id: int | None
    at: float
    actor: str
    action: str
    target: str
    target_ids: tuple[int, ...]
    before: str | None
    after: str | None
    detail: dict[str, Any] | None


@dataclass(frozen=True)
class Forgotten:
    """What one forget erased: the messages, the facts that had no other source, the
    summaries that covered them (their other messages are summarized again later)."""

    messages: tuple[int, ...] = ()
    facts: tuple[int, ...] = ()
    summaries: tuple[int, ...] = ()

    def counts(self) -> dict[str, int]:
        return {
            "messages": len(self.messages),
            "facts": len(self.facts),
            "summaries": len(self.summaries),
        }


@dataclass(frozen=True)
class ConversationDay:
    """One device's messages on one day (UTC)."""

    device_id: str
    day: str
    messages: int
    last_at: float


@dataclass(frozen=True)
class DayGrowth:
    day: str
    messages: int
    facts: int


@dataclass(frozen=True)
class DayLatency:
    day: str
    replies: int
    mean_s: float


@dataclass(frozen=True)
class DreamChange:
    """One fact a dream retires: `merge` (a near-duplicate of `kept_id`), `settle` (contradicted
    by the newer `kept_id`) or `retire` (a low-value fact over the cap, `kept_id` None)."""

    action: str
    fact_id: int
    kept_id: int | None
    reason: str


@dataclass(frozen=True)
class Dream:
    """One consolidation of an agent's memory, as stored (see `memory/dream.py`)."""

    id: int
    agent: str
    started_at: float
    finished_at: float
    diary: str
    changes: tuple[DreamChange, ...]
    base_memory_before: str | None
    watermark: str
    undone_at: float | None = None


@dataclass(frozen=True)
class TopicMember:
    """A fact or an episode in a topic, and when it was learned (a fact) or ended (an
    episode): how active the topic is comes from these times."""

    kind: str  # "fact" or "episode"
    id: int
    at: float


@dataclass(frozen=True)
class TopicDraft:
    """A topic as a rebuild makes it (`memory/topics.py`), before it is stored. `written_by`
    says whether the chat model wrote its text (`model`) or the fallback did (`extractive`)."""

    name: str
    summary: str
    open_questions: tuple[str, ...]
    next_actions: tuple[str, ...]
    members: tuple[TopicMember, ...]
    written_by: str
    # The model's summary sentences its notes did not support, left out.
    dropped_sentences: int = 0


@dataclass(frozen=True)
class Topic:
    """A stored topic: a cluster of an agent's facts and episodes with its name, summary,
    open questions and next actions. `position` is its rank in the build (largest first);
    ids are new at every rebuild."""

    id: int
    agent: str
    position: int
    name: str
    summary: str
    open_questions: tuple[str, ...]
    next_actions: tuple[str, ...]
    members: tuple[TopicMember, ...]
    written_by: str
    built_at: float
    dropped_sentences: int = 0

    def member_ids(self, kind: str) -> tuple[int, ...]:
        return tuple(m.id for m in self.members if m.kind == kind)


@dataclass(frozen=True)
class TopicActivity:
    """How active a topic is (`memory/global_memory.py`): its members learned or ended since
    a time, its newest member's time and its size; with its name and summary."""

    topic_id: int
    name: str
    summary: str
    activity: int
    last_active_at: float
    size: int
