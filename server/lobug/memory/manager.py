"""The memory pipeline: `retrieve_context` before the LLM, `process_exchange` after it.

Blocking throughout (model calls, SQLite): callers run it in worker threads.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lobug.backends.base import AbandonCheck, Abandoned, ChatBackend, Embedder, Vector, with_rule
from lobug.clock import local_time, zone_named
from lobug.config import MemoryConfig
from lobug.kept import DeviceKeep
from lobug.language.quality import language_rule, text_problem
from lobug.memory import commitments, episodes, prompts
from lobug.memory.batch_extraction import ask_alone
from lobug.memory.context import MemoryContext, within
from lobug.memory.disclosure import known_names, self_disclosures, sentence_openers
from lobug.memory.extraction import merge_facts, validate_facts
from lobug.memory.people import Household, attributed
from lobug.memory.quality import (
    MAX_BASE_MEMORY_CHARS,
    MAX_SUMMARY_CHARS,
    checked_output,
    extractive_base_memory,
    extractive_summary,
    learnable,
    user_words,
)
from lobug.memory.search import MemorySearch
from lobug.memory.skills import SkillLibrary, load_skills
from lobug.store.errors import SourcesForgotten
from lobug.store.household import EVERYONE, Viewer
from lobug.store.models import (
    API_SOURCE,
    MADE_BY_EXTRACTIVE,
    Derived,
    Fact,
    FactHit,
    Message,
    NewFact,
    ScoredFact,
    Summary,
    origin_of,
)
from lobug.store.protocol import Store
from lobug.tokens import (
    ITEM_OVERHEAD_TOKENS,
    estimate_tokens,
    oldest_that_fit,
    prompt_budget_tokens,
)

log = logging.getLogger(__name__)

SUMMARY_MAX_TOKENS = 300
DISTILL_MAX_TOKENS = 600
DISTILL_FACTS = 10
# Pinned facts are always in the prompt, newest first, within this many tokens.
PINNED_BUDGET_TOKENS = 400
# No memory block takes more than this share of the model's context in a prompt: a longer
# value is cut, with a marker, so one block can never make an agent's turns fail.
BLOCK_SHARE_OF_CONTEXT = 0.25
# The steps of `process_exchange` before which a stop leaves the exchange unlearned.
LEARNING_STEPS = frozenset({"embed_exchange", "extract_facts"})


@dataclass
class ExchangeReport:
    """What one `process_exchange` did; each step's error is recorded, not raised."""

    facts_added: list[Fact] = field(default_factory=list)
    facts_superseded: list[int] = field(default_factory=list)
    summarized: bool = False
    distilled: bool = False
    errors: dict[str, str] = field(default_factory=dict)
    stopped_before: str = ""  # the step a stop came before (or during), if one came

    @property
    def unlearned(self) -> bool:
        """Stopped before its facts were stored: the exchange waits for the next pass."""
        return self.stopped_before in LEARNING_STEPS


