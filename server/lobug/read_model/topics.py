"""Topics and the global memory (`memory/topics.py`, `memory/global_memory.py`) as the
surfaces show them."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lobug.memory.global_memory import ACTIVE_DAYS, global_memory
from lobug.read_model.common import iso, shown
from lobug.read_model.facts import FactOut, fact_fields
from lobug.store.models import Topic
from lobug.store.protocol import TopicReads


class TopicOut(BaseModel):
    """A topic: a cluster of the agent's facts and episodes, named and described by the chat
    model (`written_by` `model`) or, where its text failed the checks, without it
    (`extractive`). Ids are new at every rebuild."""

    id: str
    position: int = Field(description="its rank in the build, largest topic first")
    name: str
    summary: str
    open_questions: list[str]
    next_actions: list[str]
    fact_ids: list[str]
    episode_ids: list[str]
    written_by: str
    dropped_sentences: int = Field(
        default=0, description="sentences of the model's summary its notes did not support"
    )
    built_at: str
    last_active_at: str | None = Field(description="when its newest member was learned or ended")


class ActiveTopicOut(TopicOut):
    activity: int = Field(
        description=f"its members learned or ended in the last {ACTIVE_DAYS} days"
    )


class GlobalMemoryOut(BaseModel):
    """The agent's pinned facts and its most active topics, most active first."""

    agent: str
    pinned: list[FactOut]
    active_topics: list[ActiveTopicOut]


def topic_out(topic: Topic) -> TopicOut:
    newest = max((m.at for m in topic.members), default=None)
    return shown(
        TopicOut,
        topic,
        fact_ids=[str(i) for i in topic.member_ids("fact")],
        episode_ids=[str(i) for i in topic.member_ids("episode")],
        last_active_at=None if newest is None else iso(newest),
    )


def global_out(store: TopicReads, agent: str, now: float) -> GlobalMemoryOut:
    """Blocking: the agent's global memory at `now`."""
    found = global_memory(store, agent, now)
    return GlobalMemoryOut(
        agent=agent,
        pinned=[fact_fields(f) for f in found.pinned],
        active_topics=[
            ActiveTopicOut(**topic_out(a.topic).model_dump(), activity=a.activity)
            for a in found.active_topics
        ],
    )
