"""The global memory (seed 001): the agent's pinned facts and its most active topics, read
from the database when asked (nothing of it is stored, so it is always as the facts and
topics are).

A topic's activity is how many of its members were learned (facts) or ended (episodes) in the
last `ACTIVE_DAYS` days; the `ACTIVE_TOPICS` most active are in the global memory, most
active first, then (among equals, e.g. all quiet) the one with the newest member, then the
larger (ranked by the store, `topic_activity`, without reading the members). In a prompt
(`memory/assembly.py`) the active topics are the lowest-priority section: pinned facts are
there already, at the top.

Blocking (store): call from worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass

from lobug.store.errors import TopicNotFound
from lobug.store.models import Fact, Topic, TopicActivity
from lobug.store.protocol import TopicReads

ACTIVE_DAYS = 14
ACTIVE_TOPICS = 5
DAY_S = 86400.0


@dataclass(frozen=True)
class ActiveTopic:
    topic: Topic
    activity: int


@dataclass(frozen=True)
class GlobalMemory:
    agent: str
    pinned: tuple[Fact, ...]
    active_topics: tuple[ActiveTopic, ...]


def most_active(store: TopicReads, agent: str, now: float) -> list[TopicActivity]:
    """The agent's `ACTIVE_TOPICS` most active topics at `now` (Unix seconds)."""
    return store.topic_activity(agent, now - ACTIVE_DAYS * DAY_S, ACTIVE_TOPICS)


def global_memory(store: TopicReads, agent: str, now: float) -> GlobalMemory:
    """The agent's pinned facts and most active topics at `now` (Unix seconds)."""
    active = []
    for found in most_active(store, agent, now):
        try:
            active.append(ActiveTopic(store.topic(agent, found.topic_id), found.activity))
        except TopicNotFound:
            continue  # rebuilt in between: the next read has the new ones
    return GlobalMemory(agent, tuple(store.pinned_facts(agent)), tuple(active))


def active_topic_lines(store: TopicReads, agent: str, now: float) -> tuple[str, ...]:
    """The most active topics, one line each (`name: summary`), for the context."""
    return tuple(f"{found.name}: {found.summary}" for found in most_active(store, agent, now))
