"""Topics: an agent's facts and episodes grouped by meaning, each with a name, a short
summary, open questions and next actions (seed 001's topic memory). Rebuilt as a whole from
the database, by the dream and on demand (`TopicBuilder.rebuild`); nothing reads them as a
source of truth, and forgetting a fact or episode drops the topics that hold it.

**Clustering** (deterministic): the current facts in id order, then the embedded episodes in
id order; each joins the topic whose centroid (the sum of its members' unit vectors) is
nearest by cosine when that is `TOPIC_SIMILARITY` or more (the first topic among equals),
else starts a new one. Groups of fewer than `MIN_MEMBERS` are no topic; the `MAX_TOPICS`
largest are kept, largest first (among equals, the one whose first member came first).

**Text**: the chat model (background priority, so a device's reply never waits) is asked
once per topic for JSON; each field is checked by `memory/quality.py`, the summary's
sentences each against the topic's notes (those the notes do not support are left out and
counted, `dropped_sentences`). A name that fails is replaced by the topic's most said words, a
summary by its first notes (`written_by` `extractive`: a field, never a note in the text);
questions and actions that fail are left out, and when the model gives no list of next
actions they are the topic's commitments. A topic with exactly the members of
one already stored keeps that one's text without asking again.

Blocking (model, store): call from worker threads.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lobug.backends.base import ChatBackend, Vector
from lobug.memory import prompts
from lobug.memory.quality import (
    MAX_TOPIC_SUMMARY_CHARS,
    checked_output,
    extractive_topic_summary,
    fallback_topic_name,
    topic_items,
    topic_name_problem,
)
from lobug.store.models import (
    MADE_BY_EXTRACTIVE,
    MADE_BY_MODEL,
    Topic,
    TopicDraft,
    TopicMember,
)
from lobug.store.protocol import TopicSource

log = logging.getLogger(__name__)

TOPIC_SIMILARITY = 0.55
MIN_MEMBERS = 2
MAX_TOPICS = 30
# The model sees at most this many of a topic's notes, and answers within this many tokens.
MODEL_NOTES = 12
TOPIC_MAX_TOKENS = 400
# Fact types whose facts are a topic's next actions when the model's are not there.
ACTION_TYPES = ("commitment",)
MODEL = MADE_BY_MODEL
EXTRACTIVE = MADE_BY_EXTRACTIVE


@dataclass(frozen=True)
class Note:
    """A fact or an episode as a topic holds it: which it is, its text and its fact type."""

    member: TopicMember
    text: str
    fact_type: str | None = None


def unit_rows(vectors: Vector) -> Vector:
    norms = np.linalg.norm(vectors, axis=1)
    return (vectors / np.where(norms == 0, 1.0, norms)[:, None]).astype(np.float32)


def clusters(vectors: Vector, threshold: float = TOPIC_SIMILARITY) -> list[list[int]]:
    """The rows of `vectors` grouped greedily by centroid (see the module), in row order."""
    unit = unit_rows(np.asarray(vectors, dtype=np.float32))
    sums = np.zeros_like(unit)
    centroids = np.zeros_like(unit)  # `sums` normalized, kept row by row as they change
    groups: list[list[int]] = []
    for row, vector in enumerate(unit):
        best = -1
        if groups:
            scores = centroids[: len(groups)] @ vector
            best = int(np.argmax(scores))
            if scores[best] < threshold:
                best = -1
        if best < 0:
            best = len(groups)
            groups.append([])
        groups[best].append(row)
        sums[best] += vector
        centroids[best] = sums[best] / max(float(np.linalg.norm(sums[best])), 1e-12)
    return groups


def notes_of(store: TopicSource, agent: str) -> tuple[list[Note], Vector]:
    """What topics are made of: current facts, then embedded episodes, with their vectors."""
    facts, fact_vectors = store.current_fact_vectors(agent)
    episodes, episode_vectors = store.episode_vectors(agent)
    notes = [Note(TopicMember("fact", f.id, f.created_at), f.content, f.fact_type) for f in facts]
    notes += [
        Note(TopicMember("episode", e.id, e.ended_at or e.created_at), e.content) for e in episodes
    ]
    parts = [v for v in (fact_vectors, episode_vectors) if len(v)]
    if not parts:
        return [], np.zeros((0, 0), dtype=np.float32)
    return notes, np.vstack(parts)


def grouped(notes: Sequence[Note], vectors: Vector) -> list[list[Note]]:
    """The topics' notes: clusters of `MIN_MEMBERS` or more, the `MAX_TOPICS` largest."""
    if not notes:
        return []
    found = [g for g in clusters(vectors) if len(g) >= MIN_MEMBERS]
    found.sort(key=lambda g: (-len(g), g[0]))
    return [[notes[i] for i in g] for g in found[:MAX_TOPICS]]


