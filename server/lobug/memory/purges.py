"""A purge reaches every copy, and finishes (issue 42).

A purge of facts (every version), of messages (a span, "forget that") or of everything about a
person ("forget everything about me") is one durable job:

1. *Begin*: find what it erases, by id: the facts (for messages: those learned only from them;
   for a person: their private facts and those learned only from what they said), the messages
   (the facts' sources, the person's, and every message of the agent that *holds* a purged
   fact: the assistant's replies that quoted it, the person saying it again), and record the
   job in the store (`PurgeStore.begin_purge`: ids, never text) before anything is erased.
2. *Messages*: forgotten as every forget is (`forget_messages`: keyword index, vectors, queue,
   the summaries covering them), but the facts learned only from them stay for step 3.
3. *Derived texts and facts*, one transaction: each text made or kept from others that holds a
   purged fact (the base memory and every stored version of it, dreams, the audit log's texts)
   is rewritten without the sentences that hold it; episodes (summaries) and topics holding
   it are dropped (the cascade summarizes their messages again, the dream rebuilds topics);
   then the facts (and those learned only from the messages) go: text, vectors, the audit's
   copies of it.
4. *Finish*: the job is marked done with its counts, the audit log records that a purge
   happened, by whom and how many rows (never what), and the engine leaves no byte of the text
   in its files. The devices' working memories are refilled from the log.

Every step can run again: a job a crash (kill -9 at any point) left unfinished is run again at
start-up (`MemoryWork.resume`) from step 2; a step already done finds nothing left to do. The
facts' text, which tells what holds the secret, goes last (in step 3's transaction, which
reads the derived texts it rewrites), so a crash never loses it while a copy remains, and a
derived text the cascade writes from the facts meanwhile is found too.

A text *holds* a fact when it has every word that carries the fact's meaning (its *key*: the
content words, `text.content_stems`, but "user" and, when two others remain, the
household's names: "Your locker code is 4417" holds "Jordan's locker code is 4417"), or any
of its *marks*: a word of it with a digit, at least three characters long, not a year ("4417",
"plum42"). Derived texts are rewritten rather than dropped where they are the memory's own
document (the base memory and its history, a dream's diary): a model rewrite could fail or
bring the text back, and the rest of the document is still true; the cascade rewrites a base
memory marked stale later from what is left."""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from lobug.language.facts import ROLE_WORDS
from lobug.language.text import content_stems, sentences_of
from lobug.store.household import HOUSEHOLD
from lobug.store.models import Fact, Forgotten
from lobug.store.protocol import Store
from lobug.store.purge_protocol import (
    PURGE_FACTS,
    PURGE_MESSAGES,
    PURGE_PERSON,
    DerivedText,
    PurgeJob,
)

log = logging.getLogger(__name__)

MIN_KEY_WORDS = 2
# Messages a keyword search brings back per purged fact, among which those holding it are kept.
QUOTE_CANDIDATES = 500
_YEAR = re.compile(r"(19|20)\d\d")
# Derived texts that are JSON lists or objects: emptied whole when they hold a purged fact.
JSON_FIELDS = {"changes": "[]", "open_questions": "[]", "next_actions": "[]", "detail": ""}


@dataclass(frozen=True)
class Secret:
    """What tells that a text holds a purged fact (see the module)."""

    key: frozenset[str]
    marks: frozenset[str]

    def held_by(self, words: set[str]) -> bool:
        return bool(self.marks & words) or (len(self.key) >= MIN_KEY_WORDS and self.key <= words)


def secret_of(text: str, names: Iterable[str]) -> Secret:
    """The key and marks of a fact's text; `names`: the household's, lower case."""
    words = content_stems(text) - ROLE_WORDS
    unnamed = words - set(names)
    key = unnamed if len(unnamed) >= MIN_KEY_WORDS else words
    marks = {
        w for w in words if len(w) >= 3 and any(c.isdigit() for c in w) and not _YEAR.fullmatch(w)
    }
    return Secret(frozenset(key), frozenset(marks))


def holds(text: str, secrets: Sequence[Secret]) -> bool:
    words = content_stems(text)
    return any(secret.held_by(words) for secret in secrets)


def without(text: str, secrets: Sequence[Secret]) -> str:
    """`text` without its sentences (and lines) that hold any of `secrets`."""
    kept_lines = []
    for line in text.splitlines():
        sentences = [s for s in map(str.strip, sentences_of(line)) if s]
        kept = [s for s in sentences if not holds(s, secrets)]
        if kept or not sentences:
            kept_lines.append(" ".join(kept))
    return "\n".join(kept_lines).strip()


def rewritten(derived: DerivedText, secrets: Sequence[Secret]) -> str | None:
    """The new text of a derived text holding a purged fact; None when it holds none."""
    if not holds(derived.text, secrets):
        return None
    if derived.field in JSON_FIELDS:
        return JSON_FIELDS[derived.field]
    return without(derived.text, secrets)


@dataclass(frozen=True)
class PurgeDone:
    """A finished purge: the job (with its counts) and what its forgetting of messages did."""

    job: PurgeJob
    forgotten: Forgotten


