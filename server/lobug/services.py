"""The running parts of one server, wired together from settings."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from lobug.assistant import Assistant
from lobug.backends import Backends, ChatBackend, Embedder, build_backends, build_stt, build_tts
from lobug.config import Settings
from lobug.memory.manager import MemoryManager
from lobug.memory.store import EmbeddingMismatch, MemoryStore
from lobug.voice import Speech, Voice

log = logging.getLogger(__name__)


@dataclass
class Services:
    settings: Settings
    backends: Backends
    store: MemoryStore
    memory: MemoryManager
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

    def close(self) -> None:
        self.store.close()
        self.backends.close()


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
    store = MemoryStore(settings.db_path)
    try:
        store.bind_embedding(backends.embedder.model, backends.embedder.dimension)
    except EmbeddingMismatch as exc:
        log.error("%s", exc)
        store.close()
        raise
    memory = MemoryManager(store, backends.chat, backends.embedder, settings.memory)
    assistant = Assistant(settings, store, memory, backends.chat)
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
    return Services(settings, backends, store, memory, assistant, speech, voice)
