"""The dream: a consolidation of one agent's memory, nightly (`LOBUG_DREAM_AT`) or on demand.

1. **Near-duplicates merged.** Two current facts at cosine similarity `DUPLICATE_SIMILARITY`
   or more whose content words are one within the other ("The user works at NASA" and "The
   user works at NASA in Houston"), or at `SAME_SIMILARITY` or more whatever their words: one
   is kept (pinned first, then the one with more words, the higher user score, the newer),
   the other retired as its history. Such a pair where one says the opposite ("has a dog" /
   "does not have a dog") is a contradiction: the newer wins.
2. **Contradictions settled.** Two current facts with the same subject and relation but
   another object: the newer wins, the older becomes its history.
3. **Low-value facts retired** beyond `LOBUG_MAX_FACTS` current facts: lowest user score,
   then confidence, then oldest first; pinned facts and facts scored `HIGH_SCORE` or more
   never.
4. **Base memory rewritten** by the chat model (background priority) from the facts and
   episodes, when anything changed since the last dream; checked as the cascade's is
   (`quality.checked_output`): the sentences the facts, episodes and current document do not
   support are left out and counted (in the diary and with the new version).
5. **Topics rebuilt** (`memory/topics.py`) from the facts that stay and the episodes, when
   the dreamer has a topic builder (the services give it one).

Nothing is deleted: a retired fact is invalidated (and leaves the vector index), each change
is in the audit log under actor `dream`, and the dream's diary (Markdown, naming facts by id
so a purge leaves no text in it, and no text of the model's, so nothing in it is invented)
is stored with it; `undo` restores the facts and the base
memory. A dry run plans and writes nothing. Blocking: call from worker threads.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from datetime import time as dt_time

import numpy as np

from lobug.backends.base import ChatBackend, Vector
from lobug.language.negation import negated
from lobug.language.text import FUNCTION_WORDS, content_stems, words_of
from lobug.language.times import TIME_AND_AMOUNT_WORDS
from lobug.memory import prompts
from lobug.memory.manager import DISTILL_MAX_TOKENS
from lobug.memory.people import one_owner, owner_of
from lobug.memory.quality import MAX_BASE_MEMORY_CHARS, checked_output
from lobug.memory.topics import TopicBuilder
from lobug.store.models import Derived, Dream, DreamChange, Fact, Summary, Topic
from lobug.store.protocol import DreamingStore

log = logging.getLogger(__name__)

DUPLICATE_SIMILARITY = 0.8
SAME_SIMILARITY = 0.92
HIGH_SCORE = 7
# The base memory is rewritten from this many of the newest episodes and facts.
REWRITE_EPISODES = 20
REWRITE_FACTS = 40
BLOCK_ROWS = 512
NAME_OR_NUMBER = re.compile(r"\b(?:[A-Z][\w'’-]*|\w*\d[\w.,]*)")

Stop = Callable[[], bool]


@dataclass(frozen=True)
class DreamPlan:
    """What a dream would do: the facts it retires, whether it rewrites the base memory, and
    the diary that says so."""

    agent: str
    changes: tuple[DreamChange, ...]
    rewrite_base_memory: bool
    facts_seen: int
    episodes_seen: int
    diary: str = ""


@dataclass(frozen=True)
class DreamResult:
    """A dream run: its plan, and the stored dream (None for a dry run or a skipped one)."""

    plan: DreamPlan
    dream: Dream | None = None
    skipped: bool = False
    timings_ms: dict[str, float] = field(default_factory=dict)
    topics: tuple[Topic, ...] = ()


def similar_pairs(vectors: Vector, threshold: float) -> Iterator[tuple[int, int, float]]:
    """(i, j, cosine) for every pair of rows i < j at `threshold` or more, by blocks of rows
    (never the whole square matrix at once)."""
    norms = np.linalg.norm(vectors, axis=1)
    unit = vectors / np.where(norms == 0, 1.0, norms)[:, None]
    for start in range(0, len(unit), BLOCK_ROWS):
        block = unit[start : start + BLOCK_ROWS] @ unit.T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            if c > start + r:
                yield start + r, c, float(block[r, c])


def keeper(a: Fact, b: Fact) -> tuple[Fact, Fact]:
    """(kept, retired) of two duplicates: pinned, more words, higher score, newer."""

    def worth(f: Fact) -> tuple[bool, int, int, int]:
        return (f.pinned, len(content_stems(f.content)), f.user_score or 0, f.id)

    return (a, b) if worth(a) >= worth(b) else (b, a)


def duplicate_changes(facts: Sequence[Fact], vectors: Vector) -> list[DreamChange]:
    """Near-duplicates merged and facts settled by a newer one saying the opposite (see
    `pair_change`), the closest pairs first; a fact is retired once."""
    pairs = sorted(similar_pairs(vectors, DUPLICATE_SIMILARITY), key=lambda p: -p[2])
    retired: set[int] = set()
    changes = []
    for i, j, cosine in pairs:
        a, b = facts[i], facts[j]
        if a.id in retired or b.id in retired:
            continue
        change = pair_change(a, b, cosine)
        if change is not None:
            retired.add(change.fact_id)
            changes.append(change)
    return changes


def pair_change(a: Fact, b: Fact, cosine: float) -> DreamChange | None:
    """What a dream does with two similar facts: nothing; a merge of near-duplicates (the
    better kept, see `keeper`); or, for a fact and its negation ("has a dog" / "does not have
    a dog"), the older settled by the newer, which the wordier would otherwise beat whatever
    its age. A pinned fact is never retired, nor one person's fact for another's
    (`people.one_owner`)."""
    if not one_owner(a, b) or not about_one_thing(a, b, cosine):
        return None
    if negated(a.content) == negated(b.content):
        kept, gone = keeper(a, b)
        change = DreamChange("merge", gone.id, kept.id, f"cosine {cosine:.2f}")
    else:
        kept, gone = (a, b) if a.id > b.id else (b, a)
        reason = f"newer fact says the opposite, cosine {cosine:.2f}"
        change = DreamChange("settle", gone.id, kept.id, reason)
    return None if gone.pinned else change


def about_one_thing(a: Fact, b: Fact, cosine: float) -> bool:
    """Whether two similar facts are about one thing: at `SAME_SIMILARITY`, or with the
    content words of one within the other's. Each naming someone or something the other does
    not ("met Anna Weber" and "met Anna Kruger", "on Monday" and "on Friday", "1234" and
    "4321", "in the morning" and "in the evening") are about two things however close their
    vectors (a sentence embedder scores such pairs 0.90-0.96)."""
    names_a, names_b = distinguishing_words(a.content), distinguishing_words(b.content)
    if names_a - names_b and names_b - names_a:
        return False
    if cosine >= SAME_SIMILARITY:
        return True
    words_a, words_b = content_stems(a.content), content_stems(b.content)
    return bool(words_a and words_b) and (words_a <= words_b or words_b <= words_a)


def distinguishing_words(text: str) -> set[str]:
    """The capitalised words of `text` that are no function word ("The", "My"), the words
    with a digit, and the time and amount words (`language/times.py`): what tells one person,
    place, day, time or number from another."""
    found = {word for word in words_of(text) if word in TIME_AND_AMOUNT_WORDS}
    for word in NAME_OR_NUMBER.findall(text):
        word = re.sub(r"['’]s?$", "", word).lower()
        if word and word not in FUNCTION_WORDS:
            found.add(word)
    return found


def contradiction_changes(facts: Sequence[Fact], retired: set[int]) -> list[DreamChange]:
    """The older of two current facts of one owner with one subject and relation but another
    object."""
    newest: dict[tuple[str, str, tuple[int | None, str]], Fact] = {}
    changes = []
    for fact in sorted(facts, key=lambda f: f.id, reverse=True):
        if fact.id in retired or not (fact.subject and fact.relation and fact.object):
            continue
        key = (fact.subject.strip().lower(), fact.relation.strip().lower(), owner_of(fact))
        winner = newest.setdefault(key, fact)
        if winner is fact or normalized(winner.object) == normalized(fact.object):
            continue
        if not fact.pinned:
            changes.append(DreamChange("settle", fact.id, winner.id, "newer fact, same relation"))
    return changes


def normalized(text: str | None) -> str:
    return (text or "").strip().lower()


def cap_changes(facts: Sequence[Fact], retired: set[int], max_facts: int) -> list[DreamChange]:
    """The least valuable facts beyond `max_facts` (pinned and high-score ones never)."""
    left = [f for f in facts if f.id not in retired]
    excess = len(left) - max_facts
    if excess <= 0:
        return []
    candidates = sorted(
        (f for f in left if not f.pinned and (f.user_score or 0) < HIGH_SCORE),
        key=lambda f: (f.user_score if f.user_score is not None else 5, f.confidence, f.id),
    )
    return [
        DreamChange("retire", f.id, None, f"over {max_facts} facts; confidence {f.confidence:.2f}")
        for f in candidates[:excess]
    ]


def plan_changes(facts: Sequence[Fact], vectors: Vector, max_facts: int) -> list[DreamChange]:
    changes = duplicate_changes(facts, vectors) if len(facts) > 1 else []
    changes += contradiction_changes(facts, {c.fact_id for c in changes})
    changes += cap_changes(facts, {c.fact_id for c in changes}, max_facts)
    return changes


SECTION_TITLES = {
    "merge": "Merged near-duplicates",
    "settle": "Settled contradictions (the newer fact wins)",
    "retire": "Retired low-value facts",
}


def diary_of(plan: DreamPlan, max_facts: int) -> str:
    """The dream's diary in Markdown: what changed and why, facts named by id."""
    lines = [
        f"# Dream of {plan.agent}",
        "",
        f"Looked at {plan.facts_seen} current facts and {plan.episodes_seen} episodes "
        f"(at most {max_facts} facts are kept).",
    ]
    for action, title in SECTION_TITLES.items():
        listed = [c for c in plan.changes if c.action == action]
        if listed:
            lines += ["", f"## {title} ({len(listed)})", ""]
            lines += [change_line(c) for c in listed]
    lines += ["", "## Base memory", ""]
    lines.append(
        "Rewritten from the facts and episodes."
        if plan.rewrite_base_memory
        else "Left as it was: nothing changed since the last dream."
    )
    if not plan.changes:
        lines += ["", "No fact changed."]
    return "\n".join(lines) + "\n"


def change_line(change: DreamChange) -> str:
    into = {"merge": " into", "settle": " by"}.get(change.action, "")
    kept = f"{into} fact #{change.kept_id}" if change.kept_id is not None else ""
    return f"- fact #{change.fact_id}{kept}: {change.reason}"


TOPICS_NOTE = "\n## Topics\n\nRebuilt from the facts that stay and the episodes.\n"


def base_memory_note(base: Derived | None) -> str:
    """What the diary adds about the rewritten base memory: left as it was, or how many of
    the model's sentences were left out for want of support."""
    if base is None:
        return (
            "\nThe model gave no new base memory that passed its checks: it was left as it was.\n"
        )
    if not base.dropped_sentences:
        return "\nEvery sentence of the new base memory is supported by the facts and episodes.\n"
    return (
        f"\n{base.dropped_sentences} sentences of the model's base memory that the facts and "
        "episodes do not support were left out.\n"
    )


class Dreamer:
    """Runs dreams for a store with a chat model (background priority; None: plans only, for
    dry runs where no model is loaded), and rebuilds topics with `topics` when given."""

    def __init__(
        self,
        store: DreamingStore,
        chat: ChatBackend | None,
        *,
        max_facts: int,
        topics: TopicBuilder | None = None,
        language: str | None = None,
    ) -> None:
        self.store = store
        self.chat = chat
        self.max_facts = max_facts
        self.topics = topics
        # The conversation's language (the base memory is checked in it): the topics'.
        self.language = language or (topics.language if topics is not None else "en")

    def plan(self, agent: str, *, rewrite: bool) -> DreamPlan:
        facts, vectors = self.store.current_fact_vectors(agent)
        changes = plan_changes(facts, vectors, self.max_facts)
        episodes = self.store.count_summaries(agent)
        plan = DreamPlan(
            agent, tuple(changes), rewrite and bool(facts or episodes), len(facts), episodes
        )
        return dataclasses.replace(plan, diary=diary_of(plan, self.max_facts))

    def changed_since_last_dream(self, agent: str) -> bool:
        last = self.store.dreams(agent, 1)
        return not last or last[0].watermark != self.store.memory_watermark(agent)

    def dream(
        self, agent: str, *, dry_run: bool = False, only_if_changed: bool = False
    ) -> DreamResult:
        """Plan and (unless `dry_run`) apply one dream of `agent`; with `only_if_changed`
        nothing happens when the memory is as the last dream left it."""
        started = time.time()
        changed = self.changed_since_last_dream(agent)
        if only_if_changed and not changed:
            return DreamResult(DreamPlan(agent, (), False, 0, 0), skipped=True)
        plan = self.plan(agent, rewrite=changed)
        if dry_run:
            return DreamResult(plan)
        base = self.rewritten_base_memory(agent, plan) if plan.rewrite_base_memory else None
        diary = plan.diary
        if plan.rewrite_base_memory:
            diary += base_memory_note(base)
        if self.topics is not None:
            diary += TOPICS_NOTE
        stored = self.store.apply_dream(
            agent,
            plan.changes,
            None if base is None else base.content,
            diary,
            started_at=started,
            made_by=None if base is None else base.made_by,
            dropped_sentences=0 if base is None else base.dropped_sentences,
        )
        log.info("dream %d of %s: %d facts retired", stored.id, agent, len(stored.changes))
        topics = tuple(self.topics.rebuild(agent)) if self.topics is not None else ()
        timings = {"dream": (time.time() - started) * 1000}
        return DreamResult(plan, stored, timings_ms=timings, topics=topics)

    def rewritten_base_memory(self, agent: str, plan: DreamPlan) -> Derived | None:
        """The base memory written again from the facts that stay and the newest episodes,
        less the sentences they (and the current document) do not support; None (left as it
        is) when the model fails, returns nothing, or its text fails its checks."""
        retired = {c.fact_id for c in plan.changes}
        facts = self.store.recent_facts(agent, REWRITE_FACTS + len(retired))
        kept = [f for f in facts if f.id not in retired][:REWRITE_FACTS]
        episodes: list[Summary] = self.store.summaries(agent)[-REWRITE_EPISODES:]
        current = self.store.base_memory(agent)
        messages = prompts.distill_base_memory_messages(current, episodes, kept)
        if self.chat is None:
            return None
        try:
            text = self.chat.complete(
                messages, max_tokens=DISTILL_MAX_TOKENS, temperature=0.3, background=True
            ).strip()
        except Exception:
            log.warning(
                "dream: rewriting the base memory failed; it is left as it was", exc_info=True
            )
            return None
        sources = [current, *(e.content for e in episodes), *(f.content for f in kept)]
        derived, problem = checked_output(
            text, sources, language=self.language, max_chars=MAX_BASE_MEMORY_CHARS
        )
        if derived is None:
            log.warning("dream: the model's base memory was refused (%s); left as it was", problem)
        elif derived.dropped_sentences:
            log.info(
                "dream: %d sentences of the base memory its sources do not support were dropped",
                derived.dropped_sentences,
            )
        return derived

    def undo(self, agent: str, dream_id: int, *, actor: str) -> Dream:
        return self.store.undo_dream(agent, dream_id, actor=actor)

    def nightly(self, agents: Sequence[str], now: datetime, at: dt_time, should_stop: Stop) -> int:
        """Dream for every agent whose memory changed since its last dream, once `now` has
        passed today's `at` (in `now`'s zone) and the agent has not dreamed since; return how
        many dreamed. Called by each maintenance pass."""
        due = now.replace(hour=at.hour, minute=at.minute, second=0, microsecond=0)
        if now < due:
            return 0
        dreamed = 0
        for agent in agents:
            if should_stop():
                break
            last = self.store.dreams(agent, 1)
            if last and last[0].started_at >= due.timestamp():
                continue
            dreamed += self.dream(agent, only_if_changed=True).dream is not None
        return dreamed
