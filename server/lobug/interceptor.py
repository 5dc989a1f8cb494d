"""`learning()`: give existing OpenAI client code Lo-Bug's memory (the seed's "Client
Interceptor", ../shared/seeds/local-memory-server.md).

While the context manager is active, `Completions.create` and `AsyncCompletions.create` of the
`openai` package are wrapped: before each call the memory server's context for the last user
message is injected as a system message; after it the user message and the reply are stored.
The memory server is the REST API of `lobug.api.memory`, reached over HTTP, so the program
using `learning()` never opens the database itself. A memory server that fails during a call
is logged and the call goes on without memory.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

log = logging.getLogger(__name__)

DEFAULT_URL = "http://127.0.0.1:8283"
CONTEXT_MESSAGE_CHARS = 500
MAX_CONTENT_CHARS = 100_000  # the memory API refuses longer messages
CONTEXT_HEADER = "The following is context from your memory:"
SOURCE = "learning"

_PATCHED_ATTR = "_lobug_session"


class MemoryServerUnavailable(RuntimeError):
    """The memory server could not be reached (or refused us) when `learning()` began."""


# ------------------------------------------------------------------------------ memory client


class MemoryClient:
    """The few memory REST calls the interceptor needs. Blocking; raises httpx.HTTPError."""

    def __init__(self, base_url: str, *, token: str | None, timeout: float) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url
        self._http = httpx.Client(
            base_url=base_url, headers=headers, timeout=httpx.Timeout(timeout, connect=2.0)
        )

    def health(self) -> dict[str, Any]:
        return self._json(self._http.get("/health"))

    def ensure_agent(self, name: str) -> dict[str, Any]:
        return self._json(self._http.post("/agents", json={"name": name}))

    def context(self, agent: str, query: str) -> dict[str, Any]:
        path = f"/context/{quote(agent, safe='')}"
        return self._json(self._http.post(path, json={"query": query}))

    def add_message(self, agent: str, role: str, content: str, metadata: dict[str, Any]) -> None:
        body = {"agent_name": agent, "role": role, "content": content, "metadata": metadata}
        self._http.post("/messages", json=body).raise_for_status()

    def close(self) -> None:
        self._http.close()

    @staticmethod
    def _json(response: httpx.Response) -> dict[str, Any]:
        response.raise_for_status()
        found: dict[str, Any] = response.json()
        return found


def memory_url(base_url: str | None) -> str:
    """The memory server to use, read when `learning()` begins, never at import."""
    chosen = (
        base_url
        or os.environ.get("MEMORY_SERVER_URL")
        or os.environ.get("LOBUG_MEMORY_URL")
        or DEFAULT_URL
    )
    return chosen.rstrip("/")


def connect(base_url: str, agent: str, *, token: str | None, timeout: float) -> MemoryClient:
    """A client for a reachable memory server on which `agent` exists."""
    client = MemoryClient(base_url, token=token, timeout=timeout)
    try:
        client.health()
        client.ensure_agent(agent)
    except httpx.HTTPStatusError as exc:
        client.close()
        status = exc.response.status_code
        hint = " (pass token=...)" if status == 401 else ""
        raise MemoryServerUnavailable(
            f"The Lo-Bug memory server at {base_url} answered {status}{hint}: {exc.response.text}"
        ) from exc
    except (httpx.HTTPError, ValueError) as exc:
        client.close()
        raise MemoryServerUnavailable(
            f"No Lo-Bug memory server at {base_url} ({exc}). Start one with "
            "`lobug memory-server` (port 8283), or run the full server with `make run` and "
            "use base_url='http://127.0.0.1:8321/memory'."
        ) from exc
    return client


# ----------------------------------------------------------------------------- message shapes


def field_of(item: Any, name: str) -> Any:
    """A field of a message given as a dict or as an object (a previous reply's message)."""
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def content_text(content: Any) -> str:
    """Text of a message's content: a string, or the text parts of a multimodal list."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [field_of(part, "text") for part in content if field_of(part, "type") == "text"]
        return "\n".join(part for part in parts if isinstance(part, str))
    return ""


def last_user_text(messages: Sequence[Any]) -> str:
    for message in reversed(messages):
        if field_of(message, "role") == "user":
            return content_text(field_of(message, "content")).strip()
    return ""


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


def inject(messages: Sequence[Any], context: str) -> list[Any]:
    """A new list with `context` as a system message after the leading system messages."""
    at = 0
    while at < len(messages) and field_of(messages[at], "role") in ("system", "developer"):
        at += 1
    return [*messages[:at], {"role": "system", "content": context}, *messages[at:]]


def reply_text(response: Any) -> str:
    """The first choice's text of a ChatCompletion; empty for anything else."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else ""


def delta_text(chunk: Any) -> str:
    for choice in getattr(chunk, "choices", None) or []:
        if getattr(choice, "index", 0) == 0:
            content = getattr(getattr(choice, "delta", None), "content", None)
            return content if isinstance(content, str) else ""
    return ""


# ------------------------------------------------------------------------------------ session


@dataclass
class Turn:
    """What one intercepted call needs remembered once its reply is known."""

    query: str
    model: str | None


class Session:
    """One `learning()` block: the memory calls made around each intercepted request."""

    def __init__(self, agent: str, memory: MemoryClient, *, capture_only: bool) -> None:
        self.agent = agent
        self.memory = memory
        self.capture_only = capture_only
        self.active = True

    def prepare(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], Turn]:
        """The request's arguments with memory injected, and the turn to remember."""
        messages = list(kwargs["messages"])
        model = kwargs.get("model")
        turn = Turn(last_user_text(messages), model if isinstance(model, str) else None)
        if not self.capture_only and turn.query:
            context = self._context(turn.query)
            if context:
                messages = inject(messages, context)
        return {**kwargs, "messages": messages}, turn

    def remember(self, turn: Turn, reply: str) -> None:
        metadata: dict[str, Any] = {"source": SOURCE, "model": turn.model}
        for role, text in (("user", turn.query), ("assistant", reply.strip())):
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


