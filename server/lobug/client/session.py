"""One `learning()` block: the memory calls made around each intercepted chat completion."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from lobug.client.http import MemoryClient
from lobug.client.messages import insert_after_system, last_user_text

log = logging.getLogger(__name__)

CONTEXT_MESSAGE_CHARS = 500
MAX_CONTENT_CHARS = 100_000  # the memory API refuses longer messages
CONTEXT_HEADER = "The following is context from your memory:"
SOURCE = "learning"


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def format_context(context: Mapping[str, Any]) -> str:
    """The seed's format: memory blocks, then relevant past messages (each shortened).
    Empty when the memory holds nothing for this query."""
    sections: list[str] = []
    blocks = context.get("memory_blocks") or []
    if blocks:
        parts = [f"### {block['label']}\n{block['value']}" for block in blocks]
        sections.append("## Memory\n\n" + "\n\n".join(parts))
    past = context.get("relevant_messages") or []
    if past:
        lines = [
            f"**{message['role'].capitalize()}**: "
            f"{shorten(message['content'], CONTEXT_MESSAGE_CHARS)}"
            for message in past
        ]
        sections.append("## Relevant Past Conversations\n\n" + "\n\n".join(lines))
    if not sections:
        return ""
    return CONTEXT_HEADER + "\n\n" + "\n\n".join(sections)


@dataclass
class PendingExchange:
    """What one intercepted call needs remembered once its reply is known."""

    query: str
    model: str | None


class Session:
    """The memory calls of one `learning()` block; inactive once the block has ended."""

    def __init__(self, agent: str, memory: MemoryClient, *, capture_only: bool) -> None:
        self.agent = agent
        self.memory = memory
        self.capture_only = capture_only
        self.active = True

    def prepare(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], PendingExchange]:
        """The request's arguments with memory injected, and the exchange to remember."""
        messages = list(kwargs["messages"])
        model = kwargs.get("model")
        pending = PendingExchange(
            last_user_text(messages), model if isinstance(model, str) else None
        )
        if not self.capture_only and pending.query:
            context = self._context(pending.query)
            if context:
                messages = insert_after_system(messages, {"role": "system", "content": context})
        return {**kwargs, "messages": messages}, pending

    def remember(self, pending: PendingExchange, reply: str) -> None:
        metadata: dict[str, Any] = {"source": SOURCE, "model": pending.model}
        for role, text in (("user", pending.query), ("assistant", reply.strip())):
            if not text:
                continue
            try:
                self.memory.add_message(self.agent, role, text[:MAX_CONTENT_CHARS], metadata)
            except (httpx.HTTPError, RuntimeError) as exc:  # RuntimeError: after the block
                log.warning("learning(%r): %s message not stored: %s", self.agent, role, exc)
                return

    def _context(self, query: str) -> str:
        try:
            return format_context(self.memory.context(self.agent, query))
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("learning(%r): no memory for this call: %s", self.agent, exc)
            return ""
