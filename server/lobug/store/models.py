"""The stored things, as the domain sees them: frozen dataclasses, no engine detail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Clock = Callable[[], float]
FACT_TYPES = ("personal", "preference", "knowledge", "event")


# The conversation log's device column for messages that came from no device: the memory API
# (and `learning()`) and the OpenAI-compatible proxy. No device may call itself one of these.
API_SOURCE = "api"
PROXY_SOURCE = "v1"
INTERNAL_SOURCES = frozenset({API_SOURCE, PROXY_SOURCE})


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


@dataclass(frozen=True)
class QueuedExchange:
    """An answered exchange whose memory work has not finished (the work queue)."""

    user: Message
    assistant: Message
    attempts: int


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
    fact_type: str = "knowledge"
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    time_span: str | None = None
    confidence: float = 0.5
    source_message_ids: tuple[int, ...] = ()


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
class Summary:
    id: int
    agent: str
    content: str
    source_from_id: int
    source_to_id: int
    created_at: float
    incorporated: bool
