"""The running parts of one server, wired together from settings."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import time as dt_time
from functools import partial
from typing import TYPE_CHECKING, Any

from lobug.backends import (
    Backends,
    ChatBackend,
    Embedder,
    build_backends,
    build_embedder,
    build_stt,
    build_tts,
    build_turn_end,
)
from lobug.backends.base import AbandonCheck, ChatMessage, JsonSchema, Vector
from lobug.clock import clock_time
from lobug.config import Settings
from lobug.memory.curation import Curation
from lobug.memory.dream import Dreamer
from lobug.memory.manager import MemoryManager
from lobug.memory.topics import TopicBuilder
from lobug.memory.work_queue import CLOSE_WAIT_S, MemoryWork, reembed_messages
from lobug.services.maintenance import Maintenance, Task, one_process_at_a_time
from lobug.store.engines import open_database, redacted
from lobug.store.errors import EmbeddingMismatch
from lobug.store.models import CLI, MANUAL
from lobug.store.protocol import Store
from lobug.turn.timings import TurnTimings

if TYPE_CHECKING:
    from lobug.speakers.recognition import VoiceRecognition
    from lobug.turn.assistant import Assistant
    from lobug.voice.pipeline import Speech, Voice

log = logging.getLogger(__name__)

# How old an answer of the chat backend's reachability the health checks accept.
HEALTH_PROBE_TTL_S = 5.0


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
    timings: TurnTimings = field(default_factory=TurnTimings)
    _reachable: tuple[float, bool] = field(default=(0.0, False))

    @property
    def chat(self) -> ChatBackend:
        return self.backends.chat

    @property
    def embedder(self) -> Embedder:
        return self.backends.embedder

    async def llm_reachable(self, max_age_s: float) -> bool:
        """Whether the chat backend answers (`ChatBackend.is_available`), probed at most
        every `max_age_s` seconds."""
        checked_at, reachable = self._reachable
        if time.monotonic() - checked_at > max_age_s:
            reachable = await asyncio.to_thread(self.chat.is_available)
            self._reachable = (time.monotonic(), reachable)
        return reachable

    def ready(self, llm_reachable: bool) -> bool:
        """Whether the models are loaded and at work: the chat backend answers
        (`llm_reachable`: the embedded model loaded and its worker answering, a remote one
        reachable with its model) and speech, where configured, has loaded."""
        return llm_reachable and (self.speech.ready or not self.speech.wanted)

    def speech_status(self) -> dict[str, Any]:
        """Whether speech is ready (or loading, or why not) and its models."""
        speech = self.speech
        return {
            "ready": speech.ready,
            "loading": speech.loading,
            "error": None if speech.ready else speech.error,
            "stt": speech.stt.model if speech.stt else None,
            "tts": speech.tts.model if speech.tts else None,
            "sample_rate": self.voice.output_rate if speech.ready else None,
        }

    @property
    def memory_api(self) -> MemoryServices:
        return MemoryServices(
            self.settings,
            self.store,
            self.embedder,
            self.assistant.curation,
            self.memory,
            self.memory_work,
            recognition=self.voice.recognition,
        )

    def maintenance_tasks(self) -> list[Task]:
        """Those of the memory API (re-embedding, resumed exchanges)."""
        return self.memory_api.maintenance_tasks()

    def close(
        self, timeout_s: float = CLOSE_WAIT_S, maintenance: Maintenance | None = None
    ) -> None:
        """Stop the background work (`stop_learning`), close the models, then the store
        unless work still runs on it."""
        stopped = stop_learning(self.memory_work, maintenance, timeout_s)
        self.backends.close()
        close_unless_in_use(self.store, stopped)


@dataclass
class MemoryServices:
    """What the memory REST API needs: the store, its embedder, the curation service, and
    the memory pipeline with its work queue (whose chat model learns from the messages
    programs post); no speech. `actor` is who a person's changes are audited as: `manual`
    on a server, `cli` for the command line on the local file (`open_local_services`)."""

    settings: Settings
    store: Store
    embedder: Embedder
    curation: Curation
    memory: MemoryManager
    memory_work: MemoryWork
    actor: str = MANUAL
    # The device server's recognition by voice, where it runs: voices are learnt from uploads.
    recognition: VoiceRecognition | None = None

    def maintenance_tasks(self) -> list[Task]:
        """Re-embed memory-API messages stored while the embedder failed; run the memory
        work that a crash or a failure left in the queue, and lone messages past their quiet
        period."""

        def reembed(should_stop: Callable[[], bool]) -> int:
            return reembed_messages(self.store, self.embedder.embed_batch, should_stop=should_stop)

        tasks: list[Task] = [
            ("re-embedded messages", reembed),
            ("resumed exchanges", self.memory_work.resume),
        ]
        at = clock_time(self.settings.dream_at)
        if at is not None:
            tasks.append(("dreams", lambda should_stop: self.nightly_dreams(at, should_stop)))
        return one_process_at_a_time(self.store.exclusively, tasks)

    @property
    def topic_builder(self) -> TopicBuilder:
        return TopicBuilder(self.store, self.memory.chat, language=self.memory.language)

    @property
    def dreamer(self) -> Dreamer:
        return Dreamer(
            self.store,
            self.memory.chat,
            max_facts=self.settings.memory.max_facts,
            topics=self.topic_builder,
        )

    def nightly_dreams(self, at: dt_time, should_stop: Callable[[], bool]) -> int:
        """The dreams due at `at` (LOBUG_DREAM_AT) in the user's time zone."""
        agents = [counted.agent.name for counted in self.store.agents_with_counts()]
        return self.dreamer.nightly(agents, self.memory.now(), at, should_stop)

    def close(
        self, timeout_s: float = CLOSE_WAIT_S, maintenance: Maintenance | None = None
    ) -> None:
        """For `lobug memory-server`, which owns these parts (the device server's `Services`
        closes its own): as `Services.close`."""
        stopped = stop_learning(self.memory_work, maintenance, timeout_s)
        self.embedder.close()
        self.memory.chat.close()
        close_unless_in_use(self.store, stopped)


