"""`MemoryEngine`: Lo-Bug's memory inside a Python program, with no server.

    from lobug import MemoryEngine

    with MemoryEngine("memory.db", agent="alice") as memory:
        memory.save("Alice's sister is called Ana", type="identity")
        memory.add_messages([{"role": "user", "content": "I moved to Lisbon"}])
        memory.flush()  # learn from the messages now
        print(memory.format_for_injection("Where does Alice live?"))

It opens the same store, models and memory pipeline as `lobug memory-server`
(`services.open_memory_services`): facts are learned from added messages by the same durable
queue, the context is the same assembled one (`memory.assembly`), curation is audited as `api`.
Every method blocks and is safe to call from several threads at once (the store serializes
its writes; learning runs on the queue's own thread). From asyncio, use `AsyncMemoryEngine`,
which runs each call in a worker thread (`asyncio.to_thread`).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from lobug.backends import Backends, ChatBackend, Embedder, build_chat, build_embedder
from lobug.config import Settings
from lobug.memory.assembly import (
    DEFAULT_CONTEXT_TOKENS,
    BudgetedContext,
    ContextRequest,
    assemble,
)
from lobug.memory.evidence import (
    ADMIN_EVIDENCE,
    Evidence,
    asking_viewer,
    reader,
    require_summaries,
)
from lobug.memory.intake import take_message
from lobug.memory.limits import message_problem
from lobug.memory.search import SearchMode
from lobug.names import agent_name
from lobug.services import MemoryServices, open_memory_services
from lobug.services.engine_tools import ToolError, call_tool, tool_definitions
from lobug.store.errors import BlockNotFound
from lobug.store.household import Viewer
from lobug.store.models import API_SOURCE, Fact, MemoryBlock

__all__ = ["AsyncMemoryEngine", "MemoryEngine", "ToolError"]

ACTIONS = ("create", "update", "delete")


def database_path(target: str | Path) -> Path:
    """A path, or a `sqlite:///path` URL, as the database file's path."""
    text = str(target)
    if text.startswith("sqlite:///"):
        return Path(text.removeprefix("sqlite:///")).expanduser()
    if "://" in text:
        raise ValueError(f"{text!r}: MemoryEngine opens a SQLite file (a path or sqlite:///path)")
    return Path(text).expanduser()


def fact_dict(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.id,
        "content": fact.content,
        "type": fact.fact_type,
        "due_at": fact.due_at,
        "pinned": fact.pinned,
        "current": fact.is_current,
        "created_at": fact.created_at,
    }


def block_dict(block: MemoryBlock) -> dict[str, Any]:
    return {"label": block.label, "value": block.value, "read_only": block.read_only}


def context_dict(found: BudgetedContext) -> dict[str, Any]:
    context = found.context
    return {
        "max_tokens": found.max_tokens,
        "tokens": found.tokens,
        "pinned": list(context.pinned),
        "base_memory": context.base_memory,
        "blocks": [{"label": label, "value": value} for label, value in context.blocks],
        "facts": [{**fact_dict(h.fact), "similarity": h.similarity} for h in context.facts],
        "summaries": [
            {"id": s.id, "content": s.content, "started_at": s.started_at, "ended_at": s.ended_at}
            for s in context.summaries
        ],
        "messages": [
            {"id": h.message.id, "role": h.message.role, "content": h.message.content}
            for h in context.messages
        ],
        "active_topics": list(context.topics),
        "sections": [
            {"name": s.name, "tokens": s.tokens, "share": s.share} for s in found.sections
        ],
        "prompt": found.prompt,
    }


