"""Messages a program hands in (memory API `POST /messages`, `learning()`, `MemoryEngine`):
stored with their embedding and, unless learning is turned off, queued for the same memory
work as a device's turns (`memory.work_queue`).

A user message followed by an assistant message from the same source is an exchange, learned
from as soon as the answer arrives; any other message is learned from on its own after the
quiet period. Turned off per agent (its metadata holds `"learn": false`) or per message
(`learn=False`); system messages are never learned from. Blocking: call from worker threads.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from lobug.backends.base import Embedder, Vector
from lobug.memory.work_queue import Exchange
from lobug.store.models import Agent, Message
from lobug.store.protocol import MessageIntake

log = logging.getLogger(__name__)

LEARNED_ROLES = frozenset({"user", "assistant"})


@dataclass(frozen=True)
class Intake:
    """A stored message; `exchange` is set when it completed one, to hand to the queue."""

    message: Message
    embedded: bool
    queued: bool
    exchange: Exchange | None = None


def agent_learns(agent: Agent) -> bool:
    """False when the agent's metadata turns learning off (`{"learn": false}`)."""
    return (agent.metadata or {}).get("learn") is not False


def embed_or_none(embedder: Embedder, text: str) -> Vector | None:
    try:
        return embedder.embed(text)
    except Exception as exc:
        log.warning("embedding failed (%s); message stored for keyword search only", exc)
        return None


def take_message(
    store: MessageIntake,
    embedder: Embedder,
    agent: Agent,
    source: str,
    role: str,
    content: str,
    *,
    metadata: dict[str, Any] | None = None,
    learn: bool = True,
) -> Intake:
    """Store one message (the embedding backlog takes it when the embedder fails) and queue
    it for learning in the same transaction, as the module says."""
    vector = embed_or_none(embedder, content)
    embedded = vector is not None
    if learn and role in LEARNED_ROLES and agent_learns(agent):
        queued = store.append_message_to_learn(
            agent.name, source, role, content, vector, metadata=metadata
        )
        exchange = None if queued.user is None else Exchange(queued.user, queued.message)
        return Intake(queued.message, embedded, True, exchange)
    message = store.append_embedded_message(
        agent.name, source, role, content, vector, metadata=metadata
    )
    return Intake(message, embedded, False)