def stop_learning(work: MemoryWork, maintenance: Maintenance | None, timeout_s: float) -> bool:
    """Stop the work that runs on the store behind the requests, waiting at most `timeout_s`
    for each part: the maintenance pass asked first (it may be waiting on the memory work),
    then the memory work (its exchange in progress stops at its model call's next step,
    its row untouched), then the pass waited for. Return whether none of it still runs."""
    if maintenance is not None:
        maintenance.ask_to_stop()
    stopped = work.close(timeout_s)
    return (maintenance is None or maintenance.stop(timeout_s)) and stopped


def close_unless_in_use(store: Store, stopped: bool) -> None:
    """Close the store once the background work has `stopped`; else leave it open under
    the work (a model call stops only between its steps), for the process's end to take:
    closed under it, each of its writes failed ("Cannot operate on a closed database")."""
    if stopped:
        store.close()
    else:
        log.info("background work still running: the memory database closes with the process")


def open_store(settings: Settings, embedder: Embedder) -> Store:
    """Open the database (`settings.store_url`) and tie it to the embedder (blocking)."""
    store = open_database(
        settings.store_url, pool_size=settings.db_pool_size, ef_search=settings.hnsw_ef_search
    )
    try:
        store.bind_embedding(embedder.model, embedder.dimension)
    except EmbeddingMismatch as exc:
        log.error("%s", exc)
        store.close()
        raise
    return store


def open_memory_services(settings: Settings, backends: Backends | None = None) -> MemoryServices:
    """Load the embedder and the chat model (which learns from posted messages) and open the
    store, without speech (for `lobug memory-server` and `MemoryEngine`; blocking)."""
    backends = backends or build_backends(settings)
    services = memory_services(settings, open_store(settings, backends.embedder), backends)
    log_ready("memory API ready", settings, backends)
    return services


def open_local_services(settings: Settings, backends: Backends | None = None) -> MemoryServices:
    """The memory API's services for the command line on the local database (`lobug
    facts`, `lobug dream`, ...; `app.create_local_app`): changes audited as `cli`, and the
    models built on first use, so a command needing no vector or no reply loads no model
    (`LazyEmbedder`, `LazyChat`); `backends` replaces them (tests pass fakes here)."""
    store = open_database(
        settings.store_url, pool_size=settings.db_pool_size, ef_search=settings.hnsw_ef_search
    )
    if backends is None:
        backends = Backends(LazyChat(settings), local_embedder(settings, store))
    try:
        store.bind_embedding(backends.embedder.model, backends.embedder.dimension)
    except EmbeddingMismatch:
        store.close()
        raise
    return memory_services(settings, store, backends, CLI)


def memory_services(
    settings: Settings, store: Store, backends: Backends, actor: str = MANUAL
) -> MemoryServices:
    memory = memory_manager(settings, store, backends)
    curation = Curation(store, backends.embedder, settings.memory, searcher=memory.searcher)
    work = MemoryWork(store, memory, purges=curation.purges)
    return MemoryServices(settings, store, backends.embedder, curation, memory, work, actor)


