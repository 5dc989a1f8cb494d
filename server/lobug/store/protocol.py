"""What the domain asks of a store, one small protocol per concern, and the few unions of them
that a part of the domain needs; `Store` is all of them (for whoever opens and wires a store).

Engines (SQLite, PostgreSQL) implement every method here and pass the same tests. Nothing in these
signatures names an engine: vectors are numpy arrays, rows are the dataclasses of `models`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lobug.store.household import EVERYONE, Speaker, Viewer
from lobug.store.household_protocol import PeopleStore
from lobug.store.models import (
    EXTRACTION,
    AddedFact,
    Agent,
    AgentCounts,
    AuditEntry,
    BaseMemoryVersion,
    BlockChange,
    ConversationDay,
    DayGrowth,
    DayLatency,
    Dream,
    DreamChange,
    Fact,
    FactFlags,
    FactHit,
    FactQuery,
    Forgotten,
    MemoryBlock,
    Message,
    NewFact,
    ParkedExchange,
    QueuedExchange,
    QueuedMessage,
    Reminder,
    ScoredFact,
    ScoredMessage,
    Summary,
    Topic,
    TopicActivity,
    TopicDraft,
    Vector,
)
from lobug.store.purge_protocol import PurgeStore
from lobug.store.records import AgentRecords, Imported, Record


class ConversationLog(Protocol):
    """Agents (memory namespaces) and every message said to or by one."""

    def find_agent(self, name: str) -> Agent | None: ...

    def ensure_agent(self, name: str, metadata: dict[str, Any] | None = None) -> Agent: ...

    def append_message(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        *,
        metadata: dict[str, Any] | None = None,
        speaker: Speaker | None = None,
    ) -> Message: ...

    def append_embedded_message(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        vector: Vector | None,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> Message: ...

    def recent_messages(self, agent: str, device_id: str, limit: int) -> list[Message]: ...

    def agent_messages(self, agent: str, limit: int) -> list[Message]: ...

    def count_messages(self, agent: str) -> int: ...

    def count_unsummarized(self, agent: str) -> int: ...

    def unsummarized_messages(self, agent: str) -> list[Message]: ...


class WorkQueueStore(Protocol):
    """Memory work that must survive a crash: answered exchanges still to learn from, and
    messages still to embed."""

    def append_reply_for_memory_work(
        self,
        agent: str,
        device_id: str,
        content: str,
        user: Message,
        metadata: dict[str, Any] | None = None,
        draft_id: int | None = None,
    ) -> Message: ...

    def draft_reply(
        self, agent: str, device_id: str, content: str, user: Message, draft_id: int | None
    ) -> int: ...

    def append_message_to_learn(
        self,
        agent: str,
        device_id: str,
        role: str,
        content: str,
        vector: Vector | None,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> QueuedMessage: ...

    def queued_exchanges(
        self, limit: int, queued_before: float, after_id: int = 0
    ) -> list[QueuedExchange]: ...

    def count_queued_exchanges(self) -> int: ...

    def count_parked_exchanges(self) -> int: ...

    def dequeue_exchange(self, assistant_message_id: int) -> None: ...

    def count_failed_attempt(self, assistant_message_id: int, error: str = "") -> int: ...

    def park_exchange(self, assistant_message_id: int) -> None: ...

    def parked_exchanges(
        self, limit: int, ids: Sequence[int] | None = None
    ) -> list[ParkedExchange]: ...

    def messages_to_embed(self, limit: int) -> list[Message]: ...

    def add_message_vectors(self, embedded: Sequence[tuple[Message, Vector]]) -> None: ...


class FactStore(Protocol):
    def add_fact_superseding_duplicate(
        self,
        agent: str,
        fact: NewFact,
        vector: Vector,
        *,
        duplicate_distance: float,
        actor: str = EXTRACTION,
    ) -> AddedFact: ...

    def add_facts_bulk(self, agent: str, new: Sequence[tuple[NewFact, Vector]]) -> None: ...

    def get_fact(self, fact_id: int) -> Fact: ...

    def facts(self, agent: str) -> list[Fact]: ...

    def recent_facts(self, agent: str, limit: int) -> list[Fact]: ...

    def fact_texts_containing(self, agent: str, words: Sequence[str]) -> list[str]: ...

    def count_facts(self, agent: str) -> int: ...


class SummaryStore(Protocol):
    """Summaries of the conversation log and the base memory distilled from them."""

    def add_summary(
        self,
        agent: str,
        content: str,
        messages: Sequence[Message],
        *,
        vector: Vector | None = None,
        made_by: str | None = None,
        dropped_sentences: int = 0,
    ) -> Summary: ...

    def unincorporated_summaries(self, agent: str) -> list[Summary]: ...

    def count_unincorporated(self, agent: str) -> int: ...

    def count_summaries(self, agent: str) -> int: ...

    def base_memory(self, agent: str) -> str: ...

    def distill_base_memory(
        self,
        agent: str,
        content: str,
        incorporated: Sequence[Summary],
        *,
        made_by: str | None = None,
        dropped_sentences: int = 0,
    ) -> None: ...

    def summaries(self, agent: str) -> list[Summary]: ...

    def base_memory_is_stale(self, agent: str) -> bool: ...

    def base_memory_history(self, agent: str) -> list[BaseMemoryVersion]: ...

    def write_base_memory(self, agent: str, content: str, *, actor: str) -> None: ...


class EpisodeStore(Protocol):
    """Summaries as episodes: found by words, by embedding or by the time they cover; and the
    messages of a span of time (Unix seconds, [start, end))."""

    def keyword_summaries(self, agent: str, query: str, k: int) -> list[tuple[Summary, float]]: ...

    def search_summaries(
        self, agent: str, query: Vector, k: int
    ) -> list[tuple[Summary, float]]: ...

    def summaries_between(self, agent: str, start: float, end: float, k: int) -> list[Summary]: ...

    def messages_between(self, agent: str, start: float, end: float, k: int) -> list[Message]: ...


class DreamStore(Protocol):
    """Consolidation ("dream"): the current facts with their vectors to plan one, applying
    it in one transaction (audited under actor `dream`), listing and undoing it."""

    def current_fact_vectors(self, agent: str) -> tuple[list[Fact], Vector]: ...

    def memory_watermark(self, agent: str) -> str: ...

    def apply_dream(
        self,
        agent: str,
        changes: Sequence[DreamChange],
        base_memory: str | None,
        diary: str,
        *,
        started_at: float,
        made_by: str | None = None,
        dropped_sentences: int = 0,
    ) -> Dream: ...

    def dreams(self, agent: str, limit: int = 20) -> list[Dream]: ...

    def dream(self, agent: str, dream_id: int) -> Dream: ...

    def undo_dream(self, agent: str, dream_id: int, *, actor: str) -> Dream: ...


class TopicStore(Protocol):
    """Topics (`memory/topics.py`): what they are built from, replacing an agent's topics as
    a whole, and reading them."""

    def episode_vectors(self, agent: str) -> tuple[list[Summary], Vector]: ...

    def replace_topics(self, agent: str, drafts: Sequence[TopicDraft]) -> list[Topic]: ...

    def topics(self, agent: str) -> list[Topic]: ...

    def topic(self, agent: str, topic_id: int) -> Topic: ...

    def topic_activity(self, agent: str, since: float, limit: int) -> list[TopicActivity]: ...


class BlockStore(Protocol):
    def create_block(
        self,
        agent: str,
        label: str,
        value: str,
        *,
        description: str | None = None,
        char_limit: int | None = None,
        read_only: bool = False,
        changed_by: str = "system",
    ) -> MemoryBlock: ...

    def update_block(
        self, agent: str, label: str, value: str, *, changed_by: str = "system"
    ) -> MemoryBlock: ...

    def delete_block(self, agent: str, label: str, *, actor: str, purge: bool = False) -> None: ...

    def block(self, agent: str, label: str) -> MemoryBlock | None: ...

    def blocks(self, agent: str) -> list[MemoryBlock]: ...

    def block_history(self, agent: str, label: str) -> list[BlockChange]: ...


class ReminderStore(Protocol):
    def add_reminder(
        self,
        agent: str,
        device_id: str,
        what: str,
        ring_at: float,
        *,
        actor: str,
        owner_person_id: int | None = None,
    ) -> Reminder: ...

    def waiting_reminders(self, agent: str) -> list[Reminder]: ...

    def count_waiting_reminders(
        self, agent: str, owner_person_id: int | None, device_id: str
    ) -> tuple[int, int]: ...

    def claim_due_reminders(
        self,
        agent: str,
        device_id: str,
        now: float,
        owners: Sequence[int | None],
        claim_s: float,
    ) -> list[Reminder]: ...

    def mark_reminders_said(self, ids: Sequence[int], device_id: str, now: float) -> None: ...

    def release_reminders(self, ids: Sequence[int]) -> None: ...

    def release_reminder_claims(self) -> int: ...

    def cancel_reminders(self, agent: str, ids: list[int], *, actor: str) -> list[Reminder]: ...


class SearchStore(Protocol):
    """Nearest vectors (cosine) and keyword matches (BM25), best first."""

    def search_facts(
        self, agent: str, query: Vector, k: int, viewer: Viewer = EVERYONE
    ) -> list[ScoredFact]: ...

    def search_messages(self, agent: str, query: Vector, k: int) -> list[ScoredMessage]: ...

    def nearest_fact_hits(
        self, agent: str, query: Vector, k: int, viewer: Viewer = EVERYONE
    ) -> list[FactHit]: ...

    def keyword_fact_hits(
        self, agent: str, query: str, k: int, viewer: Viewer = EVERYONE
    ) -> list[FactHit]: ...

    def keyword_messages(self, agent: str, query: str, k: int) -> list[tuple[Message, float]]: ...

    def uncommon_message_words(self, agent: str, text: str) -> list[str]: ...

    def fact_similarities(self, ids: Sequence[int], query: Vector) -> dict[int, float]: ...

    def message_similarities(self, ids: Sequence[int], query: Vector) -> dict[int, float]: ...


class CurationStore(Protocol):
    """What a person does to the memory: see, correct, pin, score, forget and purge; every
    change recorded in the audit log under its `actor`."""

    def agent_fact(self, agent: str, fact_id: int) -> Fact: ...

    def list_facts(self, agent: str, query: FactQuery) -> tuple[list[Fact], int]: ...

    def facts_by_ids(self, ids: Sequence[int], viewer: Viewer = EVERYONE) -> dict[int, Fact]: ...

    def pinned_facts(self, agent: str, viewer: Viewer = EVERYONE) -> list[Fact]: ...

    def fact_versions(self, agent: str, fact_id: int) -> list[Fact]: ...

    def add_fact(
        self, agent: str, fact: NewFact, vector: Vector, *, actor: str = EXTRACTION
    ) -> Fact: ...

    def correct_fact(
        self, agent: str, fact_id: int, fact: NewFact, vector: Vector, *, actor: str
    ) -> Fact: ...

    def set_fact_flags(self, agent: str, fact_id: int, flags: FactFlags, *, actor: str) -> Fact: ...

    def forget_fact(self, agent: str, fact_id: int, *, actor: str, purge: bool = False) -> Fact: ...

    def messages_by_id(self, agent: str, ids: Sequence[int]) -> list[Message]: ...

    def span_message_ids(
        self, agent: str, device: str | None, since: float | None, until: float | None
    ) -> list[int]: ...

    def forget_message(self, agent: str, message_id: int, *, actor: str) -> Forgotten: ...

    def forget_messages(
        self, agent: str, ids: Sequence[int], *, actor: str, purge_learned: bool = True
    ) -> Forgotten: ...

    def agents_with_counts(self) -> list[AgentCounts]: ...

    def delete_agent(self, name: str, *, actor: str) -> dict[str, int]: ...

    def audit_entries(self, agent: str, limit: int, offset: int = 0) -> list[AuditEntry]: ...

    def count_audit_entries(self, agent: str) -> int: ...


class ActivityStore(Protocol):
    """The log by device and day, and what was stored and how fast replies came, per day."""

    def conversation_days(self, agent: str, limit: int) -> list[ConversationDay]: ...

    def growth_by_day(self, agent: str, since: float) -> list[DayGrowth]: ...

    def reply_latency_by_day(self, agent: str, since: float) -> list[DayLatency]: ...


class EmbeddingBinding(Protocol):
    """The one embedding model a store's vectors come from."""

    def embedding_signature(self) -> tuple[str, int] | None: ...

    def bind_embedding(self, model: str, dim: int) -> None: ...

    def reindex(
        self, model: str, dim: int, embed_batch: Callable[[list[str]], list[Vector]]
    ) -> int: ...


