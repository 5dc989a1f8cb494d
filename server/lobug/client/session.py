"""One `learning()` block: the memory calls made around each intercepted chat completion."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx

from lobug.client.http import MemoryClient
from lobug.client.messages import insert_after_system, last_user_text

log = logging.getLogger(__name__)

MAX_CONTENT_CHARS = 100_000  # the memory API refuses longer messages
SOURCE = "learning"


@dataclass
class PendingExchange:
    """What one intercepted call needs remembered once its reply is known."""

    query: str
    model: str | None


class Session:
    """The memory calls of one `learning()` block; inactive once the block has ended."""

    def __init__(
        self, agent: str, memory: MemoryClient, *, capture_only: bool, max_tokens: int
    ) -> None:
        self.agent = agent
        self.memory = memory
        self.capture_only = capture_only
        self.max_tokens = max_tokens
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
        """The server's budgeted context, formatted as the `/v1` proxy injects it."""
        try:
            prompt = self.memory.context(self.agent, query, self.max_tokens)["prompt"]
            return prompt if isinstance(prompt, str) else ""
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("learning(%r): no memory for this call: %s", self.agent, exc)
            return ""