class Purges:
    """Begins and runs purge jobs; one at a time in this process (`run` skips a job another
    thread of it is running, or one that is finished)."""

    def __init__(self, store: Store, on_forget: Callable[[str], None]) -> None:
        self.store = store
        self.on_forget = on_forget
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ begin

    def begin_facts(self, agent: str, fact_id: int, *, actor: str) -> PurgeJob:
        """Purge the fact, every version of it, and every message holding it."""
        versions = self.store.fact_versions(agent, fact_id)
        sources = {i for fact in versions for i in fact.source_message_ids}
        return self._begin(agent, PURGE_FACTS, [fact_id], versions, sources, actor)

    def begin_messages(self, agent: str, ids: Sequence[int], *, actor: str) -> PurgeJob:
        """Purge the messages, the facts learned only from them and every message holding
        one of those facts."""
        facts = self.store.facts_learned_only_from(agent, ids)
        found = list(self.store.facts_by_ids(facts).values())
        return self._begin(agent, PURGE_MESSAGES, ids, found, set(ids), actor)

    def begin_person(self, agent: str, person_id: int, *, actor: str) -> PurgeJob:
        """Purge everything about the person (see `PurgeStore.person_purge_ids`)."""
        facts, said = self.store.person_purge_ids(agent, person_id)
        found = list(self.store.facts_by_ids(facts).values())
        return self._begin(agent, PURGE_PERSON, [person_id], found, set(said), actor)

    def _begin(
        self,
        agent: str,
        kind: str,
        targets: Sequence[int],
        facts: Sequence[Fact],
        messages: set[int],
        actor: str,
    ) -> PurgeJob:
        secrets = self._secrets(agent, facts)
        quoting = self._messages_holding(agent, secrets)
        ids = [fact.id for fact in facts]
        return self.store.begin_purge(
            agent, kind, targets, ids, sorted(messages | quoting), actor=actor
        )

    def _secrets(self, agent: str, facts: Sequence[Fact]) -> list[Secret]:
        names = {word for person in self.store.people(agent) for word in content_stems(person.name)}
        return [secret_of(fact.content, names) for fact in facts if fact.content]

    def _messages_holding(self, agent: str, secrets: Sequence[Secret]) -> set[int]:
        """The agent's messages holding any of `secrets`, among those a keyword search finds
        for each (by its marks where it has some: they are rare words)."""
        found: set[int] = set()
        words: dict[int, set[str]] = {}  # each candidate's, worked out once
        for secret in secrets:
            query = " ".join(sorted(secret.marks or secret.key))
            for message, _ in self.store.keyword_messages(agent, query, QUOTE_CANDIDATES):
                if message.id not in words:
                    words[message.id] = content_stems(message.content)
                if secret.held_by(words[message.id]):
                    found.add(message.id)
        return found

    # ------------------------------------------------------------------ run

    def run(self, job: PurgeJob) -> PurgeDone | None:
        """Carry the job out to its end (steps 2 to 4 of the module); None when it was
        finished already (by another thread, or a run before a crash)."""
        with self._lock:
            job = self.store.purge_job(job.id)
            if job.finished_at is not None:
                return None
            person = job.target_ids[0] if job.kind == PURGE_PERSON else None
            said = (
                self.store.forget_messages(
                    job.agent, job.message_ids, actor=job.actor, purge_learned=False
                )
                if job.message_ids
                else Forgotten()
            )
            facts = self._facts_to_purge(job, person)
            secrets = self._secrets(job.agent, facts)
            touched = self.store.purge_facts_and_derived(
                job.agent,
                [fact.id for fact in facts],
                lambda derived: rewritten(derived, secrets),
                person_id=person,
            )
            forgotten = Forgotten(
                said.messages,
                tuple(touched["facts"]),
                tuple(sorted(set(touched["summaries"]) | set(said.summaries))),
            )
            counts = {kind: len(ids) for kind, ids in touched.items()} | forgotten.counts()
            done = self.store.finish_purge(job.id, counts)
        log.info("purge %d (%s) done: %s", job.id, job.kind, json.dumps(counts))
        self.on_forget(job.agent)
        return PurgeDone(done, forgotten)

    def _facts_to_purge(self, job: PurgeJob, person: int | None) -> list[Fact]:
        """The job's facts and those learned only from its messages since it began (but the
        household facts a forgotten person stated: they stay the household's)."""
        learned = self.store.facts_learned_only_from(job.agent, job.message_ids)
        found = self.store.facts_by_ids(sorted(set(job.fact_ids) | set(learned)))
        return [
            fact
            for fact in found.values()
            if person is None
            or fact.id in job.fact_ids
            or not (fact.scope == HOUSEHOLD and fact.owner_person_id == person)
        ]

    def resume(
        self, should_stop: Callable[[], bool] = lambda: False, begun_before: float | None = None
    ) -> int:
        """Run the unfinished jobs (begun before `begun_before`, when given); return how many
        were finished now."""
        done = 0
        for job in self.store.unfinished_purges():
            if should_stop():
                break
            if begun_before is not None and job.created_at >= begun_before:
                continue
            if self.run(job) is not None:
                done += 1
        return done
