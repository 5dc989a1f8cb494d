"""`learning()`: give existing OpenAI client code Lo-Bug's memory (the seed's "Client
Interceptor" of the memory server's design; docs/memory-api.md).

While the context manager is active, `Completions.create` and `AsyncCompletions.create` of the
`openai` package are wrapped: before each call the memory server's context for the last user
message (its ready `prompt`, the same text the `/v1` proxy injects) is added as a system
message; after it the user message and the reply are stored, and the server learns from them.
The memory server is the REST API of `lobug.api.memory`, reached over HTTP, so the program
using `learning()` never opens the database itself. A memory server that fails during a call
is logged and the call goes on without memory.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lobug.client.http import memory_url, open_memory_client
from lobug.client.session import Session

log = logging.getLogger(__name__)

# The memory server's default budget (`POST /context`), repeated here: the client imports
# nothing of the server.
DEFAULT_CONTEXT_TOKENS = 1500

_PATCHED_ATTR = "_lobug_session"


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
        call, pending = session.prepare(kwargs)
        response = original(self, *args, **call)
        remember = functools.partial(session.remember, pending)
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
        call, pending = await asyncio.to_thread(session.prepare, kwargs)
        response = await original(self, *args, **call)
        remember = functools.partial(session.remember, pending)
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
    server_url: str | None = None,
    capture_only: bool = False,
    token: str | None = None,
    timeout: float = 10.0,
    max_tokens: int = DEFAULT_CONTEXT_TOKENS,
    base_url: str | None = None,
) -> Iterator[None]:
    """Give every OpenAI chat completion made inside the block the memory of `agent`.

    `server_url` (or its older name `base_url`) is the memory API: `lobug memory-server`
    (default http://127.0.0.1:8283) or the device server's `http://127.0.0.1:8321/memory`;
    without it `MEMORY_SERVER_URL`, then `LOBUG_MEMORY_URL` are read. The server's context
    for the last user message, within `max_tokens` by its estimate, is injected; the user
    message and the reply are stored, and the server learns facts from them.
    `capture_only` stores the conversation without injecting memory. `token` is the bearer
    token when the server requires one.

    Raises MemoryServerUnavailable on entry when the server cannot be reached. Patches the
    `openai` classes for the whole process while active (every client, every thread).
    """
    from openai.resources.chat.completions import AsyncCompletions, Completions

    url = memory_url(server_url, base_url)
    memory = open_memory_client(url, agent, token=token, timeout=timeout)
    session = Session(agent, memory, capture_only=capture_only, max_tokens=max_tokens)
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