def captured_stream(chunks: Iterator[Any], on_end: Callable[[str], None]) -> Iterator[Any]:
    """`chunks` unchanged; the assembled reply goes to `on_end` once they are exhausted."""
    pieces: list[str] = []
    for chunk in chunks:
        pieces.append(delta_text(chunk))
        yield chunk
    on_end("".join(pieces))


async def captured_async_stream(
    chunks: AsyncIterator[Any], on_end: Callable[[str], None]
) -> AsyncIterator[Any]:
    pieces: list[str] = []
    async for chunk in chunks:
        pieces.append(delta_text(chunk))
        yield chunk
    await asyncio.to_thread(on_end, "".join(pieces))


def watch_stream(stream: Any, wrap: Callable[[Any], Any]) -> Any:
    """The same Stream object, its chunks now passing through `wrap`."""
    if not hasattr(stream, "_iterator"):
        log.warning("learning(): cannot capture a %s; reply not stored", type(stream).__name__)
        return stream
    stream._iterator = wrap(stream._iterator)
    return stream


def sync_wrapper(session: Session, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def create(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not session.active or "messages" not in kwargs:
            return original(self, *args, **kwargs)
        call, turn = session.prepare(kwargs)
        response = original(self, *args, **call)
        remember = functools.partial(session.remember, turn)
        if call.get("stream") is True:
            return watch_stream(response, lambda chunks: captured_stream(chunks, remember))
        remember(reply_text(response))
        return response

    setattr(create, _PATCHED_ATTR, session)
    return create


def async_wrapper(session: Session, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def create(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not session.active or "messages" not in kwargs:
            return await original(self, *args, **kwargs)
        call, turn = await asyncio.to_thread(session.prepare, kwargs)
        response = await original(self, *args, **call)
        remember = functools.partial(session.remember, turn)
        if call.get("stream") is True:
            return watch_stream(response, lambda chunks: captured_async_stream(chunks, remember))
        await asyncio.to_thread(remember, reply_text(response))
        return response

    setattr(create, _PATCHED_ATTR, session)
    return create


def restore(cls: type, wrapper: Callable[..., Any], original: Callable[..., Any]) -> None:
    """Put `original` back, unless a later `learning()` has wrapped ours (it restores on its
    own exit). Wrappers of finished sessions are skipped, so none stays behind."""
    if cls.__dict__.get("create") is not wrapper:
        return
    target = original
    while (owner := getattr(target, _PATCHED_ATTR, None)) is not None and not owner.active:
        target = target.__wrapped__  # type: ignore[attr-defined]
    cls.create = target  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------- public entry


@contextmanager
def learning(
    agent: str,
    *,
    base_url: str | None = None,
    capture_only: bool = False,
    token: str | None = None,
    timeout: float = 10.0,
) -> Iterator[None]:
    """Give every OpenAI chat completion made inside the block the memory of `agent`.

    `base_url` is the memory API: `lobug memory-server` (default http://127.0.0.1:8283) or the
    device server's `http://127.0.0.1:8321/memory`; without it `MEMORY_SERVER_URL`, then
    `LOBUG_MEMORY_URL` are read. `capture_only` stores the conversation without injecting
    memory. `token` is the bearer token when the server requires one.

    Raises MemoryServerUnavailable on entry when the server cannot be reached. Patches the
    `openai` classes for the whole process while active (every client, every thread).
    """
    from openai.resources.chat.completions import AsyncCompletions, Completions

    memory = connect(memory_url(base_url), agent, token=token, timeout=timeout)
    session = Session(agent, memory, capture_only=capture_only)
    sync_original = Completions.__dict__["create"]
    async_original = AsyncCompletions.__dict__["create"]
    sync_patch = sync_wrapper(session, sync_original)
    async_patch = async_wrapper(session, async_original)
    Completions.create = sync_patch  # type: ignore[method-assign]
    AsyncCompletions.create = async_patch  # type: ignore[method-assign]
    try:
        yield
    finally:
        session.active = False
        restore(Completions, sync_patch, sync_original)
        restore(AsyncCompletions, async_patch, async_original)
        memory.close()