class Exclusive(Protocol):
    """Work that one process at a time may do on a database shared by several (the
    maintenance pass)."""

    def exclusively(self, name: str) -> AbstractContextManager[bool]:
        """True inside when this process may do the work `name` now; False: skip it."""
        ...


class TransferStore(Protocol):
    """Export and import of whole agents as records (`store/records.py`), and backups."""

    def export_records(self, agent_id: int, kind: str) -> Iterator[Record]: ...

    def base_memory_row(self, agent_id: int) -> tuple[str, bool]: ...

    def content_keys(self, agent: str) -> set[str]: ...

    def import_agents(
        self,
        agents: Sequence[AgentRecords],
        vectors: Mapping[str, Vector],
        *,
        merge: bool,
        actor: str,
    ) -> list[Imported]: ...

    def backup(self, target: Path) -> str: ...


# What a part of the domain asks for when it needs more than one of the protocols above.


class MessageIntake(ConversationLog, WorkQueueStore, Protocol):
    """Logging a turn's messages with their memory work (turns, `/v1`, intake)."""


class DreamingStore(DreamStore, SummaryStore, FactStore, Protocol):
    """What a dream reads and changes."""


class TopicSource(TopicStore, DreamStore, Protocol):
    """What the topics are built from (episodes and current facts) and where they go."""


class TopicReads(TopicStore, CurationStore, Protocol):
    """The global memory's reads: topics and their activity, pinned facts."""


class FactReads(CurationStore, Protocol):
    """A fact's versions and the messages it came from."""


@runtime_checkable
class Store(
    ConversationLog,
    WorkQueueStore,
    FactStore,
    SummaryStore,
    EpisodeStore,
    DreamStore,
    TopicStore,
    BlockStore,
    ReminderStore,
    SearchStore,
    CurationStore,
    ActivityStore,
    EmbeddingBinding,
    Exclusive,
    TransferStore,
    PeopleStore,
    PurgeStore,
    Protocol,
):
    """Everything the domain uses. Thread-safe: every method may be called from any thread."""

    def close(self) -> None: ...
