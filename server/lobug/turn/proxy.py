"""Memory for any OpenAI-compatible client: a chat request gets the agent's memory injected,
is answered by the configured chat backend, and the exchange is remembered. Replies pass the
reply guard (`lobug.turn.reply_guard`) like a device's: a streamed one sentence by sentence.

Blocking throughout: the API runs it in worker threads.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

from lobug.backends.base import AbandonCheck, ChatBackend, ChatMessage
from lobug.client.messages import insert_after_system, last_user_text
from lobug.memory.assembly import (
    DEFAULT_CONTEXT_TOKENS,
    MIN_MEMORY_TOKENS,
    ContextRequest,
    assemble,
    memory_room,
    messages_tokens,
)
from lobug.memory.evidence import ADMIN_EVIDENCE, Evidence, asker
from lobug.memory.manager import MemoryManager
from lobug.memory.work_queue import Exchange, StreamedExchange
from lobug.store.household import EVERYONE, Speaker, Viewer
from lobug.store.models import PROXY_SOURCE, Message
from lobug.store.protocol import MessageIntake
from lobug.tokens import (
    PromptTooLong,
    prompt_budget_tokens,
)
from lobug.turn.decision import Decision
from lobug.turn.reply_guard import (
    GuardedReply,
    ReplyGuard,
    careful_stream,
    guard_metadata,
    stop_stream,
    text_chunks,
)

log = logging.getLogger(__name__)

# Past messages the injected memory may hold (`MEMORY_MAX_CONTEXT_MESSAGES` on the server).
DEFAULT_MESSAGE_LIMIT = 10


class ProxyRequestError(ValueError):
    """The request does not have the shape of an OpenAI chat completion request."""


@dataclass(frozen=True)
class ProxyRequest:
    agent: str
    messages: list[ChatMessage]
    query: str
    max_tokens: int
    temperature: float
    person: str | None = None  # the person of the agent's household who asks (`user`)
    # What the caller proved (`memory.evidence`): whom it may name and what it may read. The
    # process's own callers are the admin; `/v1` passes its caller's token's.
    evidence: Evidence = ADMIN_EVIDENCE


def user_query(messages: list[ChatMessage]) -> str:
    """The text of the request's last user message: what the memory is searched for."""
    query = last_user_text(messages)
    if not query:
        raise ProxyRequestError("the request has no user message, or its last one has no text")
    return query


def with_memory(messages: list[ChatMessage], prompt: str) -> list[ChatMessage]:
    """Memory as a system message after the caller's leading system messages (if any)."""
    if not prompt:
        return list(messages)
    memory: ChatMessage = {"role": "system", "content": prompt}
    return insert_after_system(messages, memory)


