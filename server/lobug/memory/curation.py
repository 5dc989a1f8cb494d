"""What a person does to the memory, whatever the door (REST API, dashboard, CLI, voice): add,
correct, pin, score, forget and purge facts; forget messages and stretches of conversation;
write the base memory and the memory blocks; delete an agent; and the searches they look
through. Every change is recorded in the store under `actor`: the audit log, and a block's
own history.

Forgetting messages also rewarms the working memory of the agent's devices (`on_forget`), so
nothing forgotten stays in a prompt. Blocking throughout: call from worker threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lobug.backends.base import Embedder
from lobug.config import MemoryConfig
from lobug.language.text import content_stems
from lobug.memory import confidence
from lobug.memory.membership import Welcomed, first_people_warning, taken_from
from lobug.memory.purges import Purges
from lobug.memory.search import Explained, MemorySearch, MessageSearch, SearchMode
from lobug.names import person_name
from lobug.store.errors import BlockNotFound, MessageNotFound
from lobug.store.household import EVERYONE, HOUSEHOLD, PRIVATE, Person, Viewer
from lobug.store.models import (
    DEFAULT_FACT_TYPE,
    FACT_TYPES,
    MANUAL,
    AddedFact,
    Fact,
    FactFlags,
    FactQuery,
    Forgotten,
    MemoryBlock,
    NewFact,
)
from lobug.store.protocol import Store

# A fact found by meaning for a subject none names must be at least this similar to it (a
# correction rewrites what it finds: only a close match will do).
TOPIC_MIN_SIMILARITY = 0.6
# A topic to forget is shorter and looser than the facts it covers ("my trip" against "The
# user is going to Lisbon in August" is 0.28 with the bundled embedder, "the car" against
# "The user drives a red Toyota" 0.49, while unrelated facts score under 0.2): the facts at
# least this similar, and within `TOPIC_MARGIN` of the best one, are about it.
LOOSE_TOPIC_SIMILARITY = 0.25
TOPIC_MARGIN = 0.1
TOPIC_CANDIDATES = 50


class TopicLookupFailed(Exception):
    """The facts about a topic could not be looked up (its meaning could not be embedded or
    searched): nobody can tell whether memory holds any."""


def nothing_to_rewarm(agent: str) -> None:
    """The default `on_forget`: a server without devices keeps no working memory."""


@dataclass(frozen=True)
class FactPage:
    facts: list[Fact]
    total: int
    scores: list[float] | None = None  # a search's, one per fact


class Curation:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        config: MemoryConfig,
        on_forget: Callable[[str], None] = nothing_to_rewarm,
        *,
        searcher: MemorySearch | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self.on_forget = on_forget
        # The memory pipeline's own where there is one (`MemoryManager.searcher`).
        self.searcher = searcher or MemorySearch(store, embedder, config)
        # Every purge and forget is a durable job reaching every copy (`purges.py`).
        self.purges = Purges(store, lambda agent: self.on_forget(agent))

    # ------------------------------------------------------------------ facts

    def list_facts(
        self,
        agent: str,
        query: FactQuery,
        text: str | None = None,
        mode: SearchMode = "hybrid",
    ) -> FactPage:
        """A page of the agent's facts; with `text`, the current facts found for it by
        hybrid search (or `mode`), best first (filtered by type and pin), with their
        scores."""
        if not text:
            facts, total = self.store.list_facts(agent, query)
            return FactPage(facts, total)
        found = [
            hit
            for hit in self.searcher.facts(
                agent, text, query.offset + query.limit, mode=mode, viewer=query.viewer
            )
            if (query.fact_type is None or hit.fact.fact_type == query.fact_type)
            and (query.pinned is None or hit.fact.pinned == query.pinned)
        ]
        page = found[query.offset :]
        return FactPage([h.fact for h in page], len(found), [h.similarity for h in page])

    def explain_search(self, agent: str, text: str, k: int, viewer: Viewer = EVERYONE) -> Explained:
        """What hybrid fact search finds that `viewer` may see, with the cosine, keyword,
        recency and score parts of each, whether the text could be embedded (False: keywords
        alone) and the weights."""
        return self.searcher.explained(agent, text, k, viewer)

    def add_fact(
        self,
        agent: str,
        content: str,
        fact_type: str | None = None,
        *,
        actor: str = MANUAL,
        owner_person_id: int | None = None,
    ) -> AddedFact:
        """A fact a person wrote (origin `manual`): embedded, and a near duplicate of a
        current fact becomes its new version; with `owner_person_id`, that person's private
        fact (else the household's)."""
        fact = NewFact(
            content.strip(),
            _fact_type(fact_type),
            confidence=confidence.of_person(actor),
            origin=MANUAL,
            owner_person_id=owner_person_id,
            scope=HOUSEHOLD if owner_person_id is None else PRIVATE,
        )
        return self.store.add_fact_superseding_duplicate(
            agent,
            fact,
            self.embedder.embed(fact.content),
            duplicate_distance=self.config.duplicate_distance_threshold,
            actor=actor,
        )

    def correct_fact(self, agent: str, fact_id: int, content: str, *, actor: str) -> Fact:
        """A new version of the current fact `fact_id` with `content`."""
        old = self.store.agent_fact(agent, fact_id)
        fact = NewFact(
            content.strip(),
            old.fact_type,
            time_span=old.time_span,
            confidence=confidence.of_person(actor),
            origin=MANUAL,
            due_at=old.due_at,
        )
        return self.store.correct_fact(
            agent, fact_id, fact, self.embedder.embed(fact.content), actor=actor
        )

    def set_flags(self, agent: str, fact_id: int, flags: FactFlags, *, actor: str) -> Fact:
        return self.store.set_fact_flags(agent, fact_id, flags, actor=actor)

    def forget_fact(self, agent: str, fact_id: int, *, purge: bool, actor: str) -> Fact:
        """Forget the fact (every version); with `purge`, erase it and every copy of its text
        (the messages holding it, the derived texts: `purges.py`), as one durable job."""
        if not purge:
            return self.store.forget_fact(agent, fact_id, actor=actor)
        self.purges.run(self.purges.begin_facts(agent, fact_id, actor=actor))
        return self.store.get_fact(fact_id)

    def facts_about(
        self, agent: str, topic: str, viewer: Viewer = EVERYONE, *, loose: bool = False
    ) -> list[Fact]:
        """Current facts `viewer` may see about `topic`: naming every content word of it, or
        (when none does) close to it in meaning: at `TOPIC_MIN_SIMILARITY`, or `loose`ly (a
        topic to forget, `LOOSE_TOPIC_SIMILARITY` near the best). Raises TopicLookupFailed
        when that second look fails (the embedder down): [] always means none was found."""
        words = content_stems(topic)
        by_words = self.store.keyword_fact_hits(agent, topic, TOPIC_CANDIDATES, viewer)
        found = self.store.facts_by_ids([hit.id for hit in by_words], viewer)
        named = [
            found[hit.id]
            for hit in by_words
            if hit.id in found and words <= content_stems(found[hit.id].content)
        ]
        if named or not words:
            return named
        try:
            vector = self.embedder.embed(topic)
            hits = self.store.search_facts(agent, vector, TOPIC_CANDIDATES, viewer)
        except Exception as exc:
            raise TopicLookupFailed(topic) from exc
        if not hits:
            return []
        floor = TOPIC_MIN_SIMILARITY
        if loose:
            floor = max(LOOSE_TOPIC_SIMILARITY, max(h.similarity for h in hits) - TOPIC_MARGIN)
        return [hit.fact for hit in hits if hit.similarity >= floor]

    def messages_about(
        self, agent: str, topic: str, viewer: Viewer = EVERYONE, *, facts: Sequence[Fact] = ()
    ) -> list[int]:
        """The ids of what the person said about `topic`: their messages naming every content
        word of it, and the exchanges `facts` (those found about it) were learned from; only
        what `viewer` may hear (`Viewer.hears`). The assistant's words that merely name the
        topic ("Have a lovely trip!") are not what the person told."""
        words = content_stems(topic)
        named: set[int] = set()
        if words:
            found = self.store.keyword_messages(agent, topic, TOPIC_CANDIDATES * 10)
            named = {
                m.id
                for m, _ in found
                if m.role == "user"
                and words <= content_stems(m.content)
                and viewer.hears(m.person_id)
            }
        sources = {i for fact in facts for i in fact.source_message_ids}
        heard = {
            m.id
            for m in self.store.messages_by_id(agent, sorted(sources))
            if viewer.hears(m.person_id)
        }
        return sorted(named | heard)

    # ------------------------------------------------------------------ messages

    def search_messages(
        self,
        agent: str,
        text: str,
        limit: int,
        mode: SearchMode = "hybrid",
        viewer: Viewer = EVERYONE,
    ) -> MessageSearch:
        """The agent's messages hybrid search (or `mode`: vector, keyword) finds for `text`
        that `viewer` may hear again; keywords alone when the text cannot be embedded."""
        return self.searcher.messages(agent, text, limit, mode=mode, viewer=viewer)

    # ------------------------------------------------------------------ people (`people.py`)

    def add_person(self, agent: str, name: str, *, actor: str) -> Person:
        """A new person of the household, named by the one rule (`names.person_name`)."""
        return self.welcome(agent, name, actor=actor).person

    def welcome(
        self, agent: str, name: str, devices: Sequence[str] = (), *, move: bool = False, actor: str
    ) -> Welcomed:
        """Add a person (the admin's act), the default person of `devices` (DeviceTaken,
        before anything is added, for a device of another's unless `move`). The household's
        first person keeps what was known before as the household's, heard by anyone as
        before (`people.first_people_warning` says so)."""
        checked = person_name(name)
        for device in devices:
            taken_from(self.store, agent, device, None, move=move)
        first = not self.store.people(agent)
        person = self.store.add_person(agent, checked, actor=actor)
        kept = self.store.share_household_facts(agent, actor=actor) if first else 0
        for device in devices:
            self.store.set_device_person(agent, device, person.id, actor=actor)
        return Welcomed(self.store.person(agent, person.id), first_people_warning(kept))

    def bind_device(
        self, agent: str, device_id: str, person_id: int | None, *, move: bool, actor: str
    ) -> None:
        """Make `person_id` the default person of the device (None: no one's); a device of
        another's moves only when asked to (`move`; DeviceTaken otherwise)."""
        if person_id is not None:  # a device is made no one's at any time
            taken_from(self.store, agent, device_id, person_id, move=move)
        self.store.set_device_person(agent, device_id, person_id, actor=actor)

    def forget_person(self, agent: str, person_id: int, *, actor: str) -> dict[str, int]:
        """Purge everything about the person (their private facts, what they said, every
        copy of it: `purges.py`), as one durable job; the facts and messages erased."""
        done = self.purges.run(self.purges.begin_person(agent, person_id, actor=actor))
        counts = (done.job.counts or {}) if done is not None else {}
        return {"facts": counts.get("facts", 0), "messages": counts.get("messages", 0)}

    def delete_person(self, agent: str, person_id: int, *, actor: str) -> dict[str, int]:
        """Forget everything about the person, then remove them."""
        counts = self.forget_person(agent, person_id, actor=actor)
        self.store.delete_person(agent, person_id, actor=actor)
        self.on_forget(agent)
        return counts

    def move_fact(
        self, agent: str, fact_id: int, scope: str, *, shareable: bool, actor: str
    ) -> Fact:
        """Move a fact between its owner's private memory and the household's."""
        return self.store.set_fact_scope(agent, fact_id, scope, shareable=shareable, actor=actor)

    def forget_messages(self, agent: str, ids: Sequence[int], *, actor: str) -> Forgotten:
        """Purge the messages, what was learned only from them and every copy of it
        (`purges.py`), as one durable job."""
        if not ids:
            return Forgotten()
        done = self.purges.run(self.purges.begin_messages(agent, ids, actor=actor))
        return Forgotten() if done is None else done.forgotten

    def forget_message(self, agent: str, message_id: int, *, actor: str) -> Forgotten:
        if not self.store.messages_by_id(agent, [message_id]):
            raise MessageNotFound(f"agent {agent!r} has no message {message_id}")
        return self.forget_messages(agent, [message_id], actor=actor)

    def forget_span(
        self,
        agent: str,
        *,
        device: str | None,
        since: float | None,
        until: float | None,
        actor: str,
    ) -> Forgotten:
        """Forget every message of the agent in a stretch of time (from one device or all)."""
        ids = self.store.span_message_ids(agent, device, since, until)
        return self.forget_messages(agent, ids, actor=actor)

    # ------------------------------------------------------------------ base memory, blocks

    def write_base_memory(self, agent: str, content: str, *, actor: str) -> None:
        """A new version of the base memory, written by `actor`."""
        self.store.write_base_memory(agent, content, actor=actor)

    def create_block(
        self,
        agent: str,
        label: str,
        value: str,
        *,
        description: str | None = None,
        char_limit: int | None = None,
        read_only: bool = False,
        actor: str,
    ) -> MemoryBlock:
        return self.store.create_block(
            agent,
            label,
            value,
            description=description,
            char_limit=char_limit,
            read_only=read_only,
            changed_by=actor,
        )

    def update_block(self, agent: str, label: str, value: str, *, actor: str) -> MemoryBlock:
        """The block's new value, within its limit; a read-only block is refused."""
        return self.store.update_block(agent, label, value, changed_by=actor)

    def set_block(self, agent: str, label: str, value: str, *, actor: str) -> MemoryBlock:
        """The block's new value; a new block when the agent has none by this label."""
        try:
            return self.update_block(agent, label, value, actor=actor)
        except BlockNotFound:
            return self.create_block(agent, label, value, actor=actor)

    def delete_block(self, agent: str, label: str, *, actor: str, purge: bool = False) -> None:
        """Remove the block and its history, read-only ones too; with `purge` its texts are
        erased from the audit log too (no bytes of them stay, as a purged fact's)."""
        self.store.delete_block(agent, label, actor=actor, purge=purge)

    # ------------------------------------------------------------------ agents

    def delete_agent(self, agent: str, *, actor: str) -> dict[str, int]:
        counts = self.store.delete_agent(agent, actor=actor)
        self.on_forget(agent)
        return counts


def _fact_type(fact_type: str | None) -> str:
    if fact_type is None:
        return DEFAULT_FACT_TYPE
    if fact_type not in FACT_TYPES:
        raise ValueError(f"type must be one of {', '.join(FACT_TYPES)}")
    return fact_type
