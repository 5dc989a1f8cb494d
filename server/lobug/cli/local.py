"""`MemoryAccess` on the local database file (`LOBUG_DB_PATH`), through the store and the
curation service, audited as `cli`. Answers in the REST API's shapes (`lobug.read_model`).

The embedding model is loaded only when a command needs a vector (adding or correcting a
fact, search, import): the store is bound to the model it was embedded with, and the
configured model must match it once loaded (else `lobug reindex`)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import wait
from typing import Any

from lobug.backends.base import Embedder, Vector
from lobug.cli.access import Json
from lobug.cli.output import Refused, by_score, no_agent
from lobug.config import Settings
from lobug.memory import transfer
from lobug.memory.curation import Curation
from lobug.memory.dream import Dreamer
from lobug.memory.search import SearchMode
from lobug.memory.topics import TopicBuilder
from lobug.memory.work_queue import MemoryWork
from lobug.names import AGENT_NAME_RULE, DEVICE_ID, DEVICE_ID_RULE, is_agent_name
from lobug.read_model import dreams
from lobug.read_model import memory as shapes
from lobug.read_model import topics as topic_shapes
from lobug.read_model.common import agent_out, message_out
from lobug.read_model.facts import added_out, fact_detail, fact_fields
from lobug.read_model.learning import RetriedOut, learning_out
from lobug.read_model.people import forgotten_person_out, person_out
from lobug.services import CurationServices, memory_manager
from lobug.store.engines import open_database
from lobug.store.errors import EmbeddingMismatch
from lobug.store.models import CLI, Agent, FactFlags, FactQuery


class LazyEmbedder(Embedder):
    """The configured embedder, built on first use; until then it answers with the model
    and dimension the database was embedded with."""

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
            from lobug.backends import build_embedder

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


def open_local(settings: Settings) -> CurationServices:
    """The store of `settings.store_url` (SQLite or PostgreSQL) with a lazily loaded
    embedder."""
    store = open_database(
        settings.store_url, pool_size=settings.db_pool_size, ef_search=settings.hnsw_ef_search
    )
    signature = store.embedding_signature()
    if signature is None:
        from lobug.backends import build_embedder

        embedder: Embedder = build_embedder(settings)
    else:
        embedder = LazyEmbedder(settings, *signature)
    store.bind_embedding(embedder.model, embedder.dimension)
    return CurationServices(settings, store, embedder, Curation(store, embedder, settings.memory))


def chat_model(settings: Settings) -> str:
    """The configured chat backend and model (not loaded: the server loads it)."""
    return f"{settings.llm_backend} {settings.llm_model or '(default)'}"


class LocalAccess:
    def __init__(self, services: CurationServices) -> None:
        self.svc = services
        self.store = services.store
        self.curation = services.curation
        self.default_agent = services.settings.agent

    @classmethod
    def from_environment(cls) -> LocalAccess:
        return cls(open_local(Settings.from_env(os.environ)))

    def close(self) -> None:
        self.svc.close()

    def require(self, name: str) -> Agent:
        agent = self.store.find_agent(name)
        if agent is None:
            raise Refused(no_agent(name, str(self.svc.settings.db_path)))
        return agent

    # ------------------------------------------------------------------ people

    def people(self, agent: str) -> list[Json]:
        self.require(agent)
        return [person_out(p).model_dump() for p in self.store.people(agent)]

    def add_person(self, agent: str, name: str, devices: list[str]) -> Json:
        self.require(agent)
        for device in devices:
            if not DEVICE_ID.fullmatch(device):
                raise Refused(f"{device!r}: {DEVICE_ID_RULE}")
        person = self.curation.add_person(agent, name, actor=CLI)
        for device in devices:
            self.store.set_device_person(agent, device, person.id, actor=CLI)
        return person_out(self.store.person(agent, person.id)).model_dump()

    def forget_person(self, agent: str, person_id: int, delete: bool) -> Json:
        self.require(agent)
        undo = self.curation.delete_person if delete else self.curation.forget_person
        counts = undo(agent, person_id, actor=CLI)
        return forgotten_person_out(person_id, counts, deleted=delete).model_dump()

    def person_facts(self, agent: str, person_id: int) -> list[Json]:
        self.require(agent)
        return [fact_fields(f).model_dump() for f in self.store.person_facts(agent, person_id)]

    def set_device_person(self, agent: str, device: str, person_id: int | None) -> list[Json]:
        self.require(agent)
        if not DEVICE_ID.fullmatch(device):
            raise Refused(f"{device!r}: {DEVICE_ID_RULE}")
        self.store.set_device_person(agent, device, person_id, actor=CLI)
        return self.people(agent)

    def move_fact(self, agent: str, fact_id: int, scope: str, shareable: bool) -> Json:
        self.require(agent)
        fact = self.curation.move_fact(agent, fact_id, scope, shareable=shareable, actor=CLI)
        return fact_fields(fact).model_dump()

    # ------------------------------------------------------------------ agents, facts

    def agents(self) -> list[Json]:
        return [shapes.counts_out(c).model_dump() for c in self.store.agents_with_counts()]

    def create_agent(self, name: str) -> Json:
        if not is_agent_name(name):
            raise Refused(AGENT_NAME_RULE)
        return agent_out(self.store.ensure_agent(name)).model_dump()

    def delete_agent(self, name: str) -> Json:
        self.require(name)
        return {"agent": name, "deleted": self.curation.delete_agent(name, actor=CLI)}

    def facts(self, agent: str, query: FactQuery) -> Json:
        self.require(agent)
        page = self.curation.list_facts(agent, query)
        return {
            "facts": [fact_fields(f).model_dump() for f in page.facts],
            "total": page.total,
            "limit": query.limit,
            "offset": query.offset,
        }

    def fact(self, agent: str, fact_id: int) -> Json:
        self.require(agent)
        return fact_detail(self.store, agent, self.store.agent_fact(agent, fact_id)).model_dump()

    def add_fact(self, agent: str, text: str, fact_type: str | None) -> Json:
        self.require(agent)
        return added_out(self.curation.add_fact(agent, text, fact_type, actor=CLI)).model_dump()

    def correct_fact(self, agent: str, fact_id: int, text: str) -> Json:
        self.require(agent)
        fact = self.curation.correct_fact(agent, fact_id, text, actor=CLI)
        return fact_detail(self.store, agent, fact).model_dump()

    def flag_fact(self, agent: str, fact_id: int, flags: FactFlags) -> Json:
        self.require(agent)
        return fact_fields(self.curation.set_flags(agent, fact_id, flags, actor=CLI)).model_dump()

    def forget_fact(self, agent: str, fact_id: int, purge: bool) -> Json:
        self.require(agent)
        fact = self.curation.forget_fact(agent, fact_id, purge=purge, actor=CLI)
        return fact_fields(fact).model_dump()

    def search(self, agent: str, text: str, mode: SearchMode, limit: int) -> list[Json]:
        self.require(agent)
        # Embedded here, so a model that does not match the database's is refused.
        vector = None if mode == "keyword" else self.svc.embedder.embed(text)
        facts = self.curation.searcher.facts(agent, text, limit, mode=mode, vector=vector)
        messages = self.curation.search_messages(agent, text, limit, mode)
        return by_score(
            [
                *(
                    {
                        "kind": "fact",
                        "id": str(h.fact.id),
                        "score": h.similarity,
                        "text": h.fact.content,
                    }
                    for h in facts
                ),
                *(
                    {
                        "kind": "message",
                        "id": str(h.message.id),
                        "score": h.similarity,
                        "text": h.message.content,
                    }
                    for h in messages.hits
                ),
            ]
        )

    # ------------------------------------------------------------------ messages

    def messages(self, agent: str, limit: int) -> list[Json]:
        self.require(agent)
        return [message_out(m).model_dump() for m in self.store.agent_messages(agent, limit)]

    def forget_span(
        self, agent: str, device: str | None, since: float | None, until: float | None
    ) -> Json:
        self.require(agent)
        forgotten = self.curation.forget_span(
            agent, device=device, since=since, until=until, actor=CLI
        )
        return shapes.forgotten_out(forgotten).model_dump()

    # ------------------------------------------------------------------ blocks, base memory

    def blocks(self, agent: str) -> list[Json]:
        self.require(agent)
        return [shapes.block_out(b).model_dump() for b in self.store.blocks(agent)]

    def set_block(self, agent: str, label: str, value: str) -> Json:
        self.require(agent)
        return shapes.block_out(
            self.curation.set_block(agent, label, value, actor=CLI)
        ).model_dump()

    def delete_block(self, agent: str, label: str, purge: bool) -> Json:
        self.require(agent)
        self.curation.delete_block(agent, label, actor=CLI, purge=purge)
        return {"agent": agent, "label": label, "purged": purge}

    def base_memory(self, agent: str) -> Json:
        self.require(agent)
        return shapes.base_memory_out(self.store, agent).model_dump()

    def write_base_memory(self, agent: str, content: str) -> Json:
        self.require(agent)
        self.curation.write_base_memory(agent, content, actor=CLI)
        return self.base_memory(agent)

    def audit(self, agent: str, limit: int) -> Json:
        self.require(agent)
        entries = self.store.audit_entries(agent, limit)
        return {
            "entries": [shapes.audit_out(e).model_dump() for e in entries],
            "total": self.store.count_audit_entries(agent),
        }

    def dream(self, agent: str, dry_run: bool) -> Json:
        self.require(agent)
        if dry_run:
            result = Dreamer(self.store, None, max_facts=self.max_facts).dream(agent, dry_run=True)
            return dreams.result_out(result, dry_run=True).model_dump()
        from lobug.backends import build_chat

        chat = build_chat(self.svc.settings)
        try:
            topics = TopicBuilder(self.store, chat, language=self.svc.settings.language)
            dreamer = Dreamer(self.store, chat, max_facts=self.max_facts, topics=topics)
            result = dreamer.dream(agent)
        finally:
            chat.close()
        return dreams.result_out(result, dry_run=False).model_dump()

    def dreams(self, agent: str, limit: int) -> list[Json]:
        self.require(agent)
        return [dreams.dream_out(d).model_dump() for d in self.store.dreams(agent, limit)]

    def undo_dream(self, agent: str, dream_id: int) -> Json:
        self.require(agent)
        undone = Dreamer(self.store, None, max_facts=self.max_facts).undo(
            agent, dream_id, actor=CLI
        )
        return dreams.dream_out(undone).model_dump()

    def topics(self, agent: str) -> list[Json]:
        self.require(agent)
        return [topic_shapes.topic_out(t).model_dump() for t in self.store.topics(agent)]

    def rebuild_topics(self, agent: str) -> list[Json]:
        self.require(agent)
        from lobug.backends import build_chat

        chat = build_chat(self.svc.settings)
        try:
            builder = TopicBuilder(self.store, chat, language=self.svc.settings.language)
            return [topic_shapes.topic_out(t).model_dump() for t in builder.rebuild(agent)]
        finally:
            chat.close()

    def global_memory(self, agent: str) -> Json:
        self.require(agent)
        return topic_shapes.global_out(self.store, agent, time.time()).model_dump()

    @property
    def max_facts(self) -> int:
        return self.svc.settings.memory.max_facts

    # ------------------------------------------------------------------ whole database

    def stats(self) -> Json:
        path = self.svc.settings.db_path
        files = [path, path.with_name(path.name + "-wal")]
        return {
            "database": str(path),
            "size_bytes": sum(f.stat().st_size for f in files if f.exists()),
            "embedding_model": self.svc.embedder.model,
            "chat_model": chat_model(self.svc.settings),
            "learning_queue": self.store.count_queued_exchanges(),
            "learning_parked": self.store.count_parked_exchanges(),
            "agents": self.agents(),
        }

    def learning(self, limit: int) -> Json:
        return learning_out(self.store, limit).model_dump()

    def retry_learning(self, ids: list[int] | None) -> Json:
        """The parked exchanges learned from here, with the configured models (the chat
        model loaded for it), one at a time; answered once they are done."""
        from lobug.backends import Backends, build_chat

        chat = build_chat(self.svc.settings)
        backends = Backends(chat, self.svc.embedder)
        work = MemoryWork(self.store, memory_manager(self.svc.settings, self.store, backends))
        try:
            handed = work.retry_parked(ids)
            wait(handed)
        finally:
            work.close()
            chat.close()
        parked = self.store.count_parked_exchanges()
        return RetriedOut(retrying=len(handed), waited=True, parked=parked).model_dump()

    def export(self, agent: str | None) -> Iterator[bytes]:
        agents = (
            [self.require(agent)] if agent else [c.agent for c in self.store.agents_with_counts()]
        )
        chunks = transfer.export_chunks(self.store, agents, self.svc.embedder.model, time.time())
        return (chunk.encode() for chunk in chunks)

    def import_document(self, document: Any, as_agent: str | None, merge: bool) -> Json:
        agents = transfer.renamed(transfer.read_document(document), as_agent)
        imported = transfer.import_agents(
            self.store, self.svc.embedder, agents, merge=merge, actor=CLI
        )
        return {"imported": [{"agent": i.agent, "added": i.added} for i in imported]}
