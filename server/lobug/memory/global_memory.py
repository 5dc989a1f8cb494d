"""The global memory (seed 001): the agent's pinned facts and its most active topics, read
from the database when asked (nothing of it is stored, so it is always as the facts and
topics are).

A topic's activity is how many of its members were learned (facts) or ended (episodes) in the
last `ACTIVE_DAYS` days; the `ACTIVE_TOPICS` most active are in the global memory, most
active first, then (among equals, e.g. all quiet) the one with the newest member, then the
larger. In a prompt (`memory/budget.py`) the active topics are the lowest-priority section:
pinned facts are there already, at the top.

Blocking (store): call from worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass

from lobug.store.models import Fact, Topic
from lobug.store.protocol import Store

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


def activity(topic: Topic, since: float) -> int:
    """How many of the topic's members were learned or ended at `since` or later."""
    return sum(1 for member in topic.members if member.at >= since)


def most_active(topics: list[Topic], now: float, limit: int = ACTIVE_TOPICS) -> list[ActiveTopic]:
    since = now - ACTIVE_DAYS * DAY_S
    ranked = sorted(
        (ActiveTopic(topic, activity(topic, since)) for topic in topics),
        key=lambda a: (
            -a.activity,
            -max((m.at for m in a.topic.members), default=0.0),
            -len(a.topic.members),
            a.topic.position,
        ),
    )
    return ranked[:limit]


def global_memory(store: Store, agent: str, now: float) -> GlobalMemory:
    """The agent's pinned facts and most active topics at `now` (Unix seconds)."""
    return GlobalMemory(
        agent,
        tuple(store.pinned_facts(agent)),
        tuple(most_active(store.topics(agent), now)),
    )


def topic_line(topic: Topic) -> str:
    """A topic as one line of a prompt: its name and summary."""
    return f"{topic.name}: {topic.summary}"


def active_topic_lines(store: Store, agent: str, now: float) -> tuple[str, ...]:
    """The most active topics, one line each, for the context (`memory/budget.py`)."""
    return tuple(topic_line(a.topic) for a in most_active(store.topics(agent), now))
