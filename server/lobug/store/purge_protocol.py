"""What the domain asks of a store to purge every copy of a text (`memory/purges.py`); part of
`protocol.Store`. A purge is a durable job (`PurgeJob`): recorded with the ids it erases
before its first deletion, finished only when every copy is gone."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

# What a purge is of (`PurgeJob.kind`): facts (every version), messages (a span, a forget),
# or everything about a person ("forget everything about me").
PURGE_FACTS = "facts"
PURGE_MESSAGES = "messages"
PURGE_PERSON = "person"
PURGE_KINDS = (PURGE_FACTS, PURGE_MESSAGES, PURGE_PERSON)


@dataclass(frozen=True)
class PurgeJob:
    """One purge as recorded: what it is of (`target_ids`: the facts, messages or person
    asked for) and every fact and message it erases, found before the first deletion."""

    id: int
    agent: str
    kind: str
    target_ids: tuple[int, ...]
    fact_ids: tuple[int, ...]
    message_ids: tuple[int, ...]
    actor: str
    created_at: float
    finished_at: float | None = None
    counts: dict[str, int] | None = None


@dataclass(frozen=True)
class DerivedText:
    """One text the memory made or kept from others (`kind`: base_memory, base_memory_version,
    summary, topic, dream, audit), one column of its row (`field`)."""

    kind: str
    id: int
    field: str
    text: str


class PurgeStore(Protocol):
    def begin_purge(
        self,
        agent: str,
        kind: str,
        target_ids: Sequence[int],
        fact_ids: Sequence[int],
        message_ids: Sequence[int],
        *,
        actor: str,
    ) -> PurgeJob: ...

    def unfinished_purges(self) -> list[PurgeJob]: ...

    def purge_job(self, job_id: int) -> PurgeJob: ...

    def facts_learned_only_from(self, agent: str, message_ids: Sequence[int]) -> list[int]: ...

    def person_purge_ids(self, agent: str, person_id: int) -> tuple[list[int], list[int]]: ...

    def purge_facts_and_derived(
        self,
        agent: str,
        fact_ids: Sequence[int],
        rewrite: Callable[[DerivedText], str | None],
        *,
        person_id: int | None = None,
    ) -> dict[str, list[int]]: ...

    def finish_purge(self, job_id: int, counts: dict[str, int]) -> PurgeJob: ...