def local_embedder(settings: Settings, store: Store) -> Embedder:
    """The configured embedder, built now for a database never embedded (its dimension is
    not known before), else on first use."""
    signature = store.embedding_signature()
    if signature is None:
        return build_embedder(settings)
    return LazyEmbedder(settings, *signature)


class LazyEmbedder(Embedder):
    """The configured embedder, built on first use; until then it answers with the model
    and dimension the database was embedded with, and once built it must be that model
    (else `EmbeddingMismatch`: `lobug reindex`)."""

    def __init__(self, settings: Settings, model: str, dimension: int) -> None:
        self.settings = settings
        self.model = model
        self._dimension = dimension
        self._loaded: Embedder | None = None

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        return self.loaded().embed_batch(texts)

    def loaded(self) -> Embedder:
        if self._loaded is None:
            embedder = build_embedder(self.settings)
            if (embedder.model, embedder.dimension) != (self.model, self._dimension):
                embedder.close()
                raise EmbeddingMismatch(
                    f"The database was embedded with {self.model} ({self._dimension} "
                    f"dimensions), but {embedder.model} ({embedder.dimension}) is configured: "
                    "run `lobug reindex`, or configure the old model"
                )
            self.name = embedder.name
            self._loaded = embedder
        return self._loaded

    def close(self) -> None:
        if self._loaded is not None:
            self._loaded.close()


class LazyChat(ChatBackend):
    """The configured chat model, built on the first request (a dream, a topic rebuild, a
    retried exchange); until then it names the configured backend and model."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.name = settings.llm_backend
        self.model = settings.llm_model or "(default)"
        self._loaded: ChatBackend | None = None
        self._lock = threading.Lock()

    def loaded(self) -> ChatBackend:
        with self._lock:
            if self._loaded is None:
                from lobug.backends import build_chat

                self._loaded = build_chat(self.settings)
                self.name, self.model = self._loaded.name, self._loaded.model
            return self._loaded

    @property
    def prefers_simple_json(self) -> bool:  # type: ignore[override]
        """Asked just before a request (fact extraction): the model is built to answer."""
        return self.loaded().prefers_simple_json

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.7,
        json_schema: JsonSchema | None = None,
        background: bool = False,
        abandoned: AbandonCheck | None = None,
    ) -> str:
        return self.loaded().complete(
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            json_schema=json_schema,
            background=background,
            abandoned=abandoned,
        )

    def is_available(self) -> bool:
        return self._loaded is not None and self._loaded.is_available()

    def close(self) -> None:
        if self._loaded is not None:
            self._loaded.close()


def memory_manager(settings: Settings, store: Store, backends: Backends) -> MemoryManager:
    return MemoryManager(
        store,
        backends.chat,
        backends.embedder,
        settings.memory,
        context_tokens=settings.llm_context_tokens,
        language=settings.language,
        token_devices=settings.token_devices,
    )


def open_services(settings: Settings, backends: Backends | None = None) -> Services:
    """Load the chat and embedding models and open the store (blocking: call from a worker
    thread). Configured speech models are loaded later by `Speech.load`; given backends
    bring their own speech models, or none. (What a device turn needs is imported here: the
    command line's local app opens the memory services alone.)"""
    from lobug.memory.voices import HouseholdVoices
    from lobug.speakers.recognition import voice_recognition
    from lobug.turn.assistant import Assistant
    from lobug.voice.pipeline import Speech, Voice

    if backends is None:
        backends = build_backends(settings)
        speech = (
            Speech(
                lambda: build_stt(settings),
                lambda: build_tts(settings),
                lambda: build_turn_end(settings),
            )
            if settings.speech_enabled
            else Speech(None, None)
        )
    else:
        speech = Speech.preloaded(backends.stt, backends.tts)
    store = open_store(settings, backends.embedder)
    store.release_reminder_claims()  # claimed by a server that stopped before saying them
    memory = memory_manager(settings, store, backends)
    assistant = Assistant(settings, store, memory, backends.chat, backends.embedder)
    memory_work = MemoryWork(store, memory, purges=assistant.curation.purges)
    voices = partial(HouseholdVoices, store)  # each agent's household's
    voice = Voice(settings, assistant, speech, voice_recognition(settings, voices))
    log_ready("ready", settings, backends)
    return Services(settings, backends, store, memory, memory_work, assistant, speech, voice)


def log_ready(what: str, settings: Settings, backends: Backends) -> None:
    log.info(
        "%s: chat=%s (%s), embeddings=%s (%s, %d dims), db=%s",
        what,
        backends.chat.name,
        backends.chat.model,
        backends.embedder.name,
        backends.embedder.model,
        backends.embedder.dimension,
        redacted(settings.store_url),
    )
