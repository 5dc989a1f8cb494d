"""The running parts of one server, wired together from settings."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from lobug.assistant import Assistant
from lobug.backends import (
    Backends,
    ChatBackend,
    Embedder,
    build_backends,
    build_embedder,
    build_stt,
    build_tts,
)
from lobug.config import Settings
from lobug.maintenance import Task
from lobug.memory.curation import Curation
from lobug.memory.manager import MemoryManager
from lobug.memory.work_queue import MemoryWork, reembed_messages
from lobug.store.errors import EmbeddingMismatch
from lobug.store.protocol import Store
from lobug.store.sqlite.engine import SQLiteStore
from lobug.voice import Speech, Voice

log = logging.getLogger(__name__)


@dataclass
class Services:
    settings: Settings
    backends: Backends
    store: Store
    memory: MemoryManager
    memory_work: MemoryWork
    assistant: Assistant
    speech: Speech
    voice: Voice
    _reachable: tuple[float, bool] = field(default=(0.0, False))

    @property
    def chat(self) -> ChatBackend:
        return self.backends.chat

    @property
    def embedder(self) -> Embedder:
        return self.backends.embedder

    async def llm_reachable(self, max_age_s: float) -> bool:
        """Whether the chat backend answers, probed at most every `max_age_s` seconds."""
        checked_at, reachable = self._reachable
        if time.monotonic() - checked_at > max_age_s:
            reachable = await asyncio.to_thread(self.chat.is_available)
            self._reachable = (time.monotonic(), reachable)
        return reachable

    @property
    def memory_api(self) -> MemoryServices:
        return MemoryServices(self.settings, self.store, self.embedder, self.assistant.curation)

    def maintenance_tasks(self) -> list[Task]:
        """Re-embed memory-API messages stored while the embedder failed; run the memory
        work of exchanges that a crash or a failure left in the memory-work queue."""
        return [
            *self.memory_api.maintenance_tasks(),
            ("resumed exchanges", self.memory_work.resume),
        ]

    def close(self) -> None:
        """Stop the memory work (bounded wait; what is unfinished stays queued in the
        store), then close the store and the models."""
        self.memory_work.close()
        self.store.close()
        self.backends.close()


@dataclass
class MemoryServices:
    """What the memory REST API needs: the store and the embedder; no chat, no speech."""

    settings: Settings
    store: Store
    embedder: Embedder
    curation: Curation

    def maintenance_tasks(self) -> list[Task]:
        def reembed(should_stop: Callable[[], bool]) -> int:
            return reembed_messages(self.store, self.embedder.embed_batch, should_stop=should_stop)

        return [("re-embedded messages", reembed)]

    def close(self) -> None:
        self.store.close()
        self.embedder.close()


def open_store(settings: Settings, embedder: Embedder) -> Store:
    """Open the database and tie it to the embedder (blocking)."""
    store = SQLiteStore(settings.db_path)
    try:
        store.bind_embedding(embedder.model, embedder.dimension)
    except EmbeddingMismatch as exc:
        log.error("%s", exc)
        store.close()
        raise
    return store


def open_memory_services(settings: Settings, embedder: Embedder | None = None) -> MemoryServices:
    """Load only the embedder and open the store (for `lobug memory-server`; blocking)."""
    embedder = embedder or build_embedder(settings)
    store = open_store(settings, embedder)
    log.info(
        "memory API ready: embeddings=%s (%s, %d dims), db=%s",
        embedder.name,
        embedder.model,
        embedder.dimension,
        settings.db_path,
    )
    return MemoryServices(settings, store, embedder, Curation(store, embedder, settings.memory))


def open_services(settings: Settings, backends: Backends | None = None) -> Services:
    """Load the chat and embedding models and open the store (blocking: call from a worker
    thread). Configured speech models are loaded later by `Speech.load`; given backends
    bring their own speech models, or none."""
    if backends is None:
        backends = build_backends(settings)
        speech = (
            Speech(lambda: build_stt(settings), lambda: build_tts(settings))
            if settings.speech_enabled
            else Speech(None, None)
        )
    else:
        speech = Speech.preloaded(backends.stt, backends.tts)
    store = open_store(settings, backends.embedder)
    memory = MemoryManager(
        store,
        backends.chat,
        backends.embedder,
        settings.memory,
        context_tokens=settings.llm_context_tokens,
        language=settings.language,
    )
    memory_work = MemoryWork(store, memory)
    assistant = Assistant(settings, store, memory, backends.chat, backends.embedder)
    voice = Voice(settings, assistant, speech)
    log.info(
        "ready: chat=%s (%s), embeddings=%s (%s, %d dims), db=%s",
        backends.chat.name,
        backends.chat.model,
        backends.embedder.name,
        backends.embedder.model,
        backends.embedder.dimension,
        settings.db_path,
    )
    return Services(settings, backends, store, memory, memory_work, assistant, speech, voice)