class MemoryManager:
    def __init__(
        self,
        store: Store,
        chat: ChatBackend,
        embedder: Embedder,
        config: MemoryConfig,
        *,
        context_tokens: int = 4096,
        clock: Callable[[], float] = time.time,
        language: str = "en",
        token_devices: frozenset[str] | None = None,
    ) -> None:
        self.store = store
        self.chat = chat
        self.embedder = embedder
        self.config = config
        self.context_tokens = context_tokens
        self.clock = clock
        self.zone = zone_named(config.timezone)
        self.language = language
        self.skills = SkillLibrary(load_skills(config.skills_dirs), embedder.embed_batch)
        self.searcher = MemorySearch(store, embedder, config, clock)
        # What a device's turns keep between them (`lobug.kept`): the household's claims,
        # confirmations and enrolments here; the turn's own parts join it (`turn/assistant.py`).
        self.device_keep = DeviceKeep()
        self.household = Household(store, clock, token_devices, self.device_keep)

    def now(self) -> datetime:
        """The time now where the user lives (`LOBUG_TIMEZONE`)."""
        return local_time(self.clock(), self.zone)

    # ------------------------------------------------------------------ before the LLM

    def retrieve_context(self, agent: str, query: str, viewer: Viewer = EVERYONE) -> MemoryContext:
        """Base memory plus the facts and episodes most similar to `query`, and the episodes
        and messages of a time it names, as far as `viewer` may see them (`memory/people.py`).
        Never raises: a failing embedder or store costs the relevant memories, not the answer."""
        timings: dict[str, float] = {}
        vector = self._embed_query(query, timings)
        facts: tuple[ScoredFact, ...] = ()
        try:
            facts = self.relevant_facts(agent, query, vector, viewer, timings=timings)
        except Exception:
            log.warning("memory retrieval failed; answering without relevant facts", exc_info=True)
        recalled = episodes.seen_by(self._recall(agent, query, vector, timings), viewer)
        return dataclasses.replace(
            self.standing_context(agent, viewer),
            facts=facts,
            timings_ms=timings,
            summaries=recalled.episodes,
            messages=recalled.messages,
            skills=self.skills.about(query, vector),
            query_vector=vector,
        )

    def standing_context(self, agent: str, viewer: Viewer = EVERYONE) -> MemoryContext:
        """What memory puts in every turn's prompt whatever is asked: base memory (for a
        viewer who `reads_summaries`), the pinned facts `viewer` may see, memory blocks and
        the skills' catalog. Never raises."""
        base = ""
        try:
            if viewer.reads_summaries:
                base = self.store.base_memory(agent)
        except Exception:
            log.warning("reading base memory failed", exc_info=True)
        return MemoryContext(
            base_memory=base,
            blocks=self._blocks(agent) + self.skills.catalog(),
            pinned=self._pinned(agent, viewer),
            zone=self.zone,
        )

    def _embed_query(self, query: str, timings: dict[str, float]) -> Vector | None:
        if not query.strip():
            return None
        started = time.perf_counter()
        try:
            return self.embedder.embed(query)
        except Exception:
            log.warning("embedding the query failed; memories by keywords only", exc_info=True)
            return None
        finally:
            timings["embed_query"] = (time.perf_counter() - started) * 1000

    def _recall(
        self, agent: str, query: str, vector: Vector | None, timings: dict[str, float]
    ) -> episodes.Recalled:
        started = time.perf_counter()
        try:
            return episodes.recall(
                self.searcher,
                agent,
                query,
                vector,
                self.now(),
                min_similarity=self.config.retrieval_min_similarity,
            )
        except Exception:
            log.warning("recalling episodes failed; answering without them", exc_info=True)
            return episodes.Recalled()
        finally:
            timings["episodes"] = (time.perf_counter() - started) * 1000

    def _pinned(self, agent: str, viewer: Viewer) -> tuple[str, ...]:
        """The pinned facts `viewer` may see that fit their budget, newest first."""
        try:
            facts = self.store.pinned_facts(agent, viewer)
        except Exception:
            log.warning("reading pinned facts failed", exc_info=True)
            return ()
        return tuple(
            fact.content
            for fact in oldest_that_fit(
                facts,
                lambda f: estimate_tokens(f.content) + ITEM_OVERHEAD_TOKENS,
                PINNED_BUDGET_TOKENS,
            )
        )

    def _blocks(self, agent: str) -> tuple[tuple[str, str], ...]:
        """The agent's memory blocks with a value, always in context, each cut to its share
        of the context."""
        try:
            blocks = self.store.blocks(agent)
        except Exception:
            log.warning("reading memory blocks failed", exc_info=True)
            return ()
        share = int(self.context_tokens * BLOCK_SHARE_OF_CONTEXT)
        return tuple((b.label, within(b.value, share)) for b in blocks if b.value.strip())

    def relevant_facts(
        self,
        agent: str,
        query: str,
        vector: Vector | None,
        viewer: Viewer,
        *,
        vector_hits: Sequence[FactHit] | None = None,
        timings: dict[str, float] | None = None,
    ) -> tuple[ScoredFact, ...]:
        """The facts for `query` a turn's prompt holds (not the pinned ones: always there),
        the commitments first when it asks about them; `vector_hits`: those a search by
        `vector` found already (`MemorySearch.facts`). `knn` in `timings`. Raises."""
        if not query.strip() or self.config.retrieval_top_k == 0:
            return ()
        started = time.perf_counter()
        hits = self.searcher.facts(
            agent,
            query,
            self.config.retrieval_top_k,
            mode="hybrid" if vector is not None else "keyword",  # not embedded: words alone
            vector=vector,
            min_similarity=self.config.retrieval_min_similarity,
            viewer=viewer,
            vector_hits=vector_hits,
        )
        if timings is not None:
            timings["knn"] = (time.perf_counter() - started) * 1000
        listed = commitments.with_commitments(self.store, agent, query, hits, viewer)
        return tuple(hit for hit in listed if not hit.fact.pinned)

    # ------------------------------------------------------------------ after the LLM

    def process_exchange(
        self,
        agent: str,
        user_message: Message,
        assistant_message: Message,
        should_stop: AbandonCheck = lambda: False,
        fact_items: list[dict[str, Any]] | None = None,
    ) -> ExchangeReport:
        """Extract facts (from `fact_items` when the model found them already, with other
        exchanges': `memory/batch_extraction.py`), then run the cascades; every step isolated
        from the others. An exchange forgotten before its turn came is not learned from.
        Once `should_stop()` (the server is stopping), no step begins and the extraction's
        model call stops at its next step; `stopped_before` names the step left undone."""
        report = ExchangeReport()
        if not self.store.messages_by_id(agent, [user_message.id, assistant_message.id]):
            return report
        steps: list[tuple[str, Callable[[], None]]] = [
            ("embed_exchange", lambda: self._embed_exchange(user_message, assistant_message)),
            (
                "extract_facts",
                lambda: self._extract_facts(
                    agent, (user_message, assistant_message), report, should_stop, fact_items
                ),
            ),
            ("short_term_cascade", lambda: self._short_term_cascade(agent, report)),
            ("long_term_cascade", lambda: self._long_term_cascade(agent, report)),
        ]
        for name, step in steps:
            if should_stop():
                report.stopped_before = name
                break
            try:
                step()
            except Abandoned:
                report.stopped_before = name
                break
            except Exception as exc:
                log.warning("memory step %s failed: %s", name, exc, exc_info=True)
                report.errors[name] = str(exc) or type(exc).__name__
        return report

    def _embed_exchange(self, user: Message, assistant: Message) -> None:
        """Give a device's or the proxy's turn its vectors, so message search finds it by
        meaning; here, after the reply, never on its path. The memory API embeds its
        messages as it stores them."""
        if user.device_id == API_SOURCE:
            return
        both = [user] if user.id == assistant.id else [user, assistant]
        turn = [m for m in both if m.content.strip()]
        vectors = self.embedder.embed_batch([m.content for m in turn])
        self.store.add_message_vectors(list(zip(turn, vectors, strict=True)))

    def _extract_facts(
        self,
        agent: str,
        pair: tuple[Message, Message],
        report: ExchangeReport,
        should_stop: AbandonCheck,
        fact_items: list[dict[str, Any]] | None,
    ) -> None:
        user, assistant = pair
        simple = self.chat.prefers_simple_json
        if fact_items is None:  # unreadable output raises: the work queue retries it
            limit = self.config.max_facts_per_exchange
            fact_items = ask_alone(
                self.chat, pair, max_facts=limit, should_stop=should_stop, language=self.language
            )
        said_at = local_time(user.created_at, self.zone)
        facts = validate_facts(
            fact_items,
            user_text=user.content,
            source_message_ids=(user.id, assistant.id),
            max_facts=self.config.max_facts_per_exchange,
            language=self.language,
            said_at=said_at,
            trust_model=not simple,
        )
        if simple:
            openers = sentence_openers(user.content)
            known = known_names(self.store.fact_texts_containing(agent, openers))
            disclosed = self_disclosures(user.content, (user.id, assistant.id), known, said_at)
            facts = merge_facts(
                facts,
                [f for f in disclosed if text_problem(f.content, self.language) is None],
                self.config.max_facts_per_exchange,
            )
        facts = [f for f in facts if f.confidence >= self.config.min_fact_confidence]
        facts = attributed(facts, user, bool(self.store.people(agent)))
        if not facts:
            return
        origin = origin_of(user.device_id)
        facts = [dataclasses.replace(fact, origin=origin) for fact in facts]
        vectors = self.embedder.embed_batch([fact.content for fact in facts])
        for fact, vector in zip(facts, vectors, strict=True):
            self._remember(agent, fact, vector, report)

    def _remember(self, agent: str, fact: NewFact, vector: Vector, report: ExchangeReport) -> None:
        """Store a fact; a near-duplicate current fact becomes its history (one transaction,
        so jobs running at once never store the same fact twice)."""
        try:
            added = self.store.add_fact_superseding_duplicate(
                agent, fact, vector, duplicate_distance=self.config.duplicate_distance_threshold
            )
        except SourcesForgotten:
            log.info("a fact was not stored: its exchange was forgotten while it was learned")
            return
        report.facts_added.append(added.fact)
        report.facts_superseded.extend(added.superseded)

    def _short_term_cascade(self, agent: str, report: ExchangeReport) -> None:
        if self.store.count_unsummarized(agent) < self.config.short_term_threshold:
            return
        pending = self.store.unsummarized_messages(agent)
        to_summarize = oldest_that_fit(
            pending[: len(pending) - self.config.short_term_keep],
            lambda m: (
                estimate_tokens(m.content[: prompts.MAX_TRANSCRIPT_MESSAGE_CHARS])
                + ITEM_OVERHEAD_TOKENS
            ),
            prompt_budget_tokens(self.context_tokens, SUMMARY_MAX_TOKENS),
        )
        if not to_summarize:
            return
        summary = self._checked(
            prompts.summarize_conversation_messages(learnable(to_summarize)),
            SUMMARY_MAX_TOKENS,
            sources=user_words(to_summarize),
            max_chars=MAX_SUMMARY_CHARS,
            fallback=lambda: extractive_summary(to_summarize),
        )
        self.store.add_summary(
            agent,
            summary.content,
            to_summarize,
            vector=self._embedding(summary.content),
            made_by=summary.made_by,
            dropped_sentences=summary.dropped_sentences,
        )
        report.summarized = True

    def _embedding(self, text: str) -> Vector | None:
        """`text`'s vector; None when the embedder fails (the episode is then found by its
        words and dates only)."""
        try:
            return self.embedder.embed(text)
        except Exception:
            log.warning("embedding an episode failed; it is stored without a vector", exc_info=True)
            return None

    def _long_term_cascade(self, agent: str, report: ExchangeReport) -> None:
        if self.store.base_memory_is_stale(agent):
            self._rewrite_base_memory(agent, report)
            return
        if self.store.count_unincorporated(agent) < self.config.long_term_threshold:
            return
        pending = self.store.unincorporated_summaries(agent)
        base = self.store.base_memory(agent)
        to_distill = self._distill(
            agent, base, pending[: len(pending) - self.config.long_term_keep]
        )
        report.distilled = bool(to_distill)

    def _rewrite_base_memory(self, agent: str, report: ExchangeReport) -> None:
        """Something the base memory came from was forgotten: write it again, from nothing,
        out of the summaries and facts that are left."""
        summaries = self.store.summaries(agent)
        if not summaries and not self.store.recent_facts(agent, 1):
            self.store.distill_base_memory(agent, "", [])
        else:
            self._distill(agent, "", summaries, rewrite=True)
        report.distilled = True

    def _distill(
        self, agent: str, base: str, summaries: list[Summary], *, rewrite: bool = False
    ) -> list[Summary]:
        """Distill the oldest `summaries` that fit into the base memory; those absorbed."""
        facts = self.store.recent_facts(agent, DISTILL_FACTS)
        fixed = estimate_tokens(base) + sum(
            estimate_tokens(f.content) + ITEM_OVERHEAD_TOKENS for f in facts
        )
        to_distill = oldest_that_fit(
            summaries,
            lambda summary: estimate_tokens(summary.content) + ITEM_OVERHEAD_TOKENS,
            prompt_budget_tokens(self.context_tokens, DISTILL_MAX_TOKENS) - fixed,
        )
        if not to_distill and not rewrite:
            return []
        document = self._checked(
            prompts.distill_base_memory_messages(base, to_distill, facts),
            DISTILL_MAX_TOKENS,
            sources=[base, *(s.content for s in to_distill), *(f.content for f in facts)],
            max_chars=MAX_BASE_MEMORY_CHARS,
            fallback=lambda: extractive_base_memory(base, to_distill, facts),
        )
        self.store.distill_base_memory(
            agent,
            document.content,
            [s for s in to_distill if not s.incorporated],
            made_by=document.made_by,
            dropped_sentences=document.dropped_sentences,
        )
        return to_distill

    def _checked(
        self,
        messages: list[prompts.ChatMessage],
        max_tokens: int,
        *,
        sources: Sequence[str],
        max_chars: int,
        fallback: Callable[[], str],
    ) -> Derived:
        """The model's text when it passes `checked_output` (its sentences that `sources` do
        not support dropped and counted); else a second answer at temperature 0 with a
        stricter prompt; else `fallback()` (built without the model, `made_by` extractive)."""
        rules = (messages, 0.3), (with_rule(messages, self._stricter_rule()), 0.0)
        for attempt, (asked, temperature) in enumerate(rules):
            text = self._ask(asked, max_tokens, temperature=temperature)
            derived, problem = checked_output(
                text, sources, language=self.language, max_chars=max_chars
            )
            if derived is not None:
                if derived.dropped_sentences:
                    log.info(
                        "cascade output: %d sentences its sources do not support were dropped",
                        derived.dropped_sentences,
                    )
                return derived
            log.info("cascade output refused (%s)%s", problem, "" if attempt else "; asking again")
            log.debug("refused cascade output: %r", text)
        log.warning("cascade output refused twice; stored an extractive one")
        return Derived(fallback(), MADE_BY_EXTRACTIVE)

    def _stricter_rule(self) -> str:
        rule = "Use the names and facts of the text. Short plain sentences; never repeat."
        return f"{language_rule(self.language)} {rule}".strip()

    def _ask(self, messages: list[prompts.ChatMessage], max_tokens: int, temperature: float) -> str:
        return self.chat.complete(
            messages, max_tokens=max_tokens, temperature=temperature, background=True
        ).strip()