class MemoryEngine:
    """One agent's memory in this process (see the module).

    `target` is the database: a path or `sqlite:///path` (default: `LOBUG_DB_PATH`). `chat` and
    `embedder` replace the configured models (`LOBUG_LLM_*`, `LOBUG_EMBED_*`); `settings`
    replaces the configuration read from the environment."""

    def __init__(
        self,
        target: str | Path | None = None,
        *,
        agent: str | None = None,
        chat: ChatBackend | None = None,
        embedder: Embedder | None = None,
        settings: Settings | None = None,
    ) -> None:
        settings = settings or Settings.from_env(os.environ)
        if target is not None:
            settings = settings.with_overrides(db_path=database_path(target))
        name = agent_name(agent or settings.agent)  # before anything is opened
        backends = Backends(chat or build_chat(settings), embedder or build_embedder(settings))
        self._attach(open_memory_services(settings, backends), name, True)

    @classmethod
    def attached(cls, services: MemoryServices, agent: str) -> MemoryEngine:
        """An engine over a running server's services; closing it leaves them open."""
        engine = cls.__new__(cls)
        engine._attach(services, agent, False)
        return engine

    def _attach(self, services: MemoryServices, agent: str, owned: bool) -> None:
        self.services = services
        self.agent = agent_name(agent)
        self._owned = owned
        self._agent = services.store.ensure_agent(agent)
        # What the caller proved (`memory.evidence`): this process is the admin; a surface
        # serving others (MCP over HTTP) asks through `as_caller`.
        self.evidence = ADMIN_EVIDENCE

    def as_caller(self, evidence: Evidence) -> MemoryEngine:
        """This engine as a caller with `evidence` uses it: whom it may name as `person`
        and what it reads (`memory.evidence`). Shares everything else; closing it closes
        nothing."""
        caller = copy.copy(self)
        caller._owned = False
        caller.evidence = evidence
        return caller

    # ------------------------------------------------------------------ facts

    def save(self, content: str, type: str | None = None) -> dict[str, Any]:
        """Store a fact (a near duplicate of a current fact becomes its history)."""
        added = self.services.curation.add_fact(self.agent, content, type, actor=API_SOURCE)
        return {**fact_dict(added.fact), "superseded": list(added.superseded)}

    def manage_memory(
        self,
        content: str | None = None,
        action: str = "create",
        id: int | None = None,
    ) -> dict[str, Any]:
        """Create a fact, or update (a new version) or delete (forget) fact `id`."""
        if action not in ACTIONS:
            raise ValueError(f"action must be one of {', '.join(ACTIONS)}")
        if action == "create":
            return self.save(required(content, "content"))
        fact_id = required(id, "id")
        curation = self.services.curation
        if action == "update":
            text = required(content, "content")
            return fact_dict(curation.correct_fact(self.agent, fact_id, text, actor=API_SOURCE))
        forgotten = curation.forget_fact(self.agent, fact_id, purge=False, actor=API_SOURCE)
        return fact_dict(forgotten)

    def search_memory(
        self,
        query: str,
        limit: int = 5,
        mode: SearchMode = "hybrid",
        person: str | None = None,
    ) -> list[dict[str, Any]]:
        """Current facts for `query`, best first: by meaning and words (`hybrid`), by
        meaning alone (`vector`) or by words alone (`keyword`); as `person` of the household
        may see them (see `memory/people.py`)."""
        viewer = self._reader(person)
        hits = self.services.curation.searcher.facts(
            self.agent, query, limit, mode=mode, viewer=viewer
        )
        return [{**fact_dict(hit.fact), "similarity": round(hit.similarity, 6)} for hit in hits]

    # ------------------------------------------------------------------ conversation

    def add_messages(self, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Store messages (`role`, `content`, optional `metadata` and `learn`) and queue them
        for learning: a user message followed by the assistant's answer is learned from at
        once, anything else after the quiet period or at `flush()`. Returns their ids.

        Every message is checked first, as `POST /messages` checks one (`memory.limits`: the
        role, 1 to 100,000 characters, metadata within 16 KB as JSON): ValueError for the first
        one refused, and then none is stored."""
        given = list(messages)
        for number, message in enumerate(given):
            problem = message_problem(
                message.get("role"), message.get("content"), message.get("metadata")
            )
            if problem is not None:
                raise ValueError(f"message {number}: {problem}")
        ids = []
        for message in given:
            taken = take_message(
                self.services.store,
                self.services.embedder,
                self._agent,
                API_SOURCE,
                message["role"],
                message["content"],
                metadata=message.get("metadata"),
                learn=bool(message.get("learn", True)),
            )
            if taken.exchange is not None:
                self.services.memory_work.submit(taken.exchange)
            ids.append(taken.message.id)
        return ids

    def flush(self) -> int:
        """Finish all pending learning now (lone messages too); how many exchanges ran."""
        return self.services.memory_work.flush()

    # ------------------------------------------------------------------ context

    def context(
        self, query: str, max_tokens: int = DEFAULT_CONTEXT_TOKENS, person: str | None = None
    ) -> dict[str, Any]:
        """What `POST /context` returns: each section, its tokens and share, and `prompt`."""
        return context_dict(self._budgeted(query, max_tokens, person))

    def format_for_injection(
        self, query: str, max_tokens: int = DEFAULT_CONTEXT_TOKENS, person: str | None = None
    ) -> str:
        """The memory for `query` as one system message's text ("" when there is none)."""
        return self._budgeted(query, max_tokens, person).prompt

    def _budgeted(self, query: str, max_tokens: int, person: str | None) -> BudgetedContext:
        limit = self.services.settings.max_context_messages
        viewer = self._reader(person)
        asked = ContextRequest(max_tokens, limit, topics=True, viewer=viewer)
        return assemble(self.services.memory, self.agent, query, asked)

    def _reader(self, person: str | None) -> Viewer:
        """What the one asking may read: the person named where the evidence allows it
        (PersonNotAllowed where not); the words name no one (`memory.evidence.asker`)."""
        return asking_viewer(self.services.memory.household, self.agent, self.evidence, person)

    def base_memory(self) -> str:
        """The base memory, where the caller may read what every person's words made
        (SummariesPrivate where not)."""
        require_summaries(reader(self.services.memory.household, self.agent, self.evidence))
        return self.services.store.base_memory(self.agent)

    # ------------------------------------------------------------------ dreams

    def dream(self, dry_run: bool = False) -> dict[str, Any]:
        """Consolidate the agent's memory now (`memory/dream.py`): `id` (None for a dry run),
        `changes` (the facts retired and why), `base_memory_rewritten` and the `diary`."""
        result = self.services.dreamer.dream(self.agent, dry_run=dry_run)
        stored = result.dream
        return {
            "id": stored.id if stored else None,
            "dry_run": dry_run,
            "changes": [dataclasses.asdict(c) for c in (stored or result.plan).changes],
            "base_memory_rewritten": (
                stored.base_memory_before is not None if stored else result.plan.rewrite_base_memory
            ),
            "diary": stored.diary if stored else result.plan.diary,
        }

    def undo_dream(self, dream_id: int) -> None:
        """Undo one dream: the facts it retired are current again, its base memory undone."""
        self.services.dreamer.undo(self.agent, dream_id, actor=API_SOURCE)

    # ------------------------------------------------------------------ blocks

    def read_block(self, label: str) -> dict[str, Any]:
        block = self.services.store.block(self.agent, label)
        if block is None:
            raise BlockNotFound(f"no memory block {label!r}")
        return block_dict(block)

    def update_block(self, label: str, value: str) -> dict[str, Any]:
        """Write a block's value, creating the block when the agent has none so labelled."""
        curation = self.services.curation
        return block_dict(curation.set_block(self.agent, label, value, actor=API_SOURCE))

    # ------------------------------------------------------------------ tools

    def tools(self) -> list[dict[str, Any]]:
        """OpenAI tool definitions (JSON Schema) for the agent's own memory tools."""
        return tool_definitions()

    def call_tool(self, name: str, arguments: Mapping[str, Any] | str) -> Any:
        """Run one tool call (arguments as a dict or the model's JSON string); a
        JSON-serialisable result. ToolError for an unknown tool or bad arguments."""
        return call_tool(self, name, arguments)

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Stop learning (what is unfinished stays queued) and close what this engine opened."""
        if self._owned:
            self.services.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def required(value: Any, name: str) -> Any:
    if value is None:
        raise ValueError(f"{name!r} is required for this action")
    return value


class AsyncMemoryEngine:
    """`MemoryEngine` for asyncio: the same methods, each run in a worker thread."""

    def __init__(self, engine: MemoryEngine) -> None:
        self.engine = engine

    async def save(self, content: str, type: str | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.engine.save, content, type)

    async def search_memory(
        self,
        query: str,
        limit: int = 5,
        mode: SearchMode = "hybrid",
        person: str | None = None,
    ) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.engine.search_memory, query, limit, mode, person)

    async def add_messages(self, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        return await asyncio.to_thread(self.engine.add_messages, list(messages))

    async def flush(self) -> int:
        return await asyncio.to_thread(self.engine.flush)

    async def context(self, query: str, max_tokens: int = DEFAULT_CONTEXT_TOKENS) -> dict[str, Any]:
        return await asyncio.to_thread(self.engine.context, query, max_tokens)

    async def format_for_injection(
        self, query: str, max_tokens: int = DEFAULT_CONTEXT_TOKENS
    ) -> str:
        return await asyncio.to_thread(self.engine.format_for_injection, query, max_tokens)

    async def dream(self, dry_run: bool = False) -> dict[str, Any]:
        return await asyncio.to_thread(self.engine.dream, dry_run)

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | str) -> Any:
        return await asyncio.to_thread(self.engine.call_tool, name, arguments)

    async def close(self) -> None:
        await asyncio.to_thread(self.engine.close)
