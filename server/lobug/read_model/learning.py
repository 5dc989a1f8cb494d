"""The learning queue (`memory/work_queue.py`) as the surfaces show it: how many exchanges
wait for their memory work, how many are parked after failing, and the parked ones."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from lobug.memory.work_queue import MAX_ATTEMPTS
from lobug.read_model.common import iso
from lobug.store.models import Message, ParkedExchange
from lobug.store.protocol import WorkQueueStore


class ParkedOut(BaseModel):
    """An exchange whose fact extraction failed `attempts` times: kept, out of the automatic
    retries, until a person retries it."""

    id: str = Field(description="its reply's message id: what `POST /learning/retry` takes")
    agent: str
    device_id: str
    said: str = Field(description="the person's words (a message stored alone: its own)")
    said_at: str
    attempts: int
    error: str = Field(description="what went wrong the last time")
    parked_at: str


class LearningOut(BaseModel):
    queued: int = Field(description="exchanges waiting for their memory work")
    parked: int = Field(description="exchanges parked after failing, kept for a retry")
    max_attempts: int = Field(description="attempts before an exchange is parked")
    parked_exchanges: list[ParkedOut] = Field(description="the oldest parked exchanges")


class RetriedOut(BaseModel):
    retrying: int = Field(description="parked exchanges handed to the memory work again")
    waited: bool = Field(
        description="whether the retries had ended when this was answered (the server "
        "answers at once: `GET /learning` shows those still parked)"
    )
    parked: int = Field(description="exchanges parked when this was answered")


def parked_out(parked: ParkedExchange) -> ParkedOut:
    return ParkedOut(
        id=str(parked.assistant.id),
        agent=parked.user.agent,
        device_id=parked.user.device_id,
        said=parked.user.content,
        said_at=iso(parked.user.created_at),
        attempts=parked.attempts,
        error=parked.error,
        parked_at=iso(parked.parked_at),
    )


def learning_out(
    store: WorkQueueStore, limit: int, shown: Callable[[Message], bool] = lambda _: True
) -> LearningOut:
    """The queue's counts and its `limit` oldest parked exchanges whose words are `shown` to
    the caller (blocking)."""
    parked = [p for p in store.parked_exchanges(limit) if shown(p.user)]
    return LearningOut(
        queued=store.count_queued_exchanges(),
        parked=store.count_parked_exchanges(),
        max_attempts=MAX_ATTEMPTS,
        parked_exchanges=[parked_out(p) for p in parked],
    )