class MemoryProxy:
    def __init__(
        self,
        store: MessageIntake,
        memory: MemoryManager,
        chat: ChatBackend,
        *,
        message_limit: int = DEFAULT_MESSAGE_LIMIT,
        language: str = "en",
    ) -> None:
        self.store = store
        self.memory = memory
        self.chat = chat
        self.message_limit = message_limit
        self.guard = ReplyGuard(language)

    def prepare(self, request: ProxyRequest) -> tuple[Message, list[ChatMessage]]:
        """Log the user's message, then build the messages with memory injected in the room
        they leave. PromptTooLong (nothing stored) when the caller's messages alone do not
        fit the model's context."""
        budget = prompt_budget_tokens(self.memory.context_tokens, request.max_tokens)
        used = messages_tokens(request.messages)
        if used > budget:
            raise PromptTooLong(
                f"the messages come to about {used} tokens; the model takes {budget} "
                f"with a {request.max_tokens}-token reply"
            )
        speaker = self.speaker(request)
        viewer = self.memory.household.viewer(request.agent, speaker)
        prompt = self.memory_prompt(request, memory_room(budget, request.messages), viewer)
        user = self.store.append_message(
            request.agent, PROXY_SOURCE, "user", request.query, speaker=speaker
        )
        return user, with_memory(request.messages, prompt)

    def speaker(self, request: ProxyRequest) -> Speaker:
        """Who asks: the person `user` names where the caller's evidence allows it
        (`memory.evidence.asker`: PersonNotAllowed where not), else the evidence's person, else
        a guest. Nothing in the words names anyone, and nothing is held for the next call."""
        return asker(self.memory.household, request.agent, request.evidence, request.person)

    def memory_prompt(self, request: ProxyRequest, room: int, viewer: Viewer = EVERYONE) -> str:
        """The assembled context (`memory.assembly`) in the room the caller's messages leave,
        at most the default budget; gathered before the user's message is logged, so it is
        not found as a past message."""
        if room < MIN_MEMORY_TOKENS:
            return ""
        asked = ContextRequest(
            min(room, DEFAULT_CONTEXT_TOKENS), self.message_limit, topics=True, viewer=viewer
        )
        return assemble(self.memory, request.agent, request.query, asked).prompt

    def complete(
        self, request: ProxyRequest, abandoned: AbandonCheck | None = None
    ) -> tuple[str, Exchange | None]:
        """The reply the guard let through, read whole from the same guarded stream as a
        streamed request (`stream`: a second ask only when nothing of the first passed), and
        the exchange stored for memory work (None for an empty reply)."""
        user, messages = self.prepare(request)
        stored = StreamedExchange()
        reply = "".join(self.stream(request, user, messages, stored, abandoned))
        return reply.strip(), stored.wait(0)

    def stream(
        self,
        request: ProxyRequest,
        user: Message,
        messages: list[ChatMessage],
        stored: StreamedExchange,
        abandoned: AbandonCheck | None = None,
    ) -> Iterator[str]:
        """Reply chunks as generated, each checked by the reply guard before it is sent;
        once the stream ends the exchange is stored and `stored` settled with it.

        A client that hangs up closes this iterator: the model stops, the part of the reply
        it was sent is stored and queued, and the maintenance pass learns from it later
        (`stored` is settled with nothing to hand over now). A model that fails midway (its
        connection cut included) raises: nothing of the reply is stored (the client is told
        the stream failed, so the part it saw is no reply); the question stays logged."""
        model = self.chat.stream(
            messages,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            abandoned=abandoned,
        )
        retry = partial(
            careful_stream, self.chat, messages, self.guard.language, request.max_tokens, abandoned
        )
        sent = GuardedReply(
            self.guard,
            lambda problem, said: self.guard.refused(
                problem, said, partial(stop_stream, model), retry
            ),
            chunks=text_chunks,
        )
        try:
            yield from sent.passed(model)
        except GeneratorExit:
            self._keep_partial_reply(request.agent, user, sent.decision())
            stored.settle(None)
            raise
        except Exception as exc:  # BackendError, or a failure nobody foresaw: the same end
            log.warning("a streamed reply failed after %d chunks: %s", len(sent.said), exc)
            stored.settle(None)  # the part sent is not stored: the client was told it failed
            raise
        finally:
            stop_stream(model)
        stored.settle(self.remember(request.agent, user, sent.decision()))

    def remember(self, agent: str, user: Message, reply: Decision) -> Exchange | None:
        """Store the reply (marked when the guard stepped in) with its row in the memory-work
        queue; the exchange, if any."""
        if not reply.text:
            return None
        assistant = self.store.append_reply_for_memory_work(
            agent, PROXY_SOURCE, reply.text, user, guard_metadata(reply)
        )
        return Exchange(user, assistant)

    def _keep_partial_reply(self, agent: str, user: Message, reply: Decision) -> None:
        try:
            self.remember(agent, user, reply)
        except Exception as exc:  # runs while the iterator is being closed: never raise here
            log.warning("could not store the reply of an abandoned stream: %s", exc)