def members_key(members: Sequence[TopicMember]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((m.kind, m.id) for m in members))


def parsed_object(raw: str) -> dict[str, Any] | None:
    """The JSON object in a model's reply (code fences and chatter around it tolerated)."""
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        found = json.loads(raw[start : end + 1])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def described(notes: Sequence[Note], answer: dict[str, Any] | None, language: str) -> TopicDraft:
    """A topic's draft from the model's `answer` (None: it gave none), each field checked,
    the extractive fallback in place of a name or summary that fails."""
    texts = [note.text for note in notes]
    answer = answer or {}
    name = str(answer.get("name", "")).strip()
    summary = " ".join(str(answer.get("summary", "")).split())
    name_ok = topic_name_problem(name, texts, language=language) is None
    checked, _ = checked_output(
        summary, texts, language=language, max_chars=MAX_TOPIC_SUMMARY_CHARS
    )
    summary_ok = checked is not None
    actions = topic_items(strings(answer.get("next_actions")), language=language, question=False)
    if not isinstance(answer.get("next_actions"), list):
        actions = tuple(n.text for n in notes if n.fact_type in ACTION_TYPES)
    return TopicDraft(
        name=name if name_ok else fallback_topic_name(texts),
        summary=checked.content if checked is not None else extractive_topic_summary(texts),
        open_questions=topic_items(
            strings(answer.get("open_questions")), language=language, question=True
        ),
        next_actions=actions,
        members=tuple(note.member for note in notes),
        written_by=MODEL if name_ok and summary_ok else EXTRACTIVE,
        dropped_sentences=checked.dropped_sentences if checked is not None else 0,
    )


def kept_text(old: Topic, notes: Sequence[Note]) -> TopicDraft:
    return TopicDraft(
        old.name,
        old.summary,
        old.open_questions,
        old.next_actions,
        tuple(note.member for note in notes),
        old.written_by,
        old.dropped_sentences,
    )


class TopicBuilder:
    """Rebuilds an agent's topics with a chat model (None: the extractive text only)."""

    def __init__(
        self, store: TopicSource, chat: ChatBackend | None, *, language: str = "en"
    ) -> None:
        self.store = store
        self.chat = chat
        self.language = language

    def rebuild(self, agent: str) -> list[Topic]:
        """Group the agent's facts and episodes again and store the topics in place of the
        old ones; return them."""
        return self.store.replace_topics(agent, self.drafts(agent))

    def drafts(self, agent: str) -> list[TopicDraft]:
        notes, vectors = notes_of(self.store, agent)
        previous = {members_key(t.members): t for t in self.store.topics(agent)}
        drafts = []
        for group in grouped(notes, vectors):
            old = previous.get(members_key([note.member for note in group]))
            if old is not None:
                drafts.append(kept_text(old, group))
            else:
                draft = described(group, self.answer(group), self.language)
                if draft.dropped_sentences:
                    log.info(
                        "a topic summary: %d sentences its notes do not support were dropped",
                        draft.dropped_sentences,
                    )
                drafts.append(draft)
        return drafts

    def answer(self, notes: Sequence[Note]) -> dict[str, Any] | None:
        """The model's JSON for a topic, or None when there is no model or it failed."""
        if self.chat is None:
            return None
        texts = [note.text for note in notes[:MODEL_NOTES]]
        try:
            raw = self.chat.complete(
                prompts.topic_messages(texts),
                max_tokens=TOPIC_MAX_TOKENS,
                temperature=0.2,
                json_schema=prompts.TOPIC_SCHEMA,
                background=True,
            )
        except Exception:
            log.warning("topics: the model failed; described without it", exc_info=True)
            return None
        return parsed_object(raw)
